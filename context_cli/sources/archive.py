"""Safe extraction of downloaded archives (.tar.gz, .tgz, .tar.bz2, .tar.xz, .tar, .zip).

Sdists, npm tarballs and zipped doc sites come from strangers. `tarfile.extractall` and
`zipfile.extractall` trust member names, links and sizes, so this module extracts one member
at a time and refuses anything that could write outside the destination or exhaust the disk:

* absolute names, drive letters, `..` components, NUL bytes: refused;
* symbolic and hard links: a link whose target leaves the tree is refused (a hostile archive);
  a link that stays inside is skipped, never created, so no later member can be written
  through it (docs never need links; the count is reported);
* device files and FIFOs: refused;
* decompression bombs: a cap on the total uncompressed bytes, on the number of members, and
  on the ratio of uncompressed bytes to the archive's size (checked once the output passes
  `RATIO_FLOOR_BYTES`, so tiny archives of padding are not flagged);
* header bombs: tar reads a GNU long-name/long-link or pax header into memory whole, so
  their declared size is capped (`MAX_HEADER_BYTES`) before tarfile reads them.

Files are written with mode 0644 and directories 0755 whatever the archive says. On any
failure the partial output is removed and `SourceError` carries one line naming the archive
and the member (names are clipped: a hostile name never floods the terminal).
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO

from ..errors import SourceError, clip

MAX_BYTES = 512 * 1024 * 1024  # total uncompressed output
MAX_FILES = 50_000  # members of any kind
MAX_RATIO = 200  # uncompressed bytes / archive bytes
RATIO_FLOOR_BYTES = 8 * 1024 * 1024  # below this much output the ratio is not judged
MAX_HEADER_BYTES = 1024 * 1024  # a GNU long name/link or pax header; real ones are a few KB
_LONG_HEADERS = {tarfile.GNUTYPE_LONGNAME: "GNU long-name", tarfile.GNUTYPE_LONGLINK: "GNU long-link",
                 tarfile.XHDTYPE: "pax", tarfile.XGLTYPE: "pax global", tarfile.SOLARIS_XHDTYPE: "pax"}
_CHUNK = 1024 * 1024
# What a corrupt or truncated archive raises from tarfile, zipfile and the decompressors.
_BROKEN: tuple[type[BaseException], ...] = (
    tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError,
    ValueError, NotImplementedError,
)
try:
    import lzma

    _BROKEN += (lzma.LZMAError,)
except ImportError:  # Python built without lzma: .tar.xz then fails as "not readable"
    pass


@dataclass(frozen=True)
class Extracted:
    """What `extract` wrote: the destination, counts, and links it chose not to create."""

    dest: Path
    files: int
    bytes: int
    skipped_links: int

    def notes(self) -> list[str]:
        """What a build says about the archive's content it left out."""
        n = self.skipped_links
        return [f"skipped {n} symbolic or hard link{'s' if n != 1 else ''} in the archive "
                "(links are never created)"] if n else []


class _Refused(Exception):
    """Internal: a reason to refuse the archive; becomes one `SourceError` line."""


@dataclass(frozen=True)
class _Member:
    name: str
    kind: str  # file | dir | link | special
    size: int  # declared uncompressed size (files)
    link_target: str | None = None
    hard: bool = False  # a hard link (target relative to the root, not the link's folder)
    open: Callable[[], IO[bytes]] | None = None  # the content, for files


