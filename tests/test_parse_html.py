"""HTML pages through `parse_file` / `parse_html`."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from context_cli.parse import parse_file, parse_html

FIXTURES = Path(__file__).parent / "fixtures" / "parse"


def body(doc) -> str:
    return "\n\n".join(b.text for b in doc.blocks)


@pytest.fixture(scope="module")
def sphinx_page():
    return parse_file("site/quickstart.html", (FIXTURES / "sphinx_page.html").read_bytes(), url="https://x/q.html")


def test_chrome_removed(sphinx_page):
    text = body(sphinx_page) + " ".join(b.title for b in sphinx_page.blocks)
    for gone in ("Skip to content", "Nav link", "Sidebar item", "Navigation", "Docs", "Copyright",
                 "script text", "color: red", "Search", "Enable JS", "svg text", "¶", "<"):
        assert gone not in text, gone


def test_title_description_url_and_headings(sphinx_page):
    assert sphinx_page.title == "Quickstart"
    assert sphinx_page.description == "A quick start guide."
    assert sphinx_page.url == "https://x/q.html"
    assert [(b.level, b.title) for b in sphinx_page.blocks] == [(0, ""), (2, "A Minimal Application")]
    assert sphinx_page.blocks[0].text == "Eager to get started? Use `flask run` and read the tutorial."


def test_code_lists_and_tables(sphinx_page):
    section = sphinx_page.blocks[1].text
    assert section.startswith("```python\nfrom flask import Flask\napp = Flask(__name__)\n```")
    assert "- First item\n- Second item\n  - Nested" in section
    assert "| Name | Value |\n| --- | --- |\n| debug | False |\n| a\\|b | x |" in section
    assert "```js\nconst x = 1;\n```" in section


def test_title_falls_back_to_title_tag_without_site_suffix():
    doc = parse_html("p.html", "<html><head><title>Install | MySite</title></head>"
                     "<body><main><h2>Step</h2><p>Do it.</p></main></body></html>")
    assert doc.title == "Install"
    assert [(b.level, b.title, b.text) for b in doc.blocks] == [(2, "Step", "Do it.")]


def test_title_from_file_name_when_nothing_else():
    doc = parse_html("docs/how-to.html", "<p>Hello <em>there</em>.</p>")
    assert doc.title == "How to"
    assert body(doc) == "Hello there."


def test_empty_and_xml_declared_pages():
    assert parse_html("e.html", "   ").blocks == []
    doc = parse_html("x.html", '<?xml version="1.0" encoding="utf-8"?>\n<html><body><h1>X</h1><p>y</p></body></html>')
    assert doc.title == "X" and body(doc) == "y"


def test_article_header_with_h1_is_kept_site_header_is_not():
    doc = parse_html("a.html", "<html><body><header><h1>Site Name</h1><a href='/'>Home</a></header>"
                     "<article><header><h1>Real Title</h1><p class='meta'>by me</p></header>"
                     "<p>Content.</p><footer>Share this</footer></article></body></html>")
    assert doc.title == "Real Title"
    text = body(doc)
    assert "Content." in text and "Share this" not in text and "Site Name" not in text and "Home" not in text


def test_mkdocs_style_page():
    doc = parse_html("m.html", """<html><body>
      <div class="md-sidebar md-sidebar--primary"><nav class="md-nav">Menu</nav></div>
      <div class="md-content"><article class="md-content__inner md-typeset">
        <h1 id="usage">Usage<a class="headerlink" href="#usage">#</a></h1>
        <p>Intro.</p>
        <h2 id="api">API <code>call()</code><a class="headerlink" href="#api">#</a></h2>
        <div class="language-python highlight"><pre><span></span><code><span class="linenos">1</span>call()
