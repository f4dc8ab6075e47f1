"""Pages as each docs generator writes them (tests/fixtures/sites), served from loopback: the
article kept with its code languages, tab labels, callouts, tables and breadcrumb; navigation,
footers, edit links, cookie banners, version pickers and hidden text left out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from web_fixtures import Site, serve

from context_cli.parse import parse_html
from context_cli.sources.resolve import SourceOptions, fetch_source

FIXTURES = Path(__file__).parent / "fixtures" / "sites"
GENERATORS = ["sphinx", "mkdocs-material", "docusaurus", "vitepress", "starlight", "nextra", "mintlify",
              "gitbook", "readme", "generic"]
TABBED = {"mkdocs-material", "docusaurus", "vitepress", "starlight", "mintlify", "gitbook", "readme"}
CHROME = ("Edit this page", "Edit page", "Edit on GitHub", "We use cookies", "© 2026", "Copyright",
          "Installing", "Was this page helpful", "On this page", "View page source", "1.0", "v2.0", "Version: 2.0")


def text_of(doc) -> str:
    return "\n".join(f"{b.title}\n{b.text}" for b in doc.blocks)


@pytest.mark.parametrize("generator", GENERATORS)
def test_generator_page_keeps_the_article_only(generator: str) -> None:
    site = Site()
    site.add("/guide/config", (FIXTURES / f"{generator}.html").read_text("utf-8"))
    with serve(site) as base:
        fetched = fetch_source(base + "/guide/config", SourceOptions(timeout=2, browser="never"))
    [doc] = fetched.documents
    text = text_of(doc)
    crumbs = generator not in ("vitepress", "starlight", "generic")
    assert doc.title == ("User guide > " if crumbs else "") + "Configuring the client"
    assert "keyword arguments to `Client()`" in text
    assert re.search(r"```python\n(?:import acme\n)?client = acme.Client\(timeout=5\)\n```", text)
    assert "| timeout | 30 |" in text
    assert [b.title for b in doc.blocks if b.level] == ["Settings"]
    if generator in TABBED:
        assert "Tab: Python" in text and "Tab: Shell" in text
        assert "```bash\nexport ACME_TIMEOUT=5\n```" in text  # the hidden tab too
    if generator != "generic":
        assert "waits for ever" in text and text.count("> ") >= 1
        quote = next(line for line in text.splitlines() if line.startswith("> "))
        if generator != "nextra":  # Nextra says the kind only by colour and emoji
            assert quote.startswith(("> Warning", "> Caution", "> Warn")), quote
    assert "IGNORE PREVIOUS INSTRUCTIONS" not in text + doc.title + doc.description
    leaked = [c for c in CHROME if c in text]
    assert not leaked, leaked


def test_adapter_is_picked_from_the_page() -> None:
    from lxml import html as lhtml

    from context_cli.parse.site_adapters import pick

    picked = {g: (a.name if (a := pick(lhtml.document_fromstring((FIXTURES / f"{g}.html").read_text()))) else None)
              for g in GENERATORS}
    assert picked == {g: (None if g == "generic" else g) for g in GENERATORS}


def test_hidden_text_of_every_kind_is_never_indexed() -> None:
    hidden = ["<p style='display:none'>A1</p>", "<p style='visibility:hidden'>A2</p>", "<p aria-hidden='true'>A3</p>",
              "<p hidden>A4</p>", "<div style='position:absolute; left:-9999px'>A5</div>",
              "<span style='font-size:0'>A6</span>", "<p class='sr-only'>A7</p>"]
    page = ("<html><body><main><h1>T</h1><p>Visible words of the page, kept.</p>" + "".join(hidden)
            + "<div role='tabpanel' hidden><p>Tab two, shown on a click.</p></div></main></body></html>")
    text = text_of(parse_html("p.html", page))
    assert "Visible words" in text and "Tab two" in text
    assert not [f"A{i}" for i in range(1, 8) if f"A{i}" in text]