def extract(
    archive_path: Path | str,
    dest_dir: Path | str,
    *,
    max_bytes: int = MAX_BYTES,
    max_files: int = MAX_FILES,
    max_ratio: float = MAX_RATIO,
) -> Extracted:
    """Extract `archive_path` into `dest_dir` (created; must be absent or empty).

    The format is sniffed from the content, not the file name, so a mislabelled download
    still extracts (or is refused) correctly.
    """
    archive = Path(archive_path)
    dest = Path(dest_dir)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise SourceError(f"cannot extract {archive.name}: {dest} is not an empty folder")
    created = not dest.exists()
    try:
        archive_size = archive.stat().st_size
    except OSError as e:
        raise SourceError(f"cannot read archive {archive.name}: {e.strerror or e}") from None
    budget = _Budget(archive_size, max_bytes, max_files, max_ratio)
    try:
        dest.mkdir(parents=True, exist_ok=True)
        skipped = 0
        for member in _members(archive, budget.max_files):
            skipped += _write(member, dest, budget)
        return Extracted(dest, budget.files, budget.bytes, skipped)
    except _Refused as e:
        _remove_partial(dest, created)
        raise SourceError(f"refusing archive {archive.name}: {e}") from None
    except _BROKEN as e:
        _remove_partial(dest, created)
        raise SourceError(f"cannot extract {archive.name}: {_one_line(e)}") from None
    except BaseException:
        _remove_partial(dest, created)
        raise


class _Budget:
    """Running totals checked against the caps as bytes are written."""

    def __init__(self, archive_size: int, max_bytes: int, max_files: int, max_ratio: float):
        self.archive_size = max(archive_size, 1)
        self.max_bytes, self.max_files, self.max_ratio = max_bytes, max_files, max_ratio
        self.files = 0
        self.bytes = 0

    def count_member(self) -> None:
        self.files += 1
        if self.files > self.max_files:
            raise _Refused(f"more than {self.max_files} members (possible decompression bomb)")

    def add_bytes(self, n: int) -> None:
        self.bytes += n
        if self.bytes > self.max_bytes:
            raise _Refused(
                f"more than {self.max_bytes} bytes uncompressed (possible decompression bomb)"
            )
        if self.bytes > RATIO_FLOOR_BYTES and self.bytes / self.archive_size > self.max_ratio:
            raise _Refused(
                f"expands more than {self.max_ratio:g} times its size (possible decompression bomb)"
            )


def _members(archive: Path, max_files: int) -> Iterator[_Member]:
    with archive.open("rb") as fh:
        head = fh.read(512)
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        yield from _zip_members(archive, max_files)
    elif (
        head.startswith(b"\x1f\x8b")
        or head.startswith(b"BZh")
        or head.startswith(b"\xfd7zXZ\x00")
        or head[257:262] == b"ustar"
    ):
        yield from _tar_members(archive)
    else:
        raise _Refused("not a tar or zip archive")


class _CappedTarInfo(tarfile.TarInfo):
    """A TarInfo that refuses an oversized long-name/pax header before tarfile reads it."""

    def _proc_member(self, tarfile: tarfile.TarFile) -> tarfile.TarInfo:
        kind = _LONG_HEADERS.get(self.type)
        if kind and self.size > MAX_HEADER_BYTES:
            raise _Refused(f"a {kind} header of {self.size} bytes (over the {MAX_HEADER_BYTES}-byte cap)")
        return super()._proc_member(tarfile)  # type: ignore[misc, no-any-return]


def _tar_members(archive: Path) -> Iterator[_Member]:
    # Iterating a TarFile reads headers lazily, so a bomb is caught while streaming rather
    # than after the whole member list has been decompressed.
    with tarfile.open(archive, mode="r:*", tarinfo=_CappedTarInfo) as tf:
        for info in tf:
            if info.isreg():
                yield _Member(info.name, "file", info.size, open=partial(_tar_file, tf, info))
            elif info.isdir():
                yield _Member(info.name, "dir", 0)
            elif info.issym() or info.islnk():
                yield _Member(info.name, "link", 0, link_target=info.linkname, hard=info.islnk())
            else:
                yield _Member(info.name, "special", 0)


def _tar_file(tf: tarfile.TarFile, info: tarfile.TarInfo) -> IO[bytes]:
    fh = tf.extractfile(info)
    if fh is None:  # only for non-regular members, which never get here
        raise _Refused(f"member {_name(info.name)} has no content")
    return fh