</code></pre></div>
        <div class="admonition note"><p class="admonition-title">Note</p><p>Be nice.</p></div>
        <dl><dt>term</dt><dd>meaning</dd></dl>
      </article></div>
      <div class="md-sidebar md-sidebar--secondary">On this page</div></body></html>""")
    assert doc.title == "Usage"
    assert [(b.level, b.title) for b in doc.blocks] == [(0, ""), (2, "API call()")]
    api = doc.blocks[1].text
    assert api.startswith("```python\ncall()\n```")
    assert "> Note:\n> Be nice." in api and "term\n: meaning" in api  # a callout is a quote headed by its kind
    assert "Menu" not in body(doc) and "On this page" not in body(doc)


def test_page_without_main_uses_readability_or_body():
    paragraphs = "".join(f"<p>Paragraph {i} explains the library in useful detail, with words.</p>" for i in range(12))
    page = f"""<html><head><title>Guide - Lib</title></head><body>
      <div class="menu"><a href="/a">A</a> <a href="/b">B</a> <a href="/c">C</a></div>
      <div class="content"><h1>Guide</h1>{paragraphs}<pre class="sourceCode python">x = 1</pre></div>
      <div class="footer">Site footer</div></body></html>"""
    doc = parse_html("g.html", page)
    assert doc.title == "Guide"
    text = body(doc)
    assert "Paragraph 0 explains" in text and "Paragraph 11 explains" in text
    assert "```python\nx = 1\n```" in text
    assert "Site footer" not in text and "A B C" not in text  # readability dropped the link menu


def test_links_code_and_breaks():
    doc = parse_html("l.html", '<main><p>Go <a href="/x">there</a>, <a href="https://e.com/only-url"></a>'
                     '<a href="/img"><img src="i.png"></a><a href="#anchor"></a>, run <code>a | b</code>.<br>Next.</p>'
                     '<div class="highlight highlight-source-shell"><pre>ls</pre></div></main>')
    assert body(doc) == "Go there, https://e.com/only-url, run `a | b`.\nNext.\n\n```shell\nls\n```"


def test_charset_meta_decoding():
    data = '<html><head><meta charset="iso-8859-1"></head><body><p>café</p></body></html>'.encode("latin-1")
    assert body(parse_file("c.html", data)) == "café"


def test_sphinx_api_description_lists():
    doc = parse_html("api.html", """<div role="main"><h1>API</h1>
      <dl class="py class"><dt class="sig sig-object py" id="flask.Flask"><em class="property">class </em>
      <span class="sig-prename descclassname">flask.</span><span class="sig-name descname">Flask</span>
      <span class="sig-paren">(</span><em class="sig-param">import_name</em><span class="sig-paren">)</span>
      <a class="headerlink" href="#flask.Flask">¶</a></dt>
      <dd><p>The flask object.</p></dd></dl></div>""")
    text = body(doc)
    assert "flask.Flask" in text.replace(" ", "") and "The flask object." in text and "¶" not in text


_TAGS = ["<p>", "</p>", "<h2>", "</h2>", "<pre>", "</pre>", "<ul><li>", "</li></ul>", "<table><tr><td>",
         "</td></tr></table>", "<code>", "</code>", "<a href='x'>", "</a>", "<br>", "<nav>", "</nav>", "<main>",
         "<!--", "-->", "<script>", "</script>", "&amp;", "&#0;", "<", ">", "text ", "\n"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_TAGS) | st.text(max_size=10), max_size=60).map("".join))
def test_arbitrary_html_never_crashes(html):
    doc = parse_html("fuzz.html", html)
    assert doc.title
    text = body(doc)
    assert "\x00" not in text and "<script>" not in text


def test_a_wrapper_whose_class_names_chrome_as_a_state_keeps_its_article():
    words = "Words of the article, which the page is for and which must be kept whole."
    states = ("<div class='layout has-sidebar'><aside class='sidebar'>Menu A</aside>"
              f"<div class='page with-toc'><p>{words}</p><div class='toc'>Menu B</div></div></div>")
    wrapped = (f"<div class='docs-sidebar-layout'><nav class='sidebar-nav'>Menu C</nav>"
               f"<h1>Guide</h1><p>{words}</p></div>")
    for body in (states, wrapped):
        doc = parse_html("p.html", f"<html><body>{body}</body></html>")
        text = "\n".join(b.text for b in doc.blocks)
        assert words in text and "Menu" not in text, body
