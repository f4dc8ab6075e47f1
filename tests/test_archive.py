"""Safe extraction: hostile tar and zip archives built in tmp_path are refused, cleanly."""

from __future__ import annotations

import io
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from context_cli.errors import SourceError
from context_cli.sources.archive import extract


def make_tar(path: Path, members: list[tuple[str, str, bytes | str]], mode: str = "w:gz") -> Path:
    """members: (kind, name, data) with kind file|dir|symlink|hardlink|chr|fifo."""
    with tarfile.open(path, mode) as tf:
        for kind, name, data in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                raw = data if isinstance(data, bytes) else data.encode()
                info.size = len(raw)
                tf.addfile(info, io.BytesIO(raw))
                continue
            info.type = {
                "dir": tarfile.DIRTYPE,
                "symlink": tarfile.SYMTYPE,
                "hardlink": tarfile.LNKTYPE,
                "chr": tarfile.CHRTYPE,
                "fifo": tarfile.FIFOTYPE,
            }[kind]
            if kind in ("symlink", "hardlink"):
                info.linkname = str(data)
            tf.addfile(info)
    return path


def make_zip(path: Path, members: list[tuple[str, bytes | str]], symlinks=()) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
        for name, target in symlinks:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return path


def test_extracts_a_normal_tar_gz(tmp_path):
    archive = make_tar(
        tmp_path / "pkg-1.0.tar.gz",
        [("dir", "pkg-1.0", b""), ("file", "pkg-1.0/docs/index.md", "# Hi\n"),
         ("file", "pkg-1.0/README.md", "readme")],
    )
    result = extract(archive, tmp_path / "out")
    assert (tmp_path / "out/pkg-1.0/docs/index.md").read_text() == "# Hi\n"
    assert result.files == 3 and result.bytes == len("# Hi\n") + len("readme")
    assert result.skipped_links == 0


@pytest.mark.parametrize("mode,suffix", [("w:bz2", ".tar.bz2"), ("w:xz", ".tar.xz"), ("w", ".tar")])
def test_extracts_other_tar_compressions(tmp_path, mode, suffix):
    archive = make_tar(tmp_path / f"a{suffix}", [("file", "a/b.txt", "b")], mode=mode)
    extract(archive, tmp_path / "out")
    assert (tmp_path / "out/a/b.txt").read_text() == "b"


def test_format_is_sniffed_not_taken_from_the_name(tmp_path):
    archive = make_zip(tmp_path / "mislabelled.tgz", [("docs/a.md", "a")])
    extract(archive, tmp_path / "out")
    assert (tmp_path / "out/docs/a.md").read_text() == "a"


def test_extracts_a_normal_zip(tmp_path):
    archive = make_zip(tmp_path / "site.zip", [("site/", ""), ("site/index.html", "<h1>x</h1>")])
    extract(archive, tmp_path / "out")
    assert (tmp_path / "out/site/index.html").read_text() == "<h1>x</h1>"


def test_file_modes_from_the_archive_are_ignored(tmp_path):
    path = tmp_path / "suid.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        info = tarfile.TarInfo("bin/tool")
        info.size = 1
        info.mode = 0o4777
        tf.addfile(info, io.BytesIO(b"x"))
    extract(path, tmp_path / "out")
    assert stat.S_IMODE((tmp_path / "out/bin/tool").stat().st_mode) & 0o7000 == 0


HOSTILE_TARS = {
    "absolute": ([("file", "/etc/evil", "x")], "has an absolute path"),
    "dotdot": ([("file", "pkg/../../evil", "x")], "escapes the destination"),
    "backslash-dotdot": ([("file", "pkg\\..\\..\\evil", "x")], "escapes the destination"),
    "symlink-out": ([("symlink", "pkg/link", "../../etc/passwd")], "points outside"),
    "symlink-abs": ([("symlink", "pkg/link", "/etc/passwd")], "points outside"),
    "hardlink-out": ([("hardlink", "pkg/link", "../outside")], "points outside"),
    "device": ([("chr", "pkg/dev", "")], "device file or FIFO"),
    "fifo": ([("fifo", "pkg/fifo", "")], "device file or FIFO"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_TARS))
