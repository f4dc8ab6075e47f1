"""Resolving one package opens the files that may be it, and finds the same packages as before."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import make_package

from context_cli.store.store import Store


def test_find_opens_what_a_spec_may_mean_and_still_sees_hand_copied_files(tmp_path: Path) -> None:
    store = Store(tmp_path / "packages")
    for name, version in (("my_lib", "1.0.0"), ("my_lib", "2.0.0"), ("other", "1.0.0"), ("@scope/pkg", "1.0.0")):
        store.install(make_package(tmp_path / f"{name.replace('/', '-')}-{version}.db", name, version))
    shutil.copyfile(make_package(tmp_path / "third.db", "my_lib", "3.0.0"), store.root / "copied-by-hand.db")
    (store.root / "local__other__9.0.0.db").write_bytes(b"not a package")  # named for another: never opened
    assert [i.label for i in store.find("my_lib")] == ["my_lib@3.0.0", "my_lib@2.0.0", "my_lib@1.0.0"]
    assert [i.label for i in store.find("my_lib@2.0.0")] == ["my_lib@2.0.0"]
    assert [i.label for i in store.find("local/@scope/pkg")] == ["@scope/pkg@1.0.0"]
    assert store.resolve("my_lib").label == "my_lib@3.0.0"
    assert store.find("npm/my_lib") == []
    every = [i.label for i in store.installed()]
    assert every == ["@scope/pkg@1.0.0", "my_lib@3.0.0", "my_lib@2.0.0", "my_lib@1.0.0", "other@1.0.0"]
    assert [i.label for i in store.find("other")] == ["other@1.0.0"]
