"""Pages read with the files they include (`include`, `literalinclude`, snippets, FastAPI's
`{* *}` and `{! !}`, MyST fences), from inside the source root only.

Real trees in miniature (tests/fixtures/fidelity, see its README) and small trees made here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from context_cli.build import BuildOptions, build
from context_cli.package.reader import open_package
from context_cli.parse import parse_file
from context_cli.parse.includes import MAX_PAGE_FILES, Includes, may_include
from context_cli.sources.base import Fetched

FIXTURES = Path(__file__).parent / "fixtures" / "fidelity"


def parse(root: Path, rel: str):
    return parse_file(rel, (root / rel).read_bytes(), root=str(root))


def text_of(doc) -> str:
    return "\n\n".join(f"{b.title}\n{b.text}" for b in doc.blocks)


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


# Sphinx


def test_keyring_index_is_its_readme():
    doc = parse(FIXTURES / "keyring", "docs/index.rst")
    body = text_of(doc)
    assert "provides an easy way to access the" in body
    assert [b.title for b in doc.blocks if b.level] == ["Installation - Linux"]
    assert "dbus-python" in body


def test_a_jaraco_links_file_is_read_from_its_source():
    doc = parse(FIXTURES / "keyring", "docs/history.rst")
    assert doc.kind == "changelog"
    versions = [b.title for b in doc.blocks if b.title.startswith("v")]
    assert versions == ["v25.7.0", "v25.6.0", "v25.5.0"]
    assert "Improved support for KWallet 6" in text_of(doc)


def test_without_a_root_an_include_leaves_nothing():
    root = FIXTURES / "keyring"
    doc = parse_file("docs/index.rst", (root / "docs/index.rst").read_bytes())
    assert "easy way to access" not in text_of(doc)


def test_literalinclude_options_select_what_sphinx_shows(tmp_path):
    root = tree(tmp_path, {
        "docs/conf.py": "",
        "docs/examples/app.py": (
            "import os\n\n\n@decorated\nclass App:\n    def run(self):\n        return 1\n\n"
            "    def stop(self):\n        return 2\n\n\ndef helper():\n    pass\n"),
        "docs/guide.rst": (
            "Guide\n=====\n\nWhole class\n-----------\n\n.. literalinclude:: examples/app.py\n   :pyobject: App\n\n"
            "One method\n----------\n\n.. literalinclude:: /examples/app.py\n   :pyobject: App.stop\n   :dedent:\n\n"
            "Some lines\n----------\n\n.. literalinclude:: examples/app.py\n   :lines: 1,13-14\n   :caption: helper.py\n\n"
            "Between\n-------\n\n.. literalinclude:: examples/app.py\n   :start-after: class App:\n   :end-before: def stop\n"),
    })
    doc = parse(root, "docs/guide.rst")
    sections = {b.title: b.text for b in doc.blocks}
    assert sections["Whole class"].startswith("```python\n@decorated\nclass App:")
    assert "def helper" not in sections["Whole class"]
    assert sections["One method"] == "```python\ndef stop(self):\n    return 2\n```"
    assert sections["Some lines"] == "helper.py\n\n```python\nimport os\ndef helper():\n    pass\n```"
    assert sections["Between"] == "```python\n    def run(self):\n        return 1\n\n```".replace("\n\n```", "\n```")


def test_nested_includes_resolve_from_the_including_file(tmp_path):
    root = tree(tmp_path, {
        "docs/index.rst": "Top\n===\n\n.. include:: parts/a.rst\n",
        "docs/parts/a.rst": "From A.\n\n.. include:: b.rst\n",
        "docs/parts/b.rst": "From B.\n\n.. include:: a.rst\n",  # a cycle back to A
    })
    body = text_of(parse(root, "docs/index.rst"))
    assert body.count("From A.") == 1 and body.count("From B.") == 1


def test_an_included_markdown_file_is_read_as_markdown(tmp_path):
    root = tree(tmp_path, {
        "README.md": "Intro in **Markdown**.\n\n```python\nprint('hi')\n```\n",
        "docs/index.rst": "Project\n=======\n\n.. include:: ../README.md\n   :parser: myst_parser.sphinx_\n",
    })
    body = text_of(parse(root, "docs/index.rst"))
    assert "Intro in Markdown." in body and "```python\nprint('hi')\n```" in body


def test_include_as_code_and_standard_substitutions(tmp_path):
    root = tree(tmp_path, {
        "docs/config.toml": "[tool]\nname = 1\n",
        "docs/index.rst": (".. include:: <isonum.txt>\n\nPage\n====\n\nCopyright |copy| 2026.\n\n"
                           ".. include:: config.toml\n   :code: toml\n"),
    })
    body = text_of(parse(root, "docs/index.rst"))
    assert "Copyright © 2026." in body
    assert "```toml\n[tool]\nname = 1\n```" in body


def test_changelog_directives_give_a_section_per_release():
    doc = parse(FIXTURES / "alembic", "docs/build/changelog.rst")
    assert doc.kind == "changelog"
    first, second = (b for b in doc.blocks if b.level)
    assert (first.title, second.title) == ("1.20.1", "1.20.0")
    assert first.text.startswith("Released: October 21, 2026\n\n[bug] [autogenerate] Fixed issue where a table")
    assert first.text.endswith("References: #1085")


# Markdown


def test_fastapi_code_includes_come_from_docs_src_beside_the_docs():
    doc = parse(FIXTURES / "fastapi", "docs/en/docs/tutorial/first-steps.md")
    intro = doc.blocks[0].text
    assert '```python\nfrom fastapi import FastAPI\n\napp = FastAPI()\n\n\n@app.get("/")' in intro
    assert "{*" not in text_of(doc) and "///" not in text_of(doc)
    assert "Tip:\n\nFastAPI has an official extension" in intro
    assert [b.title for b in doc.blocks if b.level] == ["Check it"]  # `{ #check-it }` is gone


def test_markdown_include_inside_a_fence_and_internal_link_attributes():
    doc = parse(FIXTURES / "fastapi", "docs/en/docs/tutorial/bigger-applications.md")
    body = text_of(doc)
    assert "declare global dependencies that will be combined" in body
    assert "{." not in body and "target=_blank" not in body
    assert "```Python\nfrom fastapi import Depends, FastAPI\n" in body


def test_snippets_sections_lines_and_blocks(tmp_path):
    root = tree(tmp_path, {
        "mkdocs.yml": "site_name: x\n",
        "snippets/abbr.md": "*[HTML]: Hyper Text\n",
        "snippets/code.py": "# --8<-- [start:setup]\nsetup = 1\n# --8<-- [end:setup]\nother = 2\nlast = 3\n",
        "docs/page.md": (
            "# Page\n\nBefore.\n\n--8<-- \"snippets/abbr.md\"\n\n```python\n--8<-- \"snippets/code.py:setup\"\n```\n\n"
            "```python\n--8<-- \"snippets/code.py:4:5\"\n```\n\n--8<--\nsnippets/abbr.md\n;snippets/skipped.md\n--8<--\n\n"
            ";--8<-- \"snippets/abbr.md\"\n\n--8<-- \"https://example.org/remote.md\"\n"),
    })
    body = text_of(parse(root, "docs/page.md"))
    assert body.count("*[HTML]: Hyper Text") == 2
    assert "```python\nsetup = 1\n```" in body
    assert "```python\nother = 2\nlast = 3\n```" in body
    assert "8<" not in body.replace(';--8<-- "snippets/abbr.md"', "")


def test_myst_include_and_literalinclude_fences(tmp_path):
    root = tree(tmp_path, {
        "LICENSE.txt": "Copyright 2026 Someone\n",
        "README.md": "# Readme\n\nStart here.\n<!-- end -->\nNot this.\n",
        "docs/index.md": ("# Index\n\n```{include} ../README.md\n:end-before: <!-- end -->\n```\n\n"
                          "```{literalinclude} ../LICENSE.txt\n:language: text\n```\n"),
    })
    body = text_of(parse(root, "docs/index.md"))
    assert "Start here." in body and "Not this." not in body
    assert "```text\nCopyright 2026 Someone\n```" in body


# The source root is a wall


def test_nothing_is_read_outside_the_root_or_through_a_symlink_out(tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("TOP-SECRET-OUTSIDE")
    root = tree(tmp_path / "repo", {"docs/index.md": (
        "# Page\n\n{!../../secret.txt!}\n\n--8<-- \"/etc/hostname\"\n\n--8<-- \"link.txt\"\n\n"
        "{* ../../../secret.txt *}\n\n--8<-- \"fifo\"\n\nEnd.\n")})
    os.symlink(outside, root / "docs" / "link.txt")
    os.mkfifo(root / "docs" / "fifo")  # opening it would block forever
    body = text_of(parse(root, "docs/index.md"))
    assert "TOP-SECRET" not in body
    assert body.strip().endswith("End.")


def test_a_symlink_inside_the_root_is_followed(tmp_path):
    root = tree(tmp_path, {"shared/note.md": "Shared note.\n", "docs/index.md": "# P\n\n--8<-- \"note.md\"\n"})
    os.symlink(root / "shared" / "note.md", root / "docs" / "note.md")
    assert "Shared note." in text_of(parse(root, "docs/index.md"))


def test_includes_stop_at_the_page_budget(tmp_path):
    lines = "".join('--8<-- "part.md"\n\n' for _ in range(MAX_PAGE_FILES + 50))
    root = tree(tmp_path, {"part.md": "Part text.\n", "docs/index.md": "# P\n\n" + lines})
    assert text_of(parse(root, "docs/index.md")).count("Part text.") == MAX_PAGE_FILES


def test_includes_find_refuses_what_it_must():
    inc = Includes(str(FIXTURES / "fastapi"), "docs/en/docs/index.md")
    assert inc.find("../../../docs_src/first_steps/tutorial001_py310.py", inc.page) == \
        "docs_src/first_steps/tutorial001_py310.py"
    assert inc.find("../../../../outside.py", inc.page) is None
    assert inc.find("file:///etc/passwd", inc.page) is None
    assert inc.find("docs_src", inc.page, search_up=True) is None  # a folder, not a file


def test_may_include_sees_every_syntax():
    for text in (b".. include:: x", b".. literalinclude:: x", b'--8<-- "x"', b"{!x!}", b"{* x *}",
                 b'{% include "x" %}', b"```{include} x"):
        assert may_include(text)
    assert not may_include(b"# Plain page\n\nNothing to include.\n")


# Builds


def test_a_big_tree_resolves_includes_in_the_worker_processes(tmp_path):
    files = {f"docs/page{n}.md": f"# Page {n}\n\nOwn text {n}.\n\n--8<-- \"shared/common.md\"\n" for n in range(70)}
    root = tree(tmp_path / "repo", {**files, "shared/common.md": "Shared paragraph about widgets.\n"})
    out = tmp_path / "p.db"
    build(Fetched("folder", "repo", folder=root), out, BuildOptions(name="x", version="1.0.0", embed=False))
    pkg = open_package(out)
    try:
        contents = [c.content for _, c in pkg.chunks()]
    finally:
        pkg.close()
    assert all("Shared paragraph about widgets." in c for c in contents if "Own text" in c)


@pytest.mark.parametrize("change_include", [True, False])
def test_a_rebuild_reparses_a_page_whose_include_changed(tmp_path, change_include):
    root = tree(tmp_path / "repo", {"docs/index.md": "# P\n\n--8<-- \"part.inc\"\n",
                                    "docs/part.inc": "Old words in the included part.\n",
                                    "docs/other.md": "# Other\n\nNothing included here at all.\n"})
    first, second = tmp_path / "1.db", tmp_path / "2.db"
    opts = BuildOptions(name="x", version="1.0.0", embed=False)
    build(Fetched("folder", "repo", folder=root), first, opts)
    if change_include:
        (root / "docs" / "part.inc").write_text("New words in the included part.\n")
    result = build(Fetched("folder", "repo", folder=root), second,
                   BuildOptions(name="x", version="1.0.0", embed=False, previous=first))
    pkg = open_package(second)
    try:
        index = " ".join(c.content for _, c in pkg.chunks() if c.doc_path == "docs/index.md")
    finally:
        pkg.close()
    assert ("New words" if change_include else "Old words") in index
    assert result.reused_pages == 1  # other.md; index.md includes a file, so it is parsed again
