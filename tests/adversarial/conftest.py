"""Marks everything here `adversarial` and gives each test a store holding one good package.

Run only this suite with `pytest -m adversarial`, or skip it with `-m "not adversarial"`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .hostile_packages import good_package
from .runner import StoreSnapshot

HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "adversarial: hostile inputs must fail fast, bounded and in one line")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.adversarial)


@pytest.fixture
def home(context_home: Path, tmp_path: Path) -> Path:
    """$CONTEXT_HOME with one good package installed (`goodlib@1.0.0`): the one that must survive."""
    from context_cli.store.store import Store

    Store(context_home / "packages").install(good_package(tmp_path / "good.db"))
    return context_home


@pytest.fixture
def snapshot(home: Path) -> StoreSnapshot:
    """The store as it was before the hostile step."""
    return StoreSnapshot.take(home)
