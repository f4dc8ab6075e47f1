"""Generators of hostile wheels (`evil-1.0.0-py3-none-any.whl`), built in memory.

Code in them that would do harm if run (a `.pth` file, an `__init__.py`, a script in
`.data/scripts/`) writes a marker file instead: the tests check that it never appears.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import stat
import zipfile

from .hostile_archives import MiB, zip_bomb

DIST = "evil-1.0.0.dist-info"
METADATA = (b"Metadata-Version: 2.1\nName: evil\nVersion: 1.0.0\nDescription-Content-Type: text/markdown\n\n"
            b"# Evil\n\n## Streaming\n\nevil streaming cancellation docs for the hostile wheel.\n")
CODE = b'"""The hostile package."""\n\n\ndef harmless(x: int) -> int:\n    """Return `x`."""\n    return x\n'
WHEEL = b"Wheel-Version: 1.0\nGenerator: hostile\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel(members: dict[str, bytes], *, metadata: bytes = METADATA, record: str | None = None,
          links: dict[str, str] | None = None) -> bytes:
    """A wheel holding `evil/__init__.py`, `members`, METADATA, WHEEL and a RECORD (honest
    unless `record` is given); `links` are symbolic-link members (name -> target)."""
    files = {"evil/__init__.py": CODE, **members, f"{DIST}/METADATA": metadata, f"{DIST}/WHEEL": WHEEL}
    honest = "\n".join(_record_line(n, d) for n, d in files.items()) + f"\n{DIST}/RECORD,,\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)
        z.writestr(f"{DIST}/RECORD", record if record is not None else honest)
    return buf.getvalue()


def runs_code(marker: str) -> bytes:
    """Every way a wheel's content could run on install or import writes `marker` + a suffix."""
    def write(suffix: str) -> bytes:
        return f"open({marker + suffix!r}, 'w').write('ran')\n".encode()
    return wheel({
        "evil/__init__.py": b"import os\n" + write(".init") + CODE,
        "evil/__main__.py": write(".main"),
        "evil-hook.pth": b"import os; " + write(".pth"),
        "evil-1.0.0.data/scripts/evil-postinstall": b"#!/bin/sh\n" + f"touch {marker}.script\n".encode(),
        "evil-1.0.0.data/purelib/evil_data/__init__.py": write(".purelib"),
        "setup.py": write(".setup"),
        "conftest.py": write(".conftest"),
    })


def lying_record() -> bytes:
    """A RECORD naming files outside the tree, absolute paths, wrong hashes and sizes, files
    that are not there: nothing reads it, so nothing follows it."""
    lies = "\n".join([
        "../../context-adversarial-record.py,sha256=AAAA,5",
        "/etc/passwd,sha256=AAAA,1",
        "evil/__init__.py,sha256=bm90IHRoZSBoYXNo,999999999",
        "evil/missing.py,sha256=AAAA,10",
        f"{DIST}/METADATA,md5=0,0",
        "\x00\x1b[31mred,,",
    ])
    return wheel({}, record=lies)


def huge_metadata(size: int = 6 * MiB) -> bytes:
    """METADATA over the cap, incompressible (hex of random bytes), so no bomb check stops it first."""
    return wheel({}, metadata=METADATA + os.urandom(size // 2).hex().encode())


def malformed_metadata(binary: bool = False) -> bytes:
    """No header separator, invalid UTF-8, NUL bytes, a header that is all continuation, a
    MIME multipart body (and with `binary`, 16 KB of every byte value): read as text where it
    is text, never as MIME."""
    garbage = (b"\xff\xfe\x00Name evil\n\tcontinued\n    more\nContent-Type: multipart/mixed; boundary=x\n"
               b"--x\nContent-Type: text/plain\n\nstreaming cancellation\n--x--\n" + bytes(range(256)) * 64 * binary)
    return wheel({}, metadata=garbage)


def two_dist_infos() -> bytes:
    """Two `.dist-info` folders: which METADATA is the wheel's cannot be said, so none is read."""
    return wheel({"other-9.9.dist-info/METADATA": b"Name: other\n\n# Not evil's README\n"})


def traversal() -> bytes:
    return wheel({"../../context-adversarial-wheel.py": CODE})


def absolute() -> bytes:
    return wheel({"/tmp/context-adversarial-wheel.py": CODE})


def symlink_out() -> bytes:
    """Links to a file outside the tree: the archive is refused, nothing is read through them."""
    return wheel({}, links={"evil/passwd.md": "/etc/passwd", "evil/up.md": "../../../../etc/passwd"})


def member_count_bomb(members: int = 50_001) -> bytes:
    """More members than any wheel needs (archive.MAX_FILES), each empty."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("evil/__init__.py", CODE)
        z.writestr(f"{DIST}/METADATA", METADATA)
        for i in range(members):
            z.writestr(f"evil/m{i}.py", b"")
    return buf.getvalue()


REFUSED = {
    "traversal": traversal,
    "absolute": absolute,
    "symlink_out": symlink_out,
    "ratio_bomb": zip_bomb,  # the sdists' bomb: nothing reads a wheel's layout before the refusal
    "member_count_bomb": member_count_bomb,
}
