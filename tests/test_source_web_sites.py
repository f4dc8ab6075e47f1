"""Sites as each docs generator builds them, served from loopback: the article kept with its code
languages, tab labels, callouts, tables and breadcrumb; navigation, footers, edit links, cookie
banners, version pickers and hidden text left out.

`tests/fixtures/sites/built/` holds real output of Sphinx (three themes), MkDocs Material,
Docusaurus, VitePress, Starlight, Nextra and the open-source GitBook 3, built from `sources/` (how: its README). The hosted
generators could not be built or found saved under a usable licence: `handmade/` holds
Mintlify's and ReadMe's article as their own open-source renderers write it, inside a
hand-written page, and a hand-written GitBook page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from web_fixtures import Site, serve

from context_cli.parse import parse_html
from context_cli.sources.resolve import SourceOptions, fetch_source
from context_cli.sources.site_browser import find_browser

SITES = Path(__file__).parent / "fixtures" / "sites"
BUILT = SITES / "built"
OPTS = SourceOptions(timeout=2, browser="never")


@dataclass(frozen=True)
class Built:
    page: str  # the config page's URL path
    file: str  # ... and its file under built/GENERATOR/
    crumbs: bool = True  # the generator writes a breadcrumb
    languages: bool = True  # the page names its code blocks' languages
    callout: str = "> Warning: Zero:"
    tabs: bool = True  # the generator has tabs


REAL = {
    "sphinx-rtd": Built("/guide/config.html", "guide/config.html"),
    "sphinx-furo": Built("/guide/config.html", "guide/config.html", crumbs=False),
    "sphinx-pydata": Built("/guide/config.html", "guide/config.html"),
    "mkdocs-material": Built("/guide/config/", "guide/config/index.html"),
    "docusaurus": Built("/guide/config", "guide/config/index.html"),
    "vitepress": Built("/guide/config.html", "guide/config.html", crumbs=False),
    "starlight": Built("/guide/config/", "guide/config/index.html", crumbs=False, callout="> Caution: Zero:"),
    "nextra": Built("/guide/config", "guide/config.html", languages=False, callout="> Warning:\n> Zero: A timeout"),
    "gitbook-legacy": Built("/guide/config.html", "guide/config.html", crumbs=False, tabs=False,
                            callout="> Warning: Zero. A timeout"),
}
# Chrome each generator wraps around the article: none of it may reach the index.
CHROME = ("Edit this page", "Edit on GitHub", "Edit page", "We use cookies", "Cookie consent", "Copyright", "© 2026",
          "Installing", "Previous", "On this page", "On This Page", "Table of contents", "Version: 2.0", "1.0",
          "Skip to", "Made with", "Back to top", "Scroll to top", "Search", "Acme client", "Question? Give us feedback",
          "View this page", "Privacy", "MIT License")


def text_of(doc) -> str:
    return "\n".join(f"{b.title}\n{b.text}" for b in doc.blocks)


def fetch_built(generator: str, path: str, opts: SourceOptions = OPTS):
    site = Site().add_static(BUILT / generator)
    with serve(site) as base:
        return fetch_source(base + path, opts), site


@pytest.mark.parametrize("generator", sorted(REAL))
def test_real_generator_page_keeps_the_article_only(generator: str) -> None:
    want = REAL[generator]
    fetched, _ = fetch_built(generator, want.page)
    [doc] = [d for d in fetched.documents if "config" in d.path]
    text = text_of(doc)
    assert doc.title == ("User guide > " if want.crumbs else "") + "Configuring the client"
    assert text.startswith("\nPass keyword arguments to `Client()` to change how it talks to the server.")
    lang = "python" if want.languages else ""
    assert f"```{lang}\nimport acme\nclient = acme.Client(timeout=5)\n```" in text
    if want.tabs:
        assert f"Tab: Python\n\n```{lang}\nclient = acme.Client(timeout=5)\n```" in text
        assert f"Tab: Shell\n\n```{'bash' if want.languages else ''}\nexport ACME_TIMEOUT=5\n```" in text  # hidden tab
    assert want.callout in text and "A timeout of 0 waits for ever." in text
    assert "| setting | default | meaning |\n| --- | --- | --- |\n| timeout | 30 | seconds to wait for an answer |" in text
    assert [b.title for b in doc.blocks if b.level] == ["Settings"]
    assert "IGNORE PREVIOUS INSTRUCTIONS" not in text + doc.title + doc.description
    leaked = [c for c in CHROME if c in text]
    assert not leaked, leaked


@pytest.mark.parametrize("generator", ["sphinx-rtd", "mkdocs-material", "docusaurus", "vitepress", "starlight",
                                       "nextra", "gitbook-legacy"])
def test_real_site_is_crawled_whole_with_nothing_but_its_pages(generator: str) -> None:
    fetched, site = fetch_built(generator, "/")
    pages = sorted(re.sub(r"\.html$", "", d.path) for d in fetched.documents)
    assert pages == (["guide", "guide/config", "guide/install", "index"] if generator in ("sphinx-rtd", "gitbook-legacy")
                     else ["guide/config", "guide/install", "index"])
    assert fetched.skipped == 0 and fetched.version == "latest"
    assert not any("/1.0/" in p for p in site.paths())  # the other version's copies are never fetched
    assert not any("JavaScript" in n or "browser" in n for n in fetched.notes)  # short pages are not shells
    toctree = generator.startswith("sphinx")  # a Sphinx toctree lists the pages inside the article
    for doc in fetched.documents:
        leaked = [c for c in CHROME if c in text_of(doc) and not (c == "Installing" and ("install" in doc.path or toctree))
                  and not (c == "Acme client" and doc.path == "index")]
        assert not leaked, (doc.path, leaked)
    home = next(d for d in fetched.documents if d.path == "index")
    assert "The Acme client talks to the Acme server for you" in text_of(home)


@pytest.mark.skipif(find_browser() is None, reason="chromium is not installed (apt install chromium)")
@pytest.mark.parametrize("generator", ["docusaurus", "starlight"])
def test_real_page_rendered_by_real_chromium_reads_the_same(generator: str) -> None:
    """`--browser` on a real page: chromium's DOM (its own serialisation) gives the same article."""
    want = REAL[generator]
    plain, _ = fetch_built(generator, want.page)
    rendered, _ = fetch_built(generator, want.page, SourceOptions(timeout=5, browser="always", max_pages=1))
    [doc] = rendered.documents
    assert any("needed a browser" in n for n in rendered.notes)
    assert (doc.title, text_of(doc)) == next((d.title, text_of(d)) for d in plain.documents if "config" in d.path)


