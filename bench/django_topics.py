"""What an agent asks the Django docs: two-word topics and full questions (for latency only)."""

TWO_WORDS = [
    "queryset annotate", "model fields", "form validation", "url routing", "template filters",
    "class views", "database migrations", "custom middleware", "signals receiver", "admin actions",
    "cache backend", "static files", "user authentication", "password hashing", "csrf protection",
    "test client", "transaction atomic", "file uploads", "email backend", "logging configuration",
]

QUESTIONS = [
    "How do I add a custom method to a model manager?",
    "How can I filter a queryset on a related model's field?",
    "How do I write a data migration that fills a new column?",
    "What is the difference between select_related and prefetch_related?",
    "How do I protect a view so only logged-in users can see it?",
    "How do I validate two form fields that depend on each other?",
    "How do I serve static files in production?",
    "How can I run raw SQL queries and map the rows to models?",
    "How do I send an email with an attachment?",
    "How do I create a custom template tag with arguments?",
    "How do I configure caching per view with a timeout?",
    "How do I use database transactions so a failure rolls everything back?",
    "How do I customise the list display in the admin site?",
    "How can I write tests that use the test client to post a form?",
    "How do I add a custom user model with an email login?",
    "How do I handle file uploads and save them to a model field?",
    "How do I define URL patterns with typed path converters?",
    "How do I connect a receiver to the post_save signal?",
    "How do I paginate a list of objects in a view?",
    "How do I set up logging so errors are emailed to admins?",
]
