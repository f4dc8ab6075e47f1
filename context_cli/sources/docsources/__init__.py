"""Where a dependency's real documentation comes from: one resolver (`ladder.resolve`) used by
`context add pypi:/npm:`, `context sync` and the publisher, so a user's sync and the
registry's CI build the same package from the same recipe.

`ladder` runs the steps; `catalogue` finds definitions; `metadata` reads index metadata for
repository and site URLs; `guard` decides which of those URLs may be followed; `tree` finds
the docs folder of a repository; `site` reads a versioned docs site.
"""
