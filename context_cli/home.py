"""Where context keeps its files on a user's machine ($CONTEXT_HOME, default ~/.context)."""

from __future__ import annotations

from pathlib import Path

from .environment import HOME


def context_home() -> Path:
    """The root folder; tests and users move everything by setting CONTEXT_HOME."""
    env = HOME.value()
    return Path(env).expanduser() if env else Path.home() / ".context"


def packages_dir() -> Path:
    return context_home() / "packages"


def models_dir() -> Path:
    return context_home() / "models"


def config_path() -> Path:
    return context_home() / "config.json"


def auth_path() -> Path:
    return context_home() / "auth.json"