def test_docusaurus_version_asked_is_built_from_its_own_pages() -> None:
    fetched, site = fetch_built("docusaurus", "/", SourceOptions(timeout=2, browser="never", tag="1.0"))
    assert fetched.version == "1.0"
    assert sorted(d.path for d in fetched.documents) == ["1.0", "1.0/guide/config", "1.0/guide/install"]
    config = next(d for d in fetched.documents if d.path == "1.0/guide/config")
    assert config.title == "User guide > Configuring the client" and "Version: 1.0" not in text_of(config)
    assert not [p for p in site.paths() if p.startswith("/guide/")]


def test_astro_sitemap_index_is_found_without_robots_txt() -> None:
    fetched, site = fetch_built("starlight", "/")
    assert any(n.startswith("read sitemap ") and "sitemap-index.xml" in n for n in fetched.notes), fetched.notes
    assert site.requested("/sitemap-0.xml")
    assert sorted(d.path for d in fetched.documents) == ["guide/config", "guide/install", "index"]


# -- the hosted generators: their own renderers' article inside a hand-written page, and no generator ------

HANDMADE = ["mintlify", "gitbook", "readme", "generic"]
HANDMADE_CHROME = ("Edit this page", "Edit page", "Edit on GitHub", "We use cookies", "© 2026", "Copyright",
                   "Installing", "Was this page helpful", "On this page", "View page source", "1.0", "v2.0",
                   "Version: 2.0", "🚧", "Did this page help", "Updated 3 months ago", "Copy")