def test_hostile_tar_is_refused_and_nothing_is_left(tmp_path, case):
    members, reason = HOSTILE_TARS[case]
    archive = make_tar(tmp_path / "evil.tar.gz", [("file", "pkg/ok.md", "ok"), *members])
    out = tmp_path / "out"
    with pytest.raises(SourceError) as err:
        extract(archive, out)
    message = str(err.value)
    assert message.startswith("refusing archive evil.tar.gz: ")
    assert reason in message and "\n" not in message
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.tar.gz"]


def test_links_inside_the_tree_are_skipped_not_created(tmp_path):
    archive = make_tar(
        tmp_path / "a.tar.gz",
        [("file", "pkg/docs/a.md", "a"), ("symlink", "pkg/README.md", "docs/a.md"),
         ("hardlink", "pkg/copy.md", "pkg/docs/a.md")],
    )
    result = extract(archive, tmp_path / "out")
    assert result.skipped_links == 2
    assert not (tmp_path / "out/pkg/README.md").exists()
    assert not (tmp_path / "out/pkg/copy.md").exists()


def test_write_through_a_planted_link_is_impossible(tmp_path):
    # Classic attack: a link to the outside, then a file "through" it.
    archive = make_tar(
        tmp_path / "a.tar.gz",
        [("symlink", "pkg/sub", "."), ("file", "pkg/sub/a.md", "a")],
    )
    extract(archive, tmp_path / "out")
    assert (tmp_path / "out/pkg/sub").is_dir() and not (tmp_path / "out/pkg/sub").is_symlink()


def test_zip_slip_and_zip_symlinks_are_refused(tmp_path):
    for name, members, links, reason in [
        ("slip.zip", [("../evil.txt", "x")], [], "escapes the destination"),
        ("abs.zip", [("/abs.txt", "x")], [], "absolute path"),
        ("drive.zip", [("C:/evil.txt", "x")], [], "absolute path"),
        ("link.zip", [("a.md", "a")], [("docs/link", "../../x")], "points outside"),
    ]:
        archive = make_zip(tmp_path / name, members, links)
        out = tmp_path / f"out-{name}"
        with pytest.raises(SourceError, match=reason):
            extract(archive, out)
        assert not out.exists()


def test_tar_bomb_by_total_size(tmp_path):
    zeros = b"\0" * 600_000
    archive = make_tar(tmp_path / "bomb.tar.gz", [("file", f"z{i}", zeros) for i in range(3)])
    with pytest.raises(SourceError, match="more than 1000000 bytes uncompressed"):
        extract(archive, tmp_path / "out", max_bytes=1_000_000)
    assert not (tmp_path / "out").exists()


def test_one_member_declaring_more_than_the_cap(tmp_path):
    archive = make_tar(tmp_path / "bomb.tar.gz", [("file", "zeros", b"\0" * 3_000_000)])
    with pytest.raises(SourceError, match="'zeros' declares 3000000 bytes, over the 1000000-byte"):
        extract(archive, tmp_path / "out", max_bytes=1_000_000)


def test_zip_bomb_by_ratio(tmp_path):
    archive = make_zip(tmp_path / "bomb.zip", [("zeros", b"\0" * 20_000_000)])
    assert archive.stat().st_size < 100_000
    with pytest.raises(SourceError, match="expands more than 100 times"):
        extract(archive, tmp_path / "out", max_ratio=100)
    assert not (tmp_path / "out").exists()


def test_too_many_members(tmp_path):
    archive = make_zip(tmp_path / "many.zip", [(f"f{i}.md", "x") for i in range(30)])
    with pytest.raises(SourceError, match="more than 20 members"):
        extract(archive, tmp_path / "out", max_files=20)


def test_not_an_archive(tmp_path):
    path = tmp_path / "x.tar.gz"
    path.write_text("<html>404</html>")
    with pytest.raises(SourceError, match="refusing archive x.tar.gz: not a tar or zip archive"):
        extract(path, tmp_path / "out")


