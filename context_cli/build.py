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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .chunk.chunker import chunk_document, dedupe
from .document import Chunk, Document
from .errors import SourceError
from .package.identity import PackageId, check_identity
from .package.writer import PageRecord, content_hash, write_package
from .sources.base import Fetched
from .sources.folder import discover

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


def build(fetched: Fetched, dest: Path, opts: BuildOptions, progress: Progress | None = None) -> BuildResult:
    """Build `fetched` into the package file `dest` (written atomically)."""
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
    pages: list[PageRecord] = []
    skipped = [fetched.skipped]
    reused: dict[int, Any] = {}  # id(chunk) -> its previous vector (None when not reusable)
    found = list(_page_chunks(fetched, opts, pages, skipped, progress, prev, reused))
    chunks = list(dedupe(found))
    if not chunks:
        raise SourceError("no documentation found in the source (no parsable docs files)")
    deduped_pages = _lost_to_other_pages(found, chunks)
    meta = {
        "name": pid.name, "version": pid.version, "registry": pid.registry,
        "description": opts.description or fetched.description or "",
        "source_type": fetched.source_type, "source_url": fetched.source_url,
        "source_commit": fetched.source_commit,
        "deduped_pages": json.dumps(deduped_pages) if deduped_pages else None,
    }
    vectors, model_name = None, None
    if model is not None:
        vectors = _vectors(chunks, model, reused, progress)
        meta.update({"embedding_model": model.name, "embedding_fingerprint": model.fingerprint})
        model_name = model.name
    write_package(dest, meta, chunks, vectors=vectors, pages=pages)
    return BuildResult(
        path=dest, id=pid, pages=len(pages), chunks=len(chunks),
        tokens=sum(c.tokens for c in chunks), skipped=skipped[0],
        seconds=time.perf_counter() - start, embedding_model=model_name, notes=list(fetched.notes),
        reused_pages=prev.reused if prev else 0,
    )


def _lost_to_other_pages(found: list[Chunk], kept: list[Chunk]) -> list[str]:
    """Pages that lost a section to a copy on another page (same-page copies are harmless:
    the page is rebuilt whenever it changes). Unknown owners count as other pages."""
    kept_ids = {id(c) for c in kept}
    owner = {" ".join(c.content.split()): c.doc_path for c in kept}
    return sorted({c.doc_path for c in found
                   if id(c) not in kept_ids and owner.get(" ".join(c.content.split())) != c.doc_path})


def _load_model(spec: str | None):
    from .embed.model import load_model

    return load_model(spec)


def _vectors(chunks: list[Chunk], model, reused: dict[int, Any], progress: Progress | None):
    """One row per chunk: reused rows where the previous package had them, the rest embedded."""
    import numpy as np

    todo = [i for i, c in enumerate(chunks) if reused.get(id(c)) is None]
    matrix = np.zeros((len(chunks), model.dim), dtype=np.float32)
    for i, c in enumerate(chunks):
        row = reused.get(id(c))
        if row is not None:
            matrix[i] = row
    if todo:
        fresh, _ = embed_chunks([chunks[i] for i in todo], None, progress, model=model)
        matrix[todo] = fresh
    return matrix


def embed_chunks(chunks: list[Chunk], model_spec: str | None,
                 progress: Progress | None = None, batch: int = 1024, *, model=None):
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


def _page_chunks(fetched: Fetched, opts: BuildOptions, pages: list[PageRecord], skipped: list[int],
                 progress: Progress | None, prev: _Previous | None,
                 reused: dict[int, Any]) -> Iterator[Chunk]:
    """Chunks of every page in order, taken from `prev` for unchanged pages.

    Records one PageRecord per page and counts pages that fail to read or parse.
    """
    if fetched.documents is not None:
        for doc in fetched.documents:
            digest = content_hash(_doc_text(doc))
            pages.append(PageRecord(doc.path, doc.title, doc.url, digest))
            old = prev.take(doc.path, digest) if prev else None
            if old is not None:
                yield from _reuse(old, reused)
            else:
                yield from chunk_document(doc)
        return
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
            skipped[0] += 1
            continue
        digest = content_hash(data)
        files.append((rel, data, digest, prev.take(rel, digest) if prev else None))
    todo = [(rel, data) for rel, data, _, old in files if old is None]
    parsed = iter(parse_many(todo, progress))
    for rel, _, digest, old in files:
        if old is not None:
            pages.append(PageRecord(rel, old.title, old.url, digest))
            yield from _reuse(old, reused)
            continue
        doc = next(parsed)
        if isinstance(doc, Exception):
            skipped[0] += 1
            continue
        if doc is None:
            continue
        pages.append(PageRecord(rel, doc.title, doc.url, digest))
        yield from chunk_document(doc)


