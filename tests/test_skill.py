"""`context skill install`: each agent's file in its place, idempotent, shared files kept."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from context_cli.skill import BEGIN, END
from context_cli.surfaces.cli import cli


def run(*args: str):
    return CliRunner().invoke(cli, ["skill", "install", *args])


def test_each_agent_gets_its_file_teaching_the_workflow(tmp_path: Path) -> None:
    r = run("--agent", "claude", "--agent", "cursor", "--agent", "codex", "--dir", str(tmp_path))
    assert r.exit_code == 0, r.output
    skill = (tmp_path / ".claude/skills/context-docs/SKILL.md").read_text()
    rule = (tmp_path / ".cursor/rules/context-docs.mdc").read_text()
    agents = (tmp_path / "AGENTS.md").read_text()
    assert skill.startswith("---\nname: context-docs\ndescription: ") and "alwaysApply: true" in rule
    for text in (skill, rule, agents):
        assert "get_docs" in text and "get_api" in text and "approval" in text
    assert agents.startswith(BEGIN) and agents.rstrip().endswith(END)
    assert r.output.count("Wrote ") == 3


def test_installing_again_changes_nothing_and_keeps_the_users_text(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("# House rules\n\nUse tabs.\n")
    assert run("--agent", "codex", "--dir", str(tmp_path)).exit_code == 0
    first = (tmp_path / "AGENTS.md").read_text()
    assert first.startswith("# House rules\n\nUse tabs.\n\n" + BEGIN)
    (tmp_path / "AGENTS.md").write_text(first + "\n## Later\n\nMore of the user's own text.\n")
    before = (tmp_path / "AGENTS.md").read_text()
    r = run("--agent", "codex", "--agent", "opencode", "--dir", str(tmp_path))
    assert r.exit_code == 0 and r.output.count("Unchanged") == 2
    assert (tmp_path / "AGENTS.md").read_text() == before
    stale = before.replace("Check an API exists", "An older wording")  # our section, edited by an old version
    (tmp_path / "AGENTS.md").write_text(stale)
    assert "Wrote" in run("--agent", "codex", "--dir", str(tmp_path)).output
    assert (tmp_path / "AGENTS.md").read_text() == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".skill-")]  # no temp file left


def test_print_writes_nothing_and_detection_and_bad_agent(tmp_path: Path) -> None:
    r = run("--agent", "claude", "--print", "--dir", str(tmp_path))
    assert r.exit_code == 0 and "get_api" in r.output and not (tmp_path / ".claude").exists()
    r = run("--dir", str(tmp_path))
    assert r.exit_code != 0 and "--agent" in r.output and r.output.count("\n") == 1
    (tmp_path / ".cursor").mkdir()
    r = run("--dir", str(tmp_path))
    assert r.exit_code == 0 and (tmp_path / ".cursor/rules/context-docs.mdc").is_file()
    r = run("--agent", "emacs", "--dir", str(tmp_path))
    assert r.exit_code != 0 and "unknown agent 'emacs'" in r.output and r.output.count("\n") == 1
    r = run("--agent", "cursor", "--global", "--dir", str(tmp_path))
    assert r.exit_code != 0 and "no user-wide" in r.output