def _zip_members(archive: Path, max_files: int) -> Iterator[_Member]:
    """A zip lists its members up front: too many is refused before anything is written."""
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        if len(infos) > max_files:
            raise _Refused(f"more than {max_files} members (possible decompression bomb)")
        for info in infos:
            mode = info.external_attr >> 16
            if info.flag_bits & 0x1:
                raise _Refused(f"member {_name(info.filename)} is encrypted")
            if info.is_dir():
                yield _Member(info.filename, "dir", 0)
            elif stat.S_ISLNK(mode):
                if info.file_size > 4096:
                    raise _Refused(f"member {_name(info.filename)} is an oversized link")
                target = zf.read(info).decode("utf-8", "replace")
                yield _Member(info.filename, "link", 0, link_target=target)
            elif mode and (stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)):
                yield _Member(info.filename, "special", 0)
            else:
                yield _Member(info.filename, "file", info.file_size, open=partial(zf.open, info))


def _safe_parts(name: str) -> tuple[str, ...]:
    """The path components of a member name, or `_Refused` if it could leave the tree."""
    if "\x00" in name:
        raise _Refused(f"member name {_name(name)} contains a NUL byte")
    unified = name.replace("\\", "/")
    if unified.startswith("/") or (len(unified) > 1 and unified[1] == ":"):
        raise _Refused(f"member {_name(name)} has an absolute path")
    parts = tuple(p for p in PurePosixPath(unified).parts if p not in ("", "."))
    if ".." in parts:
        raise _Refused(f"member {_name(name)} escapes the destination ('..' in its path)")
    return parts


def _link_leaves_tree(member_parts: tuple[str, ...], target: str, hard: bool) -> bool:
    unified = target.replace("\\", "/")
    if unified.startswith("/") or (len(unified) > 1 and unified[1] == ":"):
        return True
    # Symlink targets are relative to the link's folder; hard link targets to the root.
    base = [] if hard else list(member_parts[:-1])
    for part in PurePosixPath(unified).parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not base:
                return True
            base.pop()
        else:
            base.append(part)
    return False


def _write(member: _Member, dest: Path, budget: _Budget) -> int:
    """Write one member; return 1 if it was a link that was skipped, else 0."""
    budget.count_member()
    parts = _safe_parts(member.name)
    if member.kind == "special":
        raise _Refused(f"member {_name(member.name)} is a device file or FIFO")
    if member.kind == "link":
        if _link_leaves_tree(parts, member.link_target or "", member.hard):
            raise _Refused(
                f"link {_name(member.name)} points outside the destination ({_name(member.link_target or '')})"
            )
        return 1
    if not parts:
        return 0  # the root itself ("./")
    target = dest.joinpath(*parts)
    if member.kind == "dir":
        target.mkdir(mode=0o755, parents=True, exist_ok=True)
        return 0
    if member.size > budget.max_bytes:
        cap = budget.max_bytes
        size = member.size
        raise _Refused(f"member {_name(member.name)} declares {size} bytes, over the {cap}-byte cap")
    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    if target.is_dir():
        raise _Refused(f"member {_name(member.name)} would replace a folder")
    assert member.open is not None
    src = member.open()
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o644)
    with src, os.fdopen(fd, "wb") as out:
        while chunk := src.read(_CHUNK):
            budget.add_bytes(len(chunk))
            out.write(chunk)
    return 0


def _remove_partial(dest: Path, created: bool) -> None:
    if created:
        shutil.rmtree(dest, ignore_errors=True)
        return
    for child in list(dest.iterdir()) if dest.exists() else []:
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def _one_line(e: BaseException) -> str:
    return clip(str(e) or type(e).__name__, 200)


def _name(name: str) -> str:
    """A member name as shown in a message: quoted, at most about 100 characters."""
    return repr(clip(name, 100))
