"""The build pipeline: a fetched source becomes a package file.

sources (Fetched) -> parse (Documents) -> chunk (Chunks) -> embed, count BM25 terms -> dedupe
-> package. Every stage is a plain function; this module only wires them and counts what
happened. Everything up to the dedupe is per page and runs where the page is parsed (in one
worker process per core for a big tree, build_pages.py); this process dedupes and writes.

Rebuilds are incremental when the caller names the previous package of the same identity
(`BuildOptions.previous`): a page whose content hash is unchanged is neither parsed nor
chunked nor embedded again; its chunks (and vectors, if the same embedding model
fingerprint made them) are copied from the old file. Reuse is all-or-nothing per page and
only trusted from a package this same builder version wrote; a page that lost a section to
cross-page dedupe (meta `deduped_pages`) is always rebuilt, because the section it lost may
no longer be a duplicate.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .apiref.autodoc import Expander
from .apiref.extract import ApiReading, summary
from .apiref.pages import api_documents, section_ids
from .build_pages import PageWork, Pool, build_pages, chunk_terms, page_pool
from .build_pages import Progress as Progress  # (stage, done, total); adding and registry use it
from .chunk.chunker import content_key, dedupe
from .document import Chunk, Document
from .errors import ContextError, SourceError
from .package import bm25
from .package.identity import PackageId, check_identity
from .package.reader import open_package
from .package.schema import PageRecord
from .package.vectors import QualitySet
from .package.writer import content_hash, fill_package, write_package
from .parse.includes import may_include
from .parse.module_prefixes import ModulePrefixes
from .parse.ref_titles import RefTitles
from .parse.sphinx_conf import SphinxConf
from .sources.base import Fetched
from .sources.folder import Discovered, discover, links_note

if TYPE_CHECKING:
    import numpy as np

    from .embed.model import Embedder
    from .embed.quality import QualitySettings, TextEmbedder

@dataclass
class BuildResult:
    path: Path
    id: PackageId
    pages: int
    chunks: int
    tokens: int
    skipped: int
    seconds: float
    embedding_model: str | None
    notes: list[str] = field(default_factory=list)
    reused_pages: int = 0  # pages copied from BuildOptions.previous instead of rebuilt
    symbols: int = 0  # API entries read from the release's code (the `symbols` table)


@dataclass
class BuildOptions:
    name: str | None = None
    version: str | None = None
    registry: str = "local"
    path: str | None = None  # --path inside the source
    lang: str | None = None
    description: str | None = None
    embed: bool = True
    embed_model: str | None = None  # a model spec for load_model; None = configured default
    previous: Path | None = None  # an earlier package of this identity: unchanged pages are reused
    quality: bool | None = None  # also the second vector set (embed/quality.py); None: as config.json says
    api: bool = True  # read the source's code for its API reference (context_cli/apiref), where it has code


def build(fetched: Fetched, dest: Path, opts: BuildOptions, progress: Progress | None = None,
          *, in_place: bool = False) -> BuildResult:
    """Build `fetched` into the package file `dest`: written atomically, or, with `in_place`,
    straight into `dest`, a fresh temp file the caller owns and renames itself."""
    start = time.perf_counter()
    name = opts.name or fetched.name
    version = opts.version or fetched.version
    if not name:
        raise SourceError("cannot tell the package name; pass --name")
    if not version:
        raise SourceError("cannot tell the package version; pass --pkg-version")
    pid = check_identity(opts.registry, name, version)
    found_files = _discover(fetched, opts)
    # A fresh build starts its workers first: their imports and model loading overlap with
    # ours. A rebuild starts them only if enough pages changed.
    with page_pool(len(found_files.files) if found_files else 0, opts.embed_model, embed=opts.embed,
                   start=opts.previous is None) as pool:
        model = _load_model(opts.embed_model) if opts.embed else None
        prev = _Previous.load(opts.previous, model.fingerprint if model else None) if opts.previous else None
        # A worker reads the API while the others parse pages (a rebuild starts its workers
        # only for enough changed pages: then it is read here).
        reading = ApiReading(fetched, registry=pid.registry, name=pid.name, version=pid.version,
                             workers=pool if opts.previous is None else None) if opts.api else None
        expander = Expander(reading.symbols if reading is not None else ())
        found = _collect(fetched, found_files, progress, prev, model, pool, expander if reading is not None else None)
        api = reading.result() if reading is not None else None
        api_pages: dict[str, str] = {}
        if api is not None:
            have = {p.doc_path for p in found.pages}
            docs = [d for d in api_documents(api, expander.shown, docs_pages=len(have)) if d.path not in have]
            _add_documents(found, docs, prev, model)
            api_pages = {d.path: d.title for d in docs}
    kept = dedupe(s.key for s in found.sections)
    sections = [found.sections[i] for i in kept]
    chunks = [s.chunk for s in sections]
    symbols = None
    if api is not None and not api.skipped:
        ids = section_ids(api.symbols, enumerate(chunks, start=1), api_pages, expander.shown)
        symbols = list(zip(api.symbols, ids, strict=True))
    if not chunks:
        raise SourceError("no documentation found in the source (no parsable docs files)")
    deduped_pages = _lost_to_other_pages(found.sections, kept)
    meta = {
        "name": pid.name, "version": pid.version, "registry": pid.registry,
        "description": opts.description or fetched.description or "",
        "source_type": fetched.source_type, "source_url": fetched.source_url,
        "source_commit": fetched.source_commit,
        "deduped_pages": json.dumps(deduped_pages) if deduped_pages else None,
        **fetched.meta,
    }
    vectors, model_name = None, None
    if model is not None:
        vectors = _vectors(sections, model)
        meta.update(model_meta(model))
        model_name = model.name
    quality = _quality_set(chunks, opts, progress)
    write = fill_package if in_place else write_package
    write(dest, meta, chunks, vectors=vectors, pages=found.pages, counted=found.counted(kept), quality=quality,
          symbols=symbols)
    return BuildResult(
        path=dest, id=pid, pages=len(found.pages), chunks=len(chunks),
        tokens=sum(c.tokens for c in chunks), skipped=found.skipped,
        seconds=time.perf_counter() - start, embedding_model=model_name,
        notes=list(fetched.notes) + (summary(api) if api is not None else []), symbols=len(symbols or ()),
        reused_pages=found.reused_pages,
    )


@dataclass
class _Section:
    """A chunk in reading order, with its `content_key` and its vector when the build has vectors."""

    chunk: Chunk
    key: bytes
    vector: np.ndarray | None = None


@dataclass
class _Collected:
    """Everything the pages of a source gave: sections in reading order, one record per
    page, the BM25 terms of runs of sections (a page's, or a batch of pages'), and counts of
    pages that failed and of pages reused from the previous build."""

    sections: list[_Section] = field(default_factory=list)
    pages: list[PageRecord] = field(default_factory=list)
    terms: list[tuple[bm25.TermCounts, int, int]] = field(default_factory=list)  # (terms, first, end section)
    skipped: int = 0
    reused_pages: int = 0

    def add_page(self, record: PageRecord, work: PageWork) -> None:
        vectors = work.vectors if work.vectors is not None else [None] * len(work.chunks)
        self._add(record, [_Section(c, k, v) for c, k, v in zip(work.chunks, work.keys, vectors, strict=True)],
                  work.terms)

    def reuse_page(self, record: PageRecord, old: _OldPage) -> None:
        self._add(record, old.sections(), chunk_terms([c for c, _ in old.chunks]))
        self.reused_pages += 1

    def _add(self, record: PageRecord, sections: list[_Section], terms: bm25.TermCounts) -> None:
        self.pages.append(record)
        self.terms.append((terms, len(self.sections), len(self.sections) + len(sections)))
        self.sections.extend(sections)

    def counted(self, kept: list[int]) -> bm25.Counted:
        """Each run's BM25 terms with the package ids of its sections: those at `kept`
        positions are numbered 1.. in that order, the others (dupes) 0."""
        import numpy as np

        ids = np.zeros(len(self.sections), dtype=np.int64)
        ids[kept] = np.arange(1, len(kept) + 1)
        return [(terms, ids[lo:hi]) for terms, lo, hi in self.terms]


def _lost_to_other_pages(found: list[_Section], kept: list[int]) -> list[str]:
    """Pages that lost a section to a copy on another page (same-page copies are harmless:
    the page is rebuilt whenever it changes). Unknown owners count as other pages."""
    kept_set = set(kept)
    owner = {found[i].key: found[i].chunk.doc_path for i in kept}
    return sorted({s.chunk.doc_path for i, s in enumerate(found)
                   if i not in kept_set and owner.get(s.key) != s.chunk.doc_path})


def _load_model(spec: str | None) -> Embedder:
    from .embed.model import load_model

    return load_model(spec)


def _vectors(sections: list[_Section], model: Embedder) -> np.ndarray:
    """One row per section: made with its page, or reused from the previous package."""
    import numpy as np

    if not sections:
        return np.zeros((0, model.dim), dtype=np.float32)
    return np.vstack([s.vector for s in sections if s.vector is not None])


def _quality_set(chunks: list[Chunk], opts: BuildOptions, progress: Progress | None) -> QualitySet | None:
    """The second vector set when asked for (`--quality`, or config.json's quality.build):
    sections of the previous build with the same text and source keep their vectors, the
    others are embedded in batches (with progress). An unusable source fails the build with
    its one-line reason (ModelUnavailable, EndpointError)."""
    from .embed.quality import build_embedder, load_settings, quality_text

    settings = load_settings()
    if not (settings.build if opts.quality is None else opts.quality):
        return None
    embedder = build_embedder(settings)
    old = _previous_quality(opts.previous, settings, embedder)
    if old and len(next(iter(old.values()))) != embedder.dim:  # (an endpoint's model now answers another size)
        old = {}
    keys = [(c.doc_path, c.section_title, c.content) for c in chunks]
    todo = [i for i, k in enumerate(keys) if k not in old]
    rows: dict[int, np.ndarray] = {}
    for start in range(0, len(todo), QUALITY_BATCH):
        part = todo[start:start + QUALITY_BATCH]
        rows.update(zip(part, embedder.encode([quality_text(chunks[i]) for i in part]), strict=True))
        if progress:
            progress("quality vectors", start + len(part), len(todo))
    import numpy as np

    matrix = np.vstack([rows[i] if i in rows else old[k] for i, k in enumerate(keys)])
    return QualitySet(matrix, settings.source, embedder.name, embedder.fingerprint, prefixes=settings.prefixes)


QUALITY_BATCH = 256  # sections per progress step of the quality set


def _previous_quality(previous: Path | None, settings: QualitySettings, embedder: TextEmbedder
                      ) -> dict[tuple[str, str, str], np.ndarray]:
    """(page, title, text) -> quality vector, from a previous package whose set the same source
    and model made (by fingerprint where it has one, with the same document prefix); empty
    otherwise."""
    if previous is None:
        return {}
    try:
        with open_package(previous) as pkg:
            meta = pkg.meta
            if not pkg.has_quality or (meta.get("quality_source"), meta.get("quality_model"),
                                       meta.get("quality_fingerprint", ""), meta.get("quality_document_prefix", "")
                                       ) != (settings.source, embedder.name, embedder.fingerprint, settings.prefixes[1]):
                return {}
            ids, matrix = pkg.quality_vectors()
            row = {int(cid): r for r, cid in enumerate(ids)}
            return {(c.doc_path, c.section_title, c.content): matrix[row[cid]]
                    for cid, c in pkg.chunks() if cid in row}
    except ContextError:  # an unreadable previous file just means embedding every section
        return {}


def model_meta(model: Embedder) -> dict[str, str]:
    """The meta keys that name a package's embedding model (search finds it by them)."""
    return {"embedding_model": model.name, "embedding_fingerprint": model.fingerprint}


def _discover(fetched: Fetched, opts: BuildOptions) -> Discovered | None:
    """The docs files of a folder source (None for a source of ready-made documents)."""
    if fetched.documents is not None:
        return None
    if fetched.folder is None:
        raise SourceError("the source has no documents")
    found = discover(fetched.folder, path=opts.path or fetched.docs_path, lang=opts.lang)
    if found.narrowed_to:
        fetched.notes.append(f"indexed the project's {found.narrowed_to}/ folder (use --path to choose another)")
    if found.skipped_links:
        fetched.notes.append(links_note(found.skipped_links))
    return found


def _collect(fetched: Fetched, found: Discovered | None, progress: Progress | None, prev: _Previous | None,
             model: Embedder | None, pool: Pool | None, expander: Expander | None = None) -> _Collected:
    """The sections of every page in order, taken from `prev` for unchanged pages; autodoc and
    mkdocstrings directives filled by `expander` (the release's API) first."""
    out = _Collected(skipped=fetched.skipped)
    if found is None:
        _add_documents(out, fetched.documents or (), prev, model)
        return out
    pages = []  # (rel, data) of the files that could be read
    for file in found.files:
        try:
            pages.append((file.relative_to(found.root).as_posix(), file.read_bytes()))
        except OSError:
            out.skipped += 1
    refs = RefTitles.of_pages(pages)
    conf = SphinxConf.of_tree(found.root, (rel for rel, _ in pages))
    prefixes = ModulePrefixes.of(conf)
    if expander is not None:
        expander.use_conf(conf)
    files = []  # (rel, data, digest, old page or None)
    for rel, data in pages:
        if expander is not None:
            data = expander.expand(rel, data)
        data = prefixes.titled(rel, refs.titled(rel, data))
        digest = content_hash(data)
        # A page that includes other files is always rebuilt: what it includes may have changed.
        files.append((rel, data, digest, prev.take(rel, digest) if prev and not may_include(data) else None))
    todo = [(rel, data) for rel, data, _, old in files if old is None]
    parsed = iter(build_pages(todo, model, pool, progress, root=str(found.root)))
    for rel, _, digest, old in files:
        if old is not None:
            out.reuse_page(PageRecord(rel, old.title, old.url, digest, old.kind), old)
            continue
        page = next(parsed)
        if isinstance(page, Exception):
            out.skipped += 1
        elif page is not None:
            out.add_page(PageRecord(rel, page.title, page.url, digest, page.kind), page)
    return out


def _add_documents(out: _Collected, docs: Iterable[Document], prev: _Previous | None, model: Embedder | None) -> None:
    """Ready-made pages, each reused from `prev` when unchanged, else chunked here; their new
    sections embedded, and all their sections counted, in one call each (Django's 391
    reference pages: a call a page cost more than the work itself)."""
    from .chunk.chunker import chunk_document

    first, fresh = len(out.sections), []
    for doc in docs:
        record = PageRecord(doc.path, doc.title, doc.url, content_hash(_doc_text(doc)), doc.kind)
        old = prev.take(doc.path, record.content_hash) if prev else None
        if old is not None:
            out.sections.extend(old.sections())
            out.reused_pages += 1
        else:
            new = [_Section(c, content_key(c.content)) for c in chunk_document(doc)]
            out.sections.extend(new)
            fresh.extend(new)
        out.pages.append(record)
    if model is not None and fresh:
        from .embed.text import embed_text

        for s, v in zip(fresh, model.encode([embed_text(s.chunk) for s in fresh]), strict=True):
            s.vector = v
    if len(out.sections) > first:
        out.terms.append((chunk_terms([s.chunk for s in out.sections[first:]]), first, len(out.sections)))


@dataclass
class _OldPage:
    title: str
    url: str | None
    kind: str
    chunks: list[tuple[Chunk, np.ndarray | None]]  # (chunk, float32 vector or None)

    def sections(self) -> list[_Section]:
        return [_Section(c, content_key(c.content), v) for c, v in self.chunks]


class _Previous:
    """What an earlier build of the same package offers for reuse, page by page."""

    def __init__(self, pages: list[PageRecord], chunks: dict[str, list[tuple[Chunk, np.ndarray | None]]],
                 deduped: set[str], vectors_ok: bool) -> None:
        self.pages = {p.doc_path: p for p in pages}
        self.chunks = chunks  # doc_path -> [(Chunk, vector | None)]
        self.deduped = deduped
        self.vectors_ok = vectors_ok

    @classmethod
    def load(cls, path: Path, fingerprint: str | None) -> _Previous | None:
        """None when the file is missing, unreadable, from another builder, or has no pages.

        With `fingerprint` set (embedding on), pages are reusable only if the old package's
        vectors came from that exact model; otherwise their chunks would need re-embedding
        and their dense text (`embed_hint`) is not stored, so they are rebuilt instead.
        """
        from .version import __version__

        try:
            pkg = open_package(Path(path))
        except ContextError:  # a bad previous file just means a full build
            return None
        try:
            meta = pkg.meta
            if meta.get("builder") != f"context {__version__}" or not pkg.has_pages:
                return None
            if fingerprint is not None and not (pkg.has_vectors and meta.get("embedding_fingerprint") == fingerprint):
                return None
            try:
                deduped = set(json.loads(meta.get("deduped_pages") or "[]"))
            except ValueError:
                return None
            vecs: dict[int, np.ndarray] = {}
            if fingerprint is not None:
                ids, matrix = pkg.vectors()
                vecs = dict(zip(ids.tolist(), matrix, strict=True))
            chunks: dict[str, list[tuple[Chunk, np.ndarray | None]]] = {}
            for cid, chunk in pkg.chunks():
                chunks.setdefault(chunk.doc_path, []).append((chunk, vecs.get(cid)))
            return cls(pkg.pages(), chunks, deduped, fingerprint is not None)
        except ContextError:  # an odd previous file just means a full build
            return None
        finally:
            pkg.close()

    def take(self, doc_path: str, digest: str) -> _OldPage | None:
        """The page's old chunks if its content is unchanged and they are safe to reuse."""
        old = self.pages.get(doc_path)
        if old is None or old.content_hash != digest or doc_path in self.deduped:
            return None
        chunks = self.chunks.get(doc_path, [])
        if self.vectors_ok and any(v is None for _, v in chunks):
            return None
        return _OldPage(title=old.doc_title, url=old.url, kind=old.kind, chunks=chunks)


def _doc_text(doc: Document) -> str:
    """Everything of a ready-made page that shapes its chunks (for its content hash)."""
    head = "\n".join((doc.title, doc.url or "", doc.embed_hint or "", doc.description, doc.kind))
    return head + "\n" + "\n".join(f"{b.level}{b.title}\n{b.text}" for b in doc.blocks)
