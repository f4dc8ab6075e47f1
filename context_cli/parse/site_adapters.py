"""What each docs generator's HTML means: the article, its breadcrumb, its chrome, tabs, callouts.

`html.py` trims pages by tag, role and class; a generator's own markup says more. The adapter
is picked from the page itself (its `<meta name="generator">`, else markup only that generator
writes) and names where the article is, where the breadcrumb is, and what inside the article
is chrome (edit links, version banners, feedback widgets). Two rewrites apply to every page
before trimming: tab sets become one labelled section per tab (hidden panels included: a
reader can click them), and callouts (admonitions, asides, hints) become block quotes that
start with their kind and title. Text a reader cannot see — `display:none`, `visibility:hidden`,
`aria-hidden`, the `hidden` attribute, positioned off-screen — is removed first and never
indexed: it is where prompt-like instructions hide.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


def _c(name: str) -> str:
    """XPath test: the element has class token `name`."""
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


def _gen(prefix: str) -> str:
    return f"//meta[@name='generator'][starts-with(translate(@content, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', " \
           f"'abcdefghijklmnopqrstuvwxyz'), '{prefix}')]"


@dataclass(frozen=True)
class Adapter:
    name: str
    detect: tuple[str, ...]  # XPaths; any match picks this adapter
    content: tuple[str, ...]  # XPaths of the article root, first match wins
    breadcrumb: tuple[str, ...] = ()  # XPaths of the breadcrumb container
    drop: tuple[str, ...] = ()  # XPaths of chrome inside the article


ADAPTERS = (
    Adapter("mkdocs-material", (_gen("mkdocs"), f"//*[{_c('md-content')}]"),
            (f"//article[{_c('md-content__inner')}]", f"//*[{_c('md-content')}]"),
            (f"//*[{_c('md-path')}]",),
            (f"//*[{_c('md-content__button')}]", f"//*[{_c('md-source-file')}]", f"//*[{_c('md-feedback')}]",
             f"//*[{_c('md-banner')}]", f"//*[{_c('md-version')}]")),
    # Sphinx 9 writes no generator meta; every Sphinx page has `data-content_root` (7.2+) or
    # loads `documentation_options.js`.
    Adapter("sphinx", (_gen("sphinx"), "/html[@data-content_root]", "//script[contains(@src, 'documentation_options.js')]",
                       f"//*[{_c('sphinxsidebar')}]", f"//*[{_c('rst-content')}]", "//div[@itemprop='articleBody']"),
            ("//div[@itemprop='articleBody']", f"//article[{_c('bd-article')}]", "//article[@id='furo-main-content']",
             f"//div[{_c('body')}][@role='main']", f"//div[{_c('body')}]", f"//div[{_c('rst-content')}]"),
            (f"//*[{_c('wy-breadcrumbs')}]", "//nav[@aria-label='breadcrumbs']", f"//*[{_c('bd-breadcrumbs')}]"),
            (f"//*[{_c('wy-breadcrumbs-aside')}]", f"//*[{_c('rst-versions')}]", f"//*[{_c('headerlink')}]",
             f"//*[{_c('rst-footer-buttons')}]", f"//*[{_c('prev-next-area')}]")),
    Adapter("docusaurus", (_gen("docusaurus"), "//*[@id='__docusaurus']"),
            (f"//div[{_c('theme-doc-markdown')}]", f"//article//div[{_c('markdown')}]", "//article"),
            (f"//nav[{_c('theme-doc-breadcrumbs')}]", "//nav[@aria-label='Breadcrumbs']"),
            (f"//*[{_c('theme-edit-this-page')}]", f"//*[{_c('theme-doc-footer')}]",
             f"//*[{_c('theme-doc-version-badge')}]", f"//*[{_c('theme-doc-version-banner')}]",
             f"//*[{_c('theme-doc-toc-mobile')}]", f"//*[{_c('theme-last-updated')}]")),
    Adapter("vitepress", (_gen("vitepress"), f"//*[{_c('VPDoc')}]", f"//*[{_c('vp-doc')}]"),
            (f"//div[{_c('vp-doc')}]", "//main"), (),
            (f"//*[{_c('edit-link')}]", f"//*[{_c('VPDocFooter')}]", f"//*[{_c('VPDocFooterLastUpdated')}]",
             f"//span[{_c('lang')}]", f"//*[{_c('header-anchor')}]")),
    Adapter("starlight", (_gen("starlight"), f"//*[{_c('sl-markdown-content')}]"),
            (f"//*[{_c('sl-markdown-content')}]", "//main"), (),
            (f"//*[{_c('sl-anchor-link')}]", "//starlight-toc", "//mobile-starlight-toc",
             "//*[@data-pagefind-ignore]")),
    Adapter("nextra", (_gen("nextra"), "//*[contains(@class, 'nextra-')]"),
            ("//article//main", "//article", "//main"),
            (f"//*[{_c('nextra-breadcrumb')}]",),
            ("//*[contains(@class, 'nextra-toc')]", "//*[contains(@class, 'nextra-nav-container')]",
             "//*[contains(concat(' ', @class, ' '), ' print:nx-hidden ')]")),
    Adapter("mintlify", (_gen("mintlify"), "//*[@id='content-area']"),
            ("//*[@id='content-area']", "//*[@id='content']", "//main"),
            ("//*[@id='header']//*[contains(@class, 'eyebrow')]", "//*[contains(@class, 'eyebrow')]"),
            ("//*[@id='pagination']", "//*[@id='footer']", "//*[contains(@class, 'feedback')]")),
    Adapter("gitbook", (_gen("gitbook"),),  # the hosted GitBook, and the open-source GitBook 3 of many older books
            ("//main//*[contains(@class, 'page-body')]", "//main", f"//section[{_c('markdown-section')}]"),
            ("//nav[@aria-label='Breadcrumb']", "//nav[@aria-label='breadcrumb']"),
            ("//*[contains(@class, 'page-footer')]", "//a[contains(@href, '/edit/')]")),
    Adapter("readme", ("//meta[@name='readme-deploy']", "//*[contains(@class, 'rm-Article')]"),
            ("//*[contains(@class, 'rm-Article')]//*[contains(@class, 'markdown-body')]",
             "//*[contains(@class, 'rm-Article')]"),
            ("//*[contains(@class, 'rm-Guides')]//*[contains(@class, 'Breadcrumb')]",),
            ("//*[contains(@class, 'PageThumbs')]", "//*[contains(@class, 'UpdatedAt')]",
             "//*[contains(@class, 'rm-Suggest')]", f"//*[{_c('callout-icon')}]")),
)
# Pages of no known generator: ids and properties that name the article, before readability guesses.
GENERIC_CONTENT = ("//*[@itemprop='articleBody']", "//main", "//*[@role='main']", "//*[@id='content']",
                   "//*[@id='main-content']", "//*[@id='main']")
_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|(?:left|top|text-indent)\s*:\s*-\d{3,}|"
    r"clip\s*:\s*rect\(\s*0[^)]*\)|font-size\s*:\s*0(?![.\d])|opacity\s*:\s*0(?![.\d])",
    re.I,
)
_CALLOUT = (f"//div[{_c('admonition')}]", f"//details[{_c('admonition')}]", f"//div[{_c('theme-admonition')}]",
            f"//div[{_c('custom-block')}]", f"//aside[{_c('starlight-aside')}]",
            "//div[contains(@class, 'nextra-callout')]", "//div[@data-callout-type]", "//*[@data-hint-style]",
            f"//div[{_c('callout')}]", f"//blockquote[{_c('callout')}]")
_CALLOUT_TITLE = (f".//*[{_c('admonition-title')}]", f".//*[{_c('custom-block-title')}]",
                  f".//*[{_c('starlight-aside__title')}]", ".//*[contains(@class, 'admonitionHeading')]",
                  f".//*[{_c('callout-heading')}]", ".//*[@data-component-part='callout-title']", "./summary",
                  "./*[self::h2 or self::h3 or self::h4 or self::h5 or self::h6][1]")  # ReadMe: a heading
_NEXTRA_COLOUR = re.compile(r"(?:^|\s)x:bg-(\w+)-\d+(?:\s|$)")
_NEXTRA_KINDS = {"green": "tip", "blue": "info", "yellow": "warning", "orange": "warning", "red": "error",
                 "purple": "important"}
_KINDS = ("note", "tip", "info", "hint", "important", "warning", "warn", "caution", "danger", "error", "success",
          "example", "seealso", "todo", "attention", "deprecated", "versionadded", "versionchanged")


def pick(doc: Any) -> Adapter | None:
    """The adapter for the generator that wrote `doc`, or None (the generic path)."""
    for adapter in ADAPTERS:
        if any(doc.xpath(x) for x in adapter.detect):
            return adapter
    return None


def remove_hidden(root: Any) -> None:
    """Drop what a reader cannot see; a tab panel hidden until clicked stays (it is visible on a click)."""
    doomed = []
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        if el.get("role") == "tabpanel" or (el.tag == "div" and _tab_block(el)):
            el.attrib.pop("hidden", None)
            continue
        if (el.get("hidden") is not None or (el.get("aria-hidden") == "true" and not _shown_title(el))
                or _HIDDEN_STYLE.search(el.get("style") or "")):
            doomed.append(el)
    for el in doomed:
        if el.getparent() is not None and not any(a in doomed for a in el.iterancestors()):
            el.drop_tree()


def _shown_title(el: Any) -> bool:
    """Starlight's callout title: on screen, hidden from screen readers only (the aside's label says it)."""
    return "starlight-aside__title" in (el.get("class") or "").split()


def _tab_block(el: Any) -> bool:
    return any(c in (el.get("class") or "").split() for c in ("tabbed-block", "tabItem"))


def breadcrumb(doc: Any, adapter: Adapter | None) -> list[str]:
    """The breadcrumb trail's labels, the site root ("Home", "Docs") left out."""
    paths = (adapter.breadcrumb if adapter else ()) + ("//nav[@aria-label='breadcrumb' or @aria-label='Breadcrumb' "
                                                       "or @aria-label='breadcrumbs' or @aria-label='Breadcrumbs']",)
    for path in paths:
        found = doc.xpath(path)
        if not found:
            continue
        nav = found[0]
        items = (nav.xpath(".//li[not(.//li)]") or nav.xpath(".//a | .//span[not(*)]")
                 or [c for c in nav if isinstance(c.tag, str)] or [nav])
        crumbs = []
        for item in items:
            text = " ".join(item.text_content().split()).strip(" /›>»|")
            if text and text.lower() not in ("home", "docs", "documentation") and len(text) <= 80:
                crumbs.append(text)
        if crumbs:
            return list(dict.fromkeys(crumbs))
    return []


