"""Closing the searchers' cache while another thread reads one of its packages, and threads
loading one package's vectors at once.

CPython 3.11's sqlite3 crashes (or corrupts memory) when a connection is closed while
another thread's statement runs on it: the full suite once lost a worker so, when a test's
`clear_cache()` closed a package that the previous test's abandoned search was still
reading in a helper thread. The race runs in a child process, so a crash fails the test
rather than the test run.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from context_cli.search.searcher import PackageSearcher

ROUNDS = 20
SECTIONS = 200_000  # one page-spans read of them sorts for ~65 ms: the close lands inside it


def test_clearing_the_cache_waits_for_a_read_in_flight(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, __file__, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["read whole"] * ROUNDS, done.stdout


def _big_package(path: Path) -> Path:
    """A real package grown to SECTIONS sections of 5,000 pages, without the page index (as a
    package from another builder), so that reading its page spans sorts every section."""
    from adversarial import hostile_packages as hp

    return hp.edit(hp.base_package(path),
                   "INSERT INTO chunks(doc_path, doc_title, section_title, content, tokens, has_code) "
                   "SELECT 'p' || (x / 40) || '.md', 'T', 'S', 'words', 1, 0 FROM (WITH RECURSIVE n(x) AS "
                   f"(SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT {SECTIONS}) SELECT x FROM n)",
                   "DROP INDEX IF EXISTS chunks_page_tokens")


def _race(work: Path) -> None:
    """Each round: one thread reads a cached package while this one clears the cache. Prints
    how each read ended (a whole read once the close waits for it)."""
    import faulthandler

    from context_cli.package.identity import PackageId
    from context_cli.search.searcher import clear_cache, open_searcher
    from context_cli.store.store import Installed

    faulthandler.enable()
    inst = Installed(PackageId("local", "evil", "1.0.0"), _big_package(work / "big.db"), {})
    for _ in range(ROUNDS):
        started, ended = threading.Event(), list[str]()
        reader = threading.Thread(target=_read, args=(open_searcher(inst), started, ended))
        reader.start()
        started.wait()
        time.sleep(0.02)
        clear_cache()
        reader.join()
        print(*ended, flush=True)


def _read(searcher: PackageSearcher, started: threading.Event, ended: list[str]) -> None:
    from context_cli.errors import InvalidPackage

    started.set()
    try:
        ended.append("read whole" if searcher.page_spans() is not None else "read nothing")
    except InvalidPackage as e:
        ended.append(str(e))


def test_threads_loading_vectors_at_once_share_one_load(tmp_path: Path) -> None:
    """Two threads asking a fresh searcher for its vectors at the same moment get the same
    matrix: one loads it, the other waits for that load rather than making its own copy."""
    from context_cli.adding import AddRequest, add_source
    from context_cli.search.searcher import clear_cache, open_searcher

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Streaming\n\nStream responses as they come.\n", "utf-8")
    installed = add_source(AddRequest(source=str(docs), name="vectored", version="1.0.0")).installed
    for _ in range(10):
        clear_cache()
        searcher = open_searcher(installed)
        gate, got = threading.Barrier(4), list[object]()
        threads = [threading.Thread(target=_load_vectors, args=(searcher, gate, got)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got[0] is not None and all(index is got[0] for index in got)



def _load_vectors(searcher: PackageSearcher, gate: threading.Barrier, got: list[object]) -> None:
    gate.wait()
    found = searcher.dense()
    got.append(found[1] if found else None)

if __name__ == "__main__":
    _race(Path(sys.argv[1]))
