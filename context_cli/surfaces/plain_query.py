"""`context query LIBRARY TOPIC`, the form agents run (Neuledge Context's), answered without
click.

Loading click and the command group costs a cold query about 7 % of its instructions
(docs/performance.md, "Eighteenth round"), for parsing two words. `is_plain` accepts only a
command line that click would run with every default: exactly `query`, a library and a
topic, neither starting with `-`; anything else (an option, `--help`, a missing argument)
goes through click as before. Both ways print the same bytes and exit with the same status:
the answer is `answer_text`, which the click command prints too, and errors are shown by
click's own `echo`, loaded only then.
"""

from __future__ import annotations

import codecs
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

# Set by a shell asking click for completions: click names it after the program, not one of
# our settings (docs/configuration.md lists those).
COMPLETION_VAR = "_{}_COMPLETE".format("context".upper())


def is_plain(args: list[str]) -> bool:
    """Is this `query LIBRARY TOPIC` with nothing else, printing to a UTF-8 stdout (where
    click writes to `sys.stdout` as it is), not a shell's completion request?"""
    return (len(args) == 3 and args[0] == "query" and not any(a.startswith("-") for a in args[1:])
            and sys.stdout is not None and _utf8(getattr(sys.stdout, "encoding", None))
            and COMPLETION_VAR not in os.environ)


def _utf8(encoding: str | None) -> bool:
    try:
        return encoding is not None and codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def answer_text(library: str, topic: str, *, budget: int, pretty: bool = False, project: Path | None = None,
                no_project: bool = False) -> str:
    """What `context query` prints: the answer's JSON (see `json_text`)."""
    from ..search.engine import SearchOptions, answer
    from ..store.store import Store
    from .project import project_scope, resolve_in_scope

    store = Store()
    pkg = resolve_in_scope(store, library, project_scope(store, project, no_project))
    return json_text(answer(topic, [pkg], SearchOptions(budget=budget)).to_dict(), pretty=pretty)


def json_text(data: object, *, pretty: bool) -> str:
    """An answer's JSON: indented for a person (a terminal, or `pretty`); piped, it is for a
    program, one line without indentation (12 % smaller on a real answer)."""
    from ..search.answer import dumps
    from .render import json_safe

    terminal = sys.stdout is not None and sys.stdout.isatty()  # a stream closed at start is None
    return json_safe(dumps(data, indent=2 if pretty or terminal else None))


def run(library: str, topic: str) -> int:
    """Print the answer, or the error line click would print; the exit status click would give."""
    from ..errors import ContextError, clip
    from ..search.engine import DEFAULT_BUDGET
    from .process import ERROR_CHARS
    from .render import terminal_safe

    try:
        text = answer_text(library, topic, budget=DEFAULT_BUDGET)
    except ContextError as e:
        return _tell(f"Error: {terminal_safe(clip(str(e), ERROR_CHARS))}", 1)
    except KeyboardInterrupt:
        return _tell("Interrupted: stopped.", 130)
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left: status 1 and nothing more, as click does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (so no later flush fails)
        return 1
    return 0


def _tell(message: str, status: int) -> int:
    import click  # its stderr handling, exactly as the full command line's

    click.echo(message, err=True)
    return status