def test_truncated_archive_is_a_clean_error(tmp_path):
    archive = make_tar(tmp_path / "t.tar.gz", [("file", "a/b", b"x" * 100_000)])
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceError, match="^cannot extract t.tar.gz: "):
        extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_existing_empty_destination_is_emptied_again_on_failure(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    archive = make_tar(tmp_path / "e.tar.gz", [("file", "a/ok", "x"), ("file", "../evil", "x")])
    with pytest.raises(SourceError):
        extract(archive, out)
    assert out.is_dir() and list(out.iterdir()) == []


def test_non_empty_destination_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep").write_text("mine")
    archive = make_tar(tmp_path / "a.tar.gz", [("file", "a", "x")])
    with pytest.raises(SourceError, match="is not an empty folder"):
        extract(archive, out)
    assert (out / "keep").read_text() == "mine"


_PIECES = ["a", "b", "..", ".", "", "/", "\\", "C:", "~", "%2e%2e"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6), min_size=1, max_size=4))
def test_any_member_name_stays_inside_or_is_refused(names):
    """Whatever the names, nothing is ever written outside the destination."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        dest = base / "jail" / "out"
        dest.parent.mkdir()
        members = [("file", "/".join(parts), "x") for parts in names]
        try:
            archive = make_tar(base / "a.tar", members, mode="w")
        except (ValueError, OSError):
            return  # tarfile itself rejects the name
        try:
            extract(archive, dest)
        except SourceError:
            assert not dest.exists()
        outside = [p for p in base.rglob("*") if p != archive and p != dest.parent
                   and not p.is_relative_to(dest)]
        assert outside == []


def _header_bomb(path: Path, header_type: bytes, size: int) -> Path:
    """A .tgz whose first header (GNU long name, pax) declares `size` bytes of one letter."""
    import gzip

    info = tarfile.TarInfo("././@LongLink")
    info.type, info.size = header_type, size
    block = b"a" * (1 << 20)
    with gzip.open(path, "wb", compresslevel=6) as f:
        f.write(info.tobuf(format=tarfile.GNU_FORMAT))
        for left in range(size, 0, -len(block)):
            f.write(block[:left])
        f.write(b"\0" * ((512 - size % 512) % 512))
        real = tarfile.TarInfo("x.md")
        real.size = 1
        f.write(real.tobuf() + b"x" + b"\0" * 511 + b"\0" * 1024)
    return path


@pytest.mark.parametrize("header_type, kind", [
    (tarfile.GNUTYPE_LONGNAME, "GNU long-name"), (tarfile.GNUTYPE_LONGLINK, "GNU long-link"),
    (tarfile.XHDTYPE, "pax"), (tarfile.XGLTYPE, "pax global"),
])
def test_oversized_long_name_and_pax_headers_are_refused_before_reading(tmp_path, header_type, kind):
    """A 64 MiB header in a ~64 KB .tgz: tarfile would read it whole (and echo it as a name)."""
    import tracemalloc

    bomb = _header_bomb(tmp_path / "bomb.tgz", header_type, 64 * 1024 * 1024)
    assert bomb.stat().st_size < 400_000
    tracemalloc.start()
    try:
        with pytest.raises(SourceError) as e:
            extract(bomb, tmp_path / "out")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024  # the header is never read (it would take 64 MiB and more)
    assert str(e.value) == (f"refusing archive bomb.tgz: a {kind} header of 67108864 bytes "
                            "(over the 1048576-byte cap)")
    assert not (tmp_path / "out").exists()


def test_a_long_hostile_member_name_is_clipped_in_the_error(tmp_path):
    name = "../" + "x" * 100_000
    with pytest.raises(SourceError) as e:
        extract(make_tar(tmp_path / "a.tgz", [("file", name, "hi")]), tmp_path / "out")
    assert len(str(e.value)) < 250 and "escapes the destination" in str(e.value)


def test_a_long_name_within_the_cap_still_extracts(tmp_path):
    name = "docs/" + "d" * 150 + "/guide.md"  # over tar's 100-byte field: a GNU/pax long name
    for fmt in (tarfile.GNU_FORMAT, tarfile.PAX_FORMAT):
        archive = tmp_path / f"ok-{fmt}.tar"
        with tarfile.open(archive, "w", format=fmt) as tf:
            info = tarfile.TarInfo(name)
            info.size = 2
            tf.addfile(info, io.BytesIO(b"ok"))
        out = tmp_path / f"out-{fmt}"
        extract(archive, out)
        assert (out / name).read_bytes() == b"ok"