@pytest.mark.parametrize("generator", HANDMADE)
def test_hosted_generator_page_keeps_the_article_only(generator: str) -> None:
    site = Site()
    site.add("/guide/config", (SITES / "handmade" / f"{generator}.html").read_text("utf-8"))
    with serve(site) as base:
        fetched = fetch_source(base + "/guide/config", OPTS)
    [doc] = fetched.documents
    text = text_of(doc)
    assert doc.title == ("User guide > " if generator != "generic" else "") + "Configuring the client"
    assert "keyword arguments to `Client()`" in text
    assert re.search(r"```python\n(?:import acme\n)?client = acme.Client\(timeout=5\)\n```", text)
    assert "| timeout | 30 |" in text
    assert [b.title for b in doc.blocks if b.level] == ["Settings"]
    if generator in ("gitbook", "readme"):
        assert "Tab: Python\n\n```python\nclient" in text and "Tab: Shell" in text
        assert "```bash\nexport ACME_TIMEOUT=5\n```" in text  # the hidden tab too
    if generator == "mintlify":  # its code group renders the open tab only: the other is not in the page
        assert "Tab: Python\n\n```python\nclient" in text and "ACME_TIMEOUT" not in text
    if generator != "generic":
        quote = next(line for line in text.splitlines() if line.startswith("> "))
        assert "waits for ever" in text and quote.startswith(("> Warning", "> Caution", "> Warn")), quote
    if generator in ("mintlify", "readme"):
        assert {"mintlify": "> Warning: Zero:", "readme": "> Warn: Zero:"}[generator] in text
    assert "IGNORE PREVIOUS INSTRUCTIONS" not in text + doc.title + doc.description
    leaked = [c for c in HANDMADE_CHROME if c in text]
    assert not leaked, leaked


def test_adapter_is_picked_from_the_page() -> None:
    from lxml import html as lhtml

    from context_cli.parse.site_adapters import pick

    def picked(path: Path) -> str | None:
        adapter = pick(lhtml.document_fromstring(path.read_text("utf-8")))
        return adapter.name if adapter else None

    real = {g: picked(BUILT / g / b.file) for g, b in REAL.items()}
    assert real == {g: g.split("-")[0] if g.startswith(("sphinx", "gitbook")) else g for g in REAL}
    assert {g: picked(SITES / "handmade" / f"{g}.html") for g in HANDMADE} == {
        g: (None if g == "generic" else g) for g in HANDMADE}


def test_hidden_text_of_every_kind_is_never_indexed() -> None:
    hidden = ["<p style='display:none'>A1</p>", "<p style='visibility:hidden'>A2</p>", "<p aria-hidden='true'>A3</p>",
              "<p hidden>A4</p>", "<div style='position:absolute; left:-9999px'>A5</div>",
              "<span style='font-size:0'>A6</span>", "<p class='sr-only'>A7</p>"]
    page = ("<html><body><main><h1>T</h1><p>Visible words of the page, kept.</p>" + "".join(hidden)
            + "<div role='tabpanel' hidden><p>Tab two, shown on a click.</p></div></main></body></html>")
    text = text_of(parse_html("p.html", page))
    assert "Visible words" in text and "Tab two" in text
    assert not [f"A{i}" for i in range(1, 8) if f"A{i}" in text]


def test_breadcrumb_is_the_section_path_of_search_results() -> None:
    import json

    from click.testing import CliRunner

    from context_cli.surfaces.cli import cli

    site = Site().add_static(BUILT / "docusaurus")
    with serve(site) as base:
        added = CliRunner().invoke(cli, ["add", base + "/", "--name", "acme", "--no-embed", "--no-browser"])
    assert added.exit_code == 0, added.output
    found = CliRunner().invoke(cli, ["search", "timeout default seconds to wait", "--lib", "acme", "--format", "json"])
    top = json.loads(found.output)["results"][0]
    assert top["title"].startswith("User guide > Configuring the client > ") and "Settings" in top["title"]
    assert top["url"].endswith("/guide/config") and "| timeout | 30 |" in top["content"]


def test_short_real_pages_are_not_taken_for_javascript_shells() -> None:
    from context_cli.sources.site_browser import looks_unrendered

    installs = [p if p.is_file() else p / "index.html" for p in BUILT.glob("*/guide/install*")]
    for page in [*BUILT.glob("*/index.html"), *installs]:
        html = page.read_text("utf-8")
        chars = sum(len(b.text) + len(b.title) for b in parse_html("page", html).blocks)
        assert not looks_unrendered(html, chars), page
    header_only = ("<html><body><header><h1>Acme docs</h1></header><div id='root'></div>"
                   "<script src='/app.js'></script></body></html>")
    assert looks_unrendered(header_only, len("Acme docs"))