def drop_chrome(doc: Any, adapter: Adapter | None) -> None:
    """Remove what the generator marks as chrome (edit links, version pickers, banners)."""
    for path in adapter.drop if adapter else ():
        for el in doc.xpath(path):
            if el.getparent() is not None:
                el.drop_tree()


def content_root(doc: Any, adapter: Adapter | None) -> Any:
    """The article root the adapter names (a common content id on other pages); None when none matches."""
    for path in adapter.content if adapter else GENERIC_CONTENT:
        found = doc.xpath(path)
        if found:
            return found[0]
    return None


def rewrite_tabs(doc: Any) -> None:
    """Each tab's panel, headed by `Tab: <label>`; the tab strip itself removed."""
    from lxml import html as lhtml

    for tablist in doc.xpath("//*[@role='tablist']"):
        tabs = tablist.xpath(".//*[@role='tab']")
        labels = [" ".join(t.text_content().split()) for t in tabs]
        panels = []
        for container in list(tablist.iterancestors())[:3]:  # the panels sit beside the strip, or near it
            panels = container.xpath(".//*[@role='tabpanel']")
            if panels:
                break
        if len(panels) == 1 and len(labels) > 1:  # only the open tab was rendered (Mintlify's code groups)
            chosen = next((i for i, t in enumerate(tabs) if t.get("aria-selected") == "true"), 0)
            labels = labels[chosen:chosen + 1]
        if not panels or len(panels) != len(labels):
            continue
        for label, panel in zip(labels, panels, strict=True):
            _label(panel, label, lhtml)
        tablist.drop_tree()
    for group in doc.xpath(f"//*[{_c('CodeTabs')}]"):  # ReadMe
        buttons = group.xpath(f"./*[{_c('CodeTabs-toolbar')}]/button")
        blocks = group.xpath(f"./*[{_c('CodeTabs-inner')}]/*")
        if len(buttons) != len(blocks):
            continue
        for button, block in zip(buttons, blocks, strict=True):
            pre = block if block.tag == "pre" else block.find(".//pre")
            if pre is not None and button.get("value") and not pre.get("data-lang"):
                pre.set("data-lang", button.get("value"))  # named only here until the page's script runs
            if len(buttons) > 1:
                _label(block, " ".join(button.text_content().split()), lhtml)
        for toolbar in group.xpath(f"./*[{_c('CodeTabs-toolbar')}]"):
            toolbar.drop_tree()
    for group in doc.xpath(f"//*[{_c('tabbed-set')}] | //*[{_c('vp-code-group')}] | //*[{_c('sd-tab-set')}]"):
        labels = [" ".join(lab.text_content().split()) for lab in group.xpath(".//label")]
        blocks = (group.xpath(f".//*[{_c('tabbed-block')}]") or group.xpath(f".//*[{_c('blocks')}]/*")
                  or group.xpath(f"./*[{_c('sd-tab-content')}]"))  # sphinx-design
        if len(labels) != len(blocks):
            continue
        for label, block in zip(labels, blocks, strict=True):
            _label(block, label, lhtml)
        for el in group.xpath(".//label | .//input"):
            el.drop_tree()


