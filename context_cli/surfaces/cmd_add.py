"""`context add SOURCE`: build a package from docs, or install a `.db`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..adding import AddRequest, add_source
from ..store.store import Store
from .progress import progress_bar
from .render import echo


@click.command("add")
@click.argument("source")
@click.option("--name", help="Package name (default: from the source).")
@click.option("--pkg-version", "version", help="Package version (default: from the source, else 'latest').")
@click.option("--registry", default="local", show_default=True, help="Registry namespace: npm, pip, ...")
@click.option("--path", "path", help="Only index this sub-folder of the source.")
@click.option("--tag", help="Git tag or ref to build (git sources); the docs version to build (websites).")
@click.option("--lang", help="Include docs in this locale folder (e.g. fr, zh-CN).")
@click.option("--description", help="One-line description stored in the package.")
@click.option("--save", "save", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the package file here, to share it.")
@click.option("--no-embed", is_flag=True, help="Skip embeddings (lexical search only).")
@click.option("--model", "model", help="Embedding model: a folder or a model2vec hub id.")
@click.option("--quality/--no-quality", default=None,
              help="Also embed with the quality model (all-MiniLM-L6-v2; needs context-docs[quality]) or the "
                   "configured embeddings endpoint: slower to build, better dense search.")
@click.option("--no-api", is_flag=True,
              help="Do not read the API reference from the code (a release, or a folder or repository that is "
                   "a Python package or ships TypeScript declarations).")
@click.option("--replace", is_flag=True, help="Replace a package of the same identity installed from a registry.")
@click.option("--max-pages", type=click.IntRange(min=1), help="Websites: fetch at most this many pages (default 500).")
@click.option("--browser/--no-browser", "browser", default=None,
              help="Websites: render every page with the installed chromium, or never (default: only "
                   "pages that need JavaScript).")
def add(source: str, name: str | None, version: str | None, registry: str, path: str | None,
        tag: str | None, lang: str | None, description: str | None, save: Path | None,
        no_embed: bool, model: str | None, quality: bool | None, no_api: bool, replace: bool,
        max_pages: int | None, browser: bool | None) -> None:
    """Build a package from SOURCE and install it.

    SOURCE is a folder, a git URL (https://, ssh://, git@, file://, .../tree/REF), a
    website or llms.txt URL, an OpenAPI file or URL, pypi:NAME[==VER], npm:NAME[@VER],
    or a .db package file or URL.
    """
    request = AddRequest(
        source=source, name=name, version=version, registry=registry, path=path, tag=tag,
        lang=lang, description=description, save=save, embed=not no_embed, model=model,
        interactive=sys.stdin.isatty(), quality=quality, max_pages=max_pages,
        browser={None: "auto", True: "always", False: "never"}[browser], api=not no_api,
    )
    with progress_bar() as bars:
        result = add_source(request, store=Store(replace=replace), progress=bars.stage if bars else None)
    for note in result.notes:
        echo(note, err=True)
    echo(result.summary())