PARALLEL_MIN_FILES = 64


def parse_many(items: list[tuple[str, bytes]], progress: Progress | None = None) -> list:
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


def _parse_in_pool(items: list[tuple[str, bytes]], workers: int, progress: Progress | None) -> list:
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


def _parse_one(item: tuple[str, bytes]):
    from .parse import parse_file

    try:
        return parse_file(*item)
    except Exception as e:  # noqa: BLE001 - one bad file must never abort the build
        return e


def _reuse(old: _OldPage, reused: dict[int, Any]) -> Iterator[Chunk]:
    for chunk, vector in old.chunks:
        reused[id(chunk)] = vector
        yield chunk


@dataclass
class _OldPage:
    title: str
    url: str | None
    chunks: list[tuple[Chunk, Any]]  # (chunk, float32 vector or None)


class _Previous:
    """What an earlier build of the same package offers for reuse, page by page."""

    def __init__(self, hashes: dict[str, tuple[str, str, str | None]], chunks: dict[str, list],
                 deduped: set[str], vectors_ok: bool):
        self.hashes = hashes  # doc_path -> (content_hash, title, url)
        self.chunks = chunks  # doc_path -> [(Chunk, vector | None)]
        self.deduped = deduped
        self.vectors_ok = vectors_ok
        self.reused = 0

    @classmethod
    def load(cls, path: Path, fingerprint: str | None) -> _Previous | None:
        """None when the file is missing, unreadable, from another builder, or has no pages.

        With `fingerprint` set (embedding on), pages are reusable only if the old package's
        vectors came from that exact model; otherwise their chunks would need re-embedding
        and their dense text (`embed_hint`) is not stored, so they are rebuilt instead.
        """
        from . import __version__
        from .package.reader import open_package
        from .package.vectors import decode

        try:
            pkg = open_package(Path(path))
        except Exception:  # noqa: BLE001 - a bad previous file just means a full build
            return None
        try:
            meta = pkg.meta
            if meta.get("builder") != f"context {__version__}":
                return None
            tables = {r[0] for r in pkg.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "pages" not in tables:
                return None
            if fingerprint is not None and not (pkg.has_vectors and meta.get("embedding_fingerprint") == fingerprint):
                return None
            hashes = {p: (h, t, u) for p, t, u, h in
                      pkg.db.execute("SELECT doc_path, doc_title, url, content_hash FROM pages")}
            vecs: dict[int, Any] = {}
            if fingerprint is not None:
                rows = pkg.db.execute("SELECT chunk_id, vector FROM vectors ORDER BY chunk_id").fetchall()
                if rows:
                    matrix = decode([b for _, b in rows], meta.get("embedding_dtype", "int8"),
                                    int(meta["embedding_dim"]))
                    vecs = {cid: matrix[i] for i, (cid, _) in enumerate(rows)}
            chunks: dict[str, list] = {}
            for cid, dp, dt, st, content, tokens, has_code, url in pkg.db.execute(
                    "SELECT id, doc_path, doc_title, section_title, content, tokens, has_code, url"
                    " FROM chunks ORDER BY id"):
                chunk = Chunk(doc_path=dp, doc_title=dt, section_title=st, content=content,
                              tokens=tokens, has_code=bool(has_code), url=url)
                chunks.setdefault(dp, []).append((chunk, vecs.get(cid)))
            try:
                deduped = set(json.loads(meta.get("deduped_pages") or "[]"))
            except ValueError:
                return None
            return cls(hashes, chunks, deduped, fingerprint is not None)
        except Exception:  # noqa: BLE001 - an odd previous file just means a full build
            return None
        finally:
            pkg.close()

    def take(self, doc_path: str, digest: str) -> _OldPage | None:
        """The page's old chunks if its content is unchanged and they are safe to reuse."""
        old = self.hashes.get(doc_path)
        if old is None or old[0] != digest or doc_path in self.deduped:
            return None
        chunks = self.chunks.get(doc_path, [])
        if self.vectors_ok and any(v is None for _, v in chunks):
            return None
        self.reused += 1
        return _OldPage(title=old[1], url=old[2], chunks=chunks)


def _doc_text(doc: Document) -> str:
    """Everything of a ready-made page that shapes its chunks (for its content hash)."""
    head = "\n".join((doc.title, doc.url or "", doc.embed_hint or "", doc.description))
    return head + "\n" + "\n".join(f"{b.level}{b.title}\n{b.text}" for b in doc.blocks)
