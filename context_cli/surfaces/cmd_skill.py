"""`context skill install`: write the agent's skill or rules file (see `context_cli/skill.py`)."""

from __future__ import annotations

from pathlib import Path

import click

from .render import echo


@click.group("skill")
def skill() -> None:
    """Teach a coding agent to use the installed docs (its skill or rules file)."""


@skill.command("install")
@click.option("--agent", "agents", multiple=True, metavar="AGENT",
              help="claude, cursor, codex, opencode, copilot, gemini, windsurf or cline (repeatable; "
                   "default: the agents this folder shows signs of).")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=".",
              show_default=True, help="The project folder to write into.")
@click.option("--global", "global_", is_flag=True, help="Write the user-wide file instead (claude, codex, "
                                                        "opencode, gemini).")
@click.option("--print", "print_only", is_flag=True, help="Print what would be written; write nothing.")
def install_cmd(agents: tuple[str, ...], folder: Path, global_: bool, print_only: bool) -> None:
    """Write the file that tells an agent to check installed docs first, call get_api before
    using an API it is unsure of, and add new docs sources only with your approval.

    Installing again refreshes the file; a shared file such as AGENTS.md only has its own
    marked section replaced.
    """
    from ..errors import ContextError
    from ..skill import AGENTS, content, detect_agents, install, target

    chosen = list(dict.fromkeys(a.lower() for a in agents)) or detect_agents(folder)
    if not chosen:
        raise ContextError(f"no agent found in {folder}; say which with --agent ({'|'.join(AGENTS)})")
    for name in chosen:
        if print_only:
            dest = target(name, folder, global_=global_)
            current = dest.read_text("utf-8") if dest.is_file() else None
            echo(f"--- {dest}")
            echo(content(name, current), nl=False)
            continue
        written = install(name, folder, global_=global_)
        echo(f"{'Wrote' if written.changed else 'Unchanged'} {written.path} ({name})")