def _label(panel: Any, label: str, lhtml: Any) -> None:
    if label:
        p = lhtml.Element("p")
        p.text = f"Tab: {label}"
        if panel.tag == "pre":  # the panel is the code block itself: the label goes before it
            panel.addprevious(p)
        else:
            panel.insert(0, p)
            p.tail, panel.text = panel.text, None
    panel.attrib.pop("hidden", None)


def rewrite_callouts(doc: Any) -> None:
    """Callouts become `<blockquote>` opening with `Kind: title` (asides too, which trimming drops)."""
    from lxml import html as lhtml

    seen: set[Any] = set()
    for path in _CALLOUT:
        for el in doc.xpath(path):
            if el in seen or any(a in seen for a in el.iterancestors()):
                continue
            seen.add(el)
            kind = _kind(el)
            title_el = next((t for x in _CALLOUT_TITLE for t in el.xpath(x)), None)
            title = " ".join(title_el.text_content().split()) if title_el is not None else ""
            if title_el is not None:
                title_el.drop_tree()
            head = kind.capitalize() if kind else ""
            if title and title.lower() != kind:
                head = f"{head}: {title}" if head else title
            el.tag = "blockquote"
            for attr in list(el.attrib):
                del el.attrib[attr]
            if head:
                p = lhtml.Element("p")
                p.text = head + ":"
                p.tail, el.text = el.text, None
                el.insert(0, p)


def _kind(el: Any) -> str:
    words = " ".join([el.get("data-callout-type") or "", el.get("data-hint-style") or "", el.get("class") or ""])
    for token in re.split(r"[\s_-]+", words.lower()):
        if token in _KINDS:
            return token
    colour = _NEXTRA_COLOUR.search(words) if "nextra-callout" in words else None  # Nextra says it in colour only
    return _NEXTRA_KINDS.get(colour.group(1), "") if colour else ""
