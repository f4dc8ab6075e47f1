"""Generators of hostile archives (npm tarballs, sdists), built cheaply in memory.

Bombs are made without ever holding their unpacked size: a gzip stream may be several
members back to back, so one compressed megabyte of zeros (or of `a`s) is repeated.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile

MiB = 1024 * 1024
DOC = b"# Evil\n\nevil streaming cancellation docs for the hostile package.\n"


def _gz_repeat(block: bytes, total: int) -> bytes:
    """gzip members whose concatenated output is `total` bytes of `block` repeated (block divides MiB)."""
    member = gzip.compress(block * (MiB // len(block)), compresslevel=9)
    return member * (total // MiB)


def _header(name: str, size: int, kind: bytes = b"0", link: str = "") -> bytes:
    """One ustar header block, with its checksum."""
    info = tarfile.TarInfo(name if len(name) < 100 else "x")
    info.size, info.type, info.linkname, info.mode, info.mtime = size, kind, link, 0o644, 0
    block = bytearray(info.tobuf(tarfile.USTAR_FORMAT))
    if len(name) >= 100:  # a long-name record's own header carries the placeholder name
        block[0:100] = name.encode()[:100].ljust(100, b"\0")
        block[148:156] = b" " * 8
        block[148:155] = f"{sum(block):06o}\0".encode()
    return bytes(block)


def _pad(size: int) -> bytes:
    return b"\0" * (-size % 512)


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _file(name: str, data: bytes = DOC) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str, kind: bytes) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def good_tgz() -> bytes:
    """A plain npm tarball with one docs page: the control case."""
    return gzip.compress(_tar([_file("package/README.md"), _file("package/docs/guide.md")]))


def longname_bomb(name_bytes: int = 32 * MiB) -> bytes:
    """#2: a GNU long-name record (`././@LongLink`, type L) announcing a name of `name_bytes`."""
    head = gzip.compress(_header("././@LongLink", name_bytes, b"L"))
    tail = gzip.compress(_pad(name_bytes) + _header("package/README.md", len(DOC)) + DOC + _pad(len(DOC))
                         + b"\0" * 1024)
    return head + _gz_repeat(b"a", name_bytes) + tail


def pax_bomb(value_bytes: int = 32 * MiB) -> bytes:
    """#2: a pax extended header (type x) whose one `path=` record is `value_bytes` long."""
    prefix_len = len(" path=") + value_bytes + 1
    digits = len(str(prefix_len))
    digits = len(str(prefix_len + digits))
    record_len = prefix_len + digits
    first = f"{record_len} path=".encode()
    size = record_len
    head = gzip.compress(_header("PaxHeader/x", size, b"x") + first)
    tail = gzip.compress(b"\n" + _pad(size) + _header("package/README.md", len(DOC)) + DOC + _pad(len(DOC))
                         + b"\0" * 1024)
    return head + _gz_repeat(b"a", value_bytes) + tail


def ratio_bomb(unpacked: int = 128 * MiB) -> bytes:
    """A member of `unpacked` zero bytes in about a thousandth of that."""
    head = gzip.compress(_header("package/README.md", len(DOC)) + DOC + _pad(len(DOC))
                         + _header("package/docs/zeros.md", unpacked))
    return head + _gz_repeat(b"\0", unpacked) + gzip.compress(b"\0" * 1024)


def traversal() -> bytes:
    return gzip.compress(_tar([_file("package/README.md"), _file("package/../../../evil.md")]))


def absolute() -> bytes:
    return gzip.compress(_tar([_file("package/README.md"), _file("/tmp/context-adversarial-evil.md")]))


def symlink_out() -> bytes:
    return gzip.compress(_tar([_file("package/README.md"), _link("package/docs/passwd.md", "/etc/passwd", tarfile.SYMTYPE),
                               _link("package/docs/up.md", "../../../../etc/passwd", tarfile.SYMTYPE)]))


def hardlink_out() -> bytes:
    return gzip.compress(_tar([_file("package/README.md"), _link("package/docs/h.md", "/etc/passwd", tarfile.LNKTYPE)]))


def link_then_write_through() -> bytes:
    """A link inside the tree to a folder outside, then a file written 'through' it."""
    return gzip.compress(_tar([_file("package/README.md"), _link("package/out", "/tmp", tarfile.SYMTYPE),
                               _file("package/out/context-adversarial-through.md")]))


def not_an_archive() -> bytes:
    return b"\x1f\x8b" + b"garbage" * 1000


def zip_bomb(unpacked: int = 96 * MiB) -> bytes:
    """An sdist .zip with one member of zeros deflated about a thousandfold."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("evil-1.0.0/README.md", DOC)
        with z.open("evil-1.0.0/docs/zeros.md", "w", force_zip64=True) as f:
            block = b"\0" * MiB
            for _ in range(unpacked // MiB):
                f.write(block)
    return buf.getvalue()


def zip_traversal() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("evil-1.0.0/README.md", DOC)
        z.writestr("../../context-adversarial-zip.md", DOC)
    return buf.getvalue()


TARBALLS = {
    "traversal": traversal,
    "absolute": absolute,
    "symlink_out": symlink_out,
    "hardlink_out": hardlink_out,
    "link_then_write_through": link_then_write_through,
    "ratio_bomb": ratio_bomb,
    "not_an_archive": not_an_archive,
}
