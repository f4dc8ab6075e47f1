"""mix.lock read by the small term reader (never evaluated), mix.exs for the direct ones."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from context_cli.sync import elixir
from context_cli.sync.model import LockfileError

FIX = Path(__file__).parent / "fixtures" / "lockfiles" / "mix"


def test_mix_exs_direct_names_and_sources():
    assert elixir.mix_exs_direct(FIX / "mix.exs") == {
        "phoenix": None, "jason": None, "ecto_sql": None, "my_fork": "git: acme/my_fork",
        "local_lib": "path: ../local_lib", "credo": None}


def test_mix_lock_direct_transitive_git_path_private():
    deps = elixir.mix_lock_deps(FIX / "mix.lock", "mix.lock", elixir.mix_exs_direct(FIX / "mix.exs"))
    got = {(d.name, d.version, d.direct) for d in deps if not d.skip}
    assert got == {("phoenix", "1.7.14", True), ("jason", "1.4.1", True), ("ecto_sql", "3.11.3", True),
                   ("credo", "1.7.7", True), ("decimal", "2.1.1", False)}
    assert {d.name: d.skip for d in deps if d.skip} == {
        "my_fork": "git: https://github.com/acme/my_fork.git", "local_lib": "path: ../local_lib",
        "private_thing": "private hex repository hexpm:acme"}
    assert all(d.registry == "hex" for d in deps)


def test_terms_reader_kinds():
    value = elixir.read_terms('%{"a" => {:hex, :"quoted atom", "1.0", [x: 1, y: [true, nil]], -2.5}}', "t")
    assert value == {"a": ("hex", "quoted atom", "1.0", [("x", "1"), ("y", [True, None])], "-2.5")}
    assert isinstance(value["a"][0], elixir.Atom) and not isinstance(value["a"][2], elixir.Atom)


@pytest.mark.parametrize("text,line", [
    ('%{\n  "jason": {:hex, :jason, "1.4.1",\n', 2),  # truncated
    ('%{\n  "jason": {:hex, :jason, "1.4.1"}\n  "x": 1}', 3),  # a missing comma
    ('%{\n  "jason" {:hex}}', 2),  # no =>
    ('%{\n  "a" => System.cmd("rm", ["-rf", "/"])}', 2),  # code is not a term: refused, not run
])
def test_malformed_mix_lock_names_line(tmp_path, text, line):
    lock = tmp_path / "mix.lock"
    lock.write_text(text)
    with pytest.raises(LockfileError) as e:
        elixir.mix_lock_deps(lock, "mix.lock", None)
    assert str(e.value).startswith(f"mix.lock line {line}:")


def test_deeply_nested_terms_are_refused_quickly(tmp_path):
    lock = tmp_path / "mix.lock"
    lock.write_text("[" * 100_000 + "]" * 100_000)
    start = time.monotonic()
    with pytest.raises(LockfileError, match="nested too deeply"):
        elixir.mix_lock_deps(lock, "mix.lock", None)
    assert time.monotonic() - start < 5
