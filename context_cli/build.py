"""The build pipeline: a fetched source becomes a package file.

sources (Fetched) -> parse (Documents) -> chunk (Chunks, deduped) -> embed -> package.
Every stage is a plain function; this module only wires them and counts what happened.

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
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .chunk.chunker import chunk_document, dedupe
from .document import Chunk, Document
from .errors import ContextError, SourceError
from .package.identity import PackageId, check_identity
from .package.reader import open_package
from .package.schema import PageRecord
from .package.writer import content_hash, fill_package, write_package
from .sources.base import Fetched
from .sources.folder import discover

if TYPE_CHECKING:
    import numpy as np

    from .embed.model import Embedder

Progress = Callable[[str, int, int], None]  # (stage, done, total)


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
    model = _load_model(opts.embed_model) if opts.embed else None
    prev = _Previous.load(opts.previous, model.fingerprint if model else None) if opts.previous else None
    found = _collect(fetched, opts, progress, prev)
    kept = dedupe(s.chunk for s in found.sections)
    sections = [found.sections[i] for i in kept]
    chunks = [s.chunk for s in sections]
    if not chunks:
        raise SourceError("no documentation found in the source (no parsable docs files)")
    deduped_pages = _lost_to_other_pages(found.sections, kept)
    meta = {
        "name": pid.name, "version": pid.version, "registry": pid.registry,
        "description": opts.description or fetched.description or "",
        "source_type": fetched.source_type, "source_url": fetched.source_url,
        "source_commit": fetched.source_commit,
        "deduped_pages": json.dumps(deduped_pages) if deduped_pages else None,
    }
    vectors, model_name = None, None
    if model is not None:
        vectors = _vectors(sections, model, progress)
        meta.update({"embedding_model": model.name, "embedding_fingerprint": model.fingerprint})
        model_name = model.name
    write = fill_package if in_place else write_package
    write(dest, meta, chunks, vectors=vectors, pages=found.pages)
    return BuildResult(
        path=dest, id=pid, pages=len(found.pages), chunks=len(chunks),
        tokens=sum(c.tokens for c in chunks), skipped=found.skipped,
        seconds=time.perf_counter() - start, embedding_model=model_name, notes=list(fetched.notes),
        reused_pages=found.reused_pages,
    )


@dataclass
class _Section:
    """A chunk in reading order, with its vector when an earlier build's can be reused."""

    chunk: Chunk
    vector: np.ndarray | None = None


@dataclass
class _Collected:
    """Everything the pages of a source gave: sections in reading order, one record per
    page, and counts of pages that failed and of pages reused from the previous build."""

    sections: list[_Section] = field(default_factory=list)
    pages: list[PageRecord] = field(default_factory=list)
    skipped: int = 0
    reused_pages: int = 0

    def add_page(self, record: PageRecord, chunks: Iterable[Chunk]) -> None:
        self.pages.append(record)
        self.sections.extend(_Section(c) for c in chunks)

    def reuse_page(self, record: PageRecord, old: _OldPage) -> None:
        self.pages.append(record)
        self.sections.extend(_Section(c, v) for c, v in old.chunks)
        self.reused_pages += 1


def _lost_to_other_pages(found: list[_Section], kept: list[int]) -> list[str]:
    """Pages that lost a section to a copy on another page (same-page copies are harmless:
    the page is rebuilt whenever it changes). Unknown owners count as other pages."""
    kept_set = set(kept)
    owner = {" ".join(found[i].chunk.content.split()): found[i].chunk.doc_path for i in kept}
    return sorted({s.chunk.doc_path for i, s in enumerate(found)
                   if i not in kept_set and owner.get(" ".join(s.chunk.content.split())) != s.chunk.doc_path})


def _load_model(spec: str | None) -> Embedder:
    from .embed.model import load_model

    return load_model(spec)


def _vectors(sections: list[_Section], model: Embedder, progress: Progress | None) -> np.ndarray:
    """One row per section: reused rows where the previous package had them, the rest embedded."""
    import numpy as np

    matrix = np.zeros((len(sections), model.dim), dtype=np.float32)
    todo = []
    for i, s in enumerate(sections):
        if s.vector is None:
            todo.append(i)
        else:
            matrix[i] = s.vector
    if todo:
        fresh, _ = embed_chunks([sections[i].chunk for i in todo], None, progress, model=model)
        matrix[todo] = fresh
    return matrix


