"""Chunking rules, including those Neuledge Context's suite pins down."""

from context_cli.chunk.chunker import MAX_TOKENS, chunk_document, content_key, dedupe, split_text
from context_cli.document import Block, Document, estimate_tokens


def doc(blocks, title="Page", path="p.md"):
    return Document(path=path, title=title, blocks=[Block(*b) for b in blocks])


def test_splits_at_h2_and_keeps_deeper_headings_inside():
    d = doc([(0, "", "Intro text that is long enough to be kept as a section."),
             (2, "Install", "Run the installer and follow the prompts shown."),
             (3, "From source", "Clone the repository and build it with make."),
             (2, "Usage", "Call the main function with your configuration file.")])
    chunks = chunk_document(d)
    assert [c.section_title for c in chunks] == ["Introduction", "Install", "Usage"]
    assert "### From source" in chunks[1].content
    assert chunks[1].breadcrumb == "Page > Install"


def test_oversized_section_splits_at_subsections_with_breadcrumbs():
    big = "word " * 2000
    d = doc([(2, "API", "Overview of the API surface."), (3, "Client", big), (3, "Server", "short but real text here")])
    titles = [c.section_title for c in chunk_document(d)]
    assert "API > Client" in titles and "API > Server" in titles
    assert any(t.startswith("API > Client (part 2)") for t in titles)


def test_part_naming_first_plain_then_numbered():
    paras = "\n\n".join(f"Paragraph {i} " + "lorem ipsum " * 60 for i in range(20))
    chunks = chunk_document(doc([(2, "Long", paras)]))
    assert chunks[0].section_title == "Long"
    assert [c.section_title for c in chunks[1:]] == [f"Long (part {i})" for i in range(2, len(chunks) + 1)]
    assert all(c.tokens <= MAX_TOKENS for c in chunks)


def test_never_splits_inside_a_fence_and_closes_cut_fences():
    code = "```python\n" + "\n".join(f"x_{i} = compute({i})  # line" for i in range(1200)) + "\n```"
    pieces = split_text("Intro paragraph.\n\n" + code)
    for p in pieces:
        assert p.count("```") % 2 == 0, p[:80]
        assert estimate_tokens(p) <= MAX_TOKENS + 10


def test_hash_lines_inside_code_fences_are_not_headings():
    d = doc([(2, "Real", "Text before.\n\n```markdown\n## Not a heading\n```\n\nText after the fence.")])
    chunks = chunk_document(d)
    assert len(chunks) == 1 and "## Not a heading" in chunks[0].content and chunks[0].has_code


def test_toc_and_link_farms_are_dropped():
    toc = "\n".join(f"- Chapter {i}" for i in range(12))
    d = doc([(2, "Contents", "Anything at all in here is a table of contents."), (2, "Chapters", toc),
             (2, "Real", "A real section with a real explanation of things.")])
    assert [c.section_title for c in chunk_document(d)] == ["Real"]


def test_tiny_fragments_are_dropped():
    assert chunk_document(doc([(2, "Tiny", "ok"), (2, "Real", "This one has enough words to matter.")]))[0].section_title == "Real"


def test_dedupe_keeps_first_occurrence():
    shared = "If you use coding agents, add the skill to your repository for better results."
    docs = [doc([(2, "Overview", f"Provider {n} overview text."), (2, "Skill", shared)], title=n, path=f"{n}.md")
            for n in ("deepseek", "elevenlabs", "fal")]
    found = [c for d in docs for c in chunk_document(d)]
    chunks = [found[i] for i in dedupe(content_key(c.content) for c in found)]
    skill = [c for c in chunks if c.section_title == "Skill"]
    assert len(skill) == 1 and skill[0].doc_path == "deepseek.md"
    assert len([c for c in chunks if c.section_title == "Overview"]) == 3


def test_pages_with_only_h1_sections_split_at_h1():
    d = doc([(1, "First", "Body of the first top level section."), (1, "Second", "Body of the second top level section.")])
    assert [c.section_title for c in chunk_document(d)] == ["First", "Second"]


def test_deep_heading_before_first_section_joins_introduction():
    d = doc([(0, "", "Opening words of the page, long enough."), (3, "Note", "A note that sits before any H2 heading."),
             (2, "Body", "The body section with enough words.")])
    chunks = chunk_document(d)
    assert chunks[0].section_title == "Introduction" and "A note that sits" in chunks[0].content


def test_stray_h1_after_h2_stays_inside_its_section():
    d = doc([(2, "Setup", "Install the client library first."), (1, "This will use the env var", "vo = Client()"),
             (2, "Usage", "Call the client with your key.")])
    chunks = chunk_document(d)
    assert [c.section_title for c in chunks] == ["Setup", "Usage"]
    assert "This will use the env var" in chunks[0].content
