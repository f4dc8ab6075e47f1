"""The build pipeline: a fetched source becomes a package file.

sources (Fetched) -> parse (Documents) -> chunk (Chunks, deduped) -> embed -> package.
Every stage is a plain function; this module only wires them and counts what happened.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

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
    pages: list[PageRecord] = []
    skipped = [fetched.skipped]
    docs = _documents(fetched, opts, pages, skipped, progress)
    chunks = list(dedupe(c for doc in docs for c in chunk_document(doc)))
    if not chunks:
        raise SourceError("no documentation found in the source (no parsable docs files)")
    meta = {
        "name": pid.name, "version": pid.version, "registry": pid.registry,
        "description": opts.description or fetched.description or "",
        "source_type": fetched.source_type, "source_url": fetched.source_url,
        "source_commit": fetched.source_commit,
    }
    vectors, model_name = None, None
    if opts.embed:
        vectors, model_meta = embed_chunks(chunks, opts.embed_model, progress)
        meta.update(model_meta)
        model_name = model_meta["embedding_model"]
    write_package(dest, meta, chunks, vectors=vectors, pages=pages)
    return BuildResult(
        path=dest, id=pid, pages=len(pages), chunks=len(chunks),
        tokens=sum(c.tokens for c in chunks), skipped=skipped[0],
        seconds=time.perf_counter() - start, embedding_model=model_name, notes=list(fetched.notes),
    )


def embed_chunks(chunks: list[Chunk], model_spec: str | None,
                 progress: Progress | None = None, batch: int = 1024):
    """Embed every chunk's dense text; returns the matrix and the meta keys naming the model."""
    import numpy as np

    from .embed.model import load_model
    from .embed.text import embed_text

    model = load_model(model_spec)
    texts = [embed_text(c) for c in chunks]
    parts = []
    for i in range(0, len(texts), batch):
        parts.append(model.encode(texts[i:i + batch]))
        if progress:
            progress("embedding", min(i + batch, len(texts)), len(texts))
    matrix = np.vstack(parts) if parts else np.zeros((0, model.dim), dtype=np.float32)
    return matrix, {"embedding_model": model.name, "embedding_fingerprint": model.fingerprint}


def _documents(fetched: Fetched, opts: BuildOptions, pages: list[PageRecord], skipped: list[int],
               progress: Progress | None) -> Iterator[Document]:
    """Documents from a source, recording one PageRecord per page and counting failures."""
    if fetched.documents is not None:
        for doc in fetched.documents:
            pages.append(PageRecord(doc.path, doc.title, doc.url, content_hash(_doc_text(doc))))
            yield doc
        return
    if fetched.folder is None:
        raise SourceError("the source has no documents")
    from .parse import parse_file

    found = discover(fetched.folder, path=opts.path or fetched.docs_path, lang=opts.lang)
    total = len(found.files)
    for n, file in enumerate(found.files, start=1):
        rel = file.relative_to(found.root).as_posix()
        try:
            data = file.read_bytes()
            doc = parse_file(rel, data)
        except Exception:  # noqa: BLE001 - one bad file must never abort the build
            skipped[0] += 1
            continue
        if progress:
            progress("parsing", n, total)
        if doc is None:
            continue
        pages.append(PageRecord(rel, doc.title, doc.url, content_hash(data)))
        yield doc


def _doc_text(doc: Document) -> str:
    return doc.title + "\n" + "\n".join(f"{b.level}{b.title}\n{b.text}" for b in doc.blocks)