def embed_chunks(chunks: list[Chunk], model_spec: str | None, progress: Progress | None = None,
                 batch: int = 1024, *, model: Embedder | None = None) -> tuple[np.ndarray, dict[str, str]]:
    """Embed every chunk's dense text; returns the matrix and the meta keys naming the model."""
    import numpy as np

    from .embed.text import embed_text

    model = model or _load_model(model_spec)
    texts = [embed_text(c) for c in chunks]
    parts = []
    for i in range(0, len(texts), batch):
        parts.append(model.encode(texts[i:i + batch]))
        if progress:
            progress("embedding", min(i + batch, len(texts)), len(texts))
    matrix = np.vstack(parts) if parts else np.zeros((0, model.dim), dtype=np.float32)
    return matrix, {"embedding_model": model.name, "embedding_fingerprint": model.fingerprint}


def _collect(fetched: Fetched, opts: BuildOptions, progress: Progress | None, prev: _Previous | None) -> _Collected:
    """The sections of every page in order, taken from `prev` for unchanged pages."""
    out = _Collected(skipped=fetched.skipped)
    if fetched.documents is not None:
        for doc in fetched.documents:
            record = PageRecord(doc.path, doc.title, doc.url, content_hash(_doc_text(doc)))
            old = prev.take(doc.path, record.content_hash) if prev else None
            if old is not None:
                out.reuse_page(record, old)
            else:
                out.add_page(record, chunk_document(doc))
        return out
    if fetched.folder is None:
        raise SourceError("the source has no documents")
    found = discover(fetched.folder, path=opts.path or fetched.docs_path, lang=opts.lang)
    if found.narrowed_to:
        fetched.notes.append(f"indexed the project's {found.narrowed_to}/ folder (use --path to choose another)")
    files = []  # (rel, data, digest, old page or None)
    for file in found.files:
        rel = file.relative_to(found.root).as_posix()
        try:
            data = file.read_bytes()
        except OSError:
            out.skipped += 1
            continue
        digest = content_hash(data)
        files.append((rel, data, digest, prev.take(rel, digest) if prev else None))
    todo = [(rel, data) for rel, data, _, old in files if old is None]
    parsed = iter(parse_many(todo, progress))
    for rel, _, digest, old in files:
        if old is not None:
            out.reuse_page(PageRecord(rel, old.title, old.url, digest), old)
            continue
        parsed_doc = next(parsed)
        if isinstance(parsed_doc, Exception):
            out.skipped += 1
        elif parsed_doc is not None:
            out.add_page(PageRecord(rel, parsed_doc.title, parsed_doc.url, digest), chunk_document(parsed_doc))
    return out


PARALLEL_MIN_FILES = 64


Parsed = Document | None | Exception  # a page, not a docs page, or why it failed


def parse_many(items: list[tuple[str, bytes]], progress: Progress | None = None) -> list[Parsed]:
    """Parse (rel_path, bytes) pairs in order: a Document, None (not docs) or the Exception.

    Parsing (docutils above all) is the slow stage of a build, so big trees use one worker
    process per core; small ones stay in-process, where a pool would cost more than it saves.
    """
    workers = min(os.cpu_count() or 1, 8)
    if len(items) >= PARALLEL_MIN_FILES and workers > 1:
        try:
            return _parse_in_pool(items, workers, progress)
        except (OSError, RuntimeError):  # BrokenProcessPool is a RuntimeError: parse here instead
            pass
    results = []
    for n, item in enumerate(items, start=1):
        results.append(_parse_one(item))
        if progress:
            progress("parsing", n, len(items))
    return results


def _parse_in_pool(items: list[tuple[str, bytes]], workers: int, progress: Progress | None) -> list[Parsed]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawn, not fork: the caller may hold threads (a progress bar, an MCP server).
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = []
        for n, result in enumerate(pool.map(_parse_one, items, chunksize=8), start=1):
            results.append(result)
            if progress:
                progress("parsing", n, len(items))
        return results


def _parse_one(item: tuple[str, bytes]) -> Parsed:
    from .parse import parse_file

    try:
        return parse_file(*item)
    except Exception as e:  # noqa: BLE001 - one bad file must never abort the build
        return e


@dataclass
class _OldPage:
    title: str
    url: str | None
    chunks: list[tuple[Chunk, np.ndarray | None]]  # (chunk, float32 vector or None)


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
        return _OldPage(title=old.doc_title, url=old.url, chunks=chunks)


def _doc_text(doc: Document) -> str:
    """Everything of a ready-made page that shapes its chunks (for its content hash)."""
    head = "\n".join((doc.title, doc.url or "", doc.embed_hint or "", doc.description))
    return head + "\n" + "\n".join(f"{b.level}{b.title}\n{b.text}" for b in doc.blocks)
