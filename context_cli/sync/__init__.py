"""`context sync`: docs for exactly the versions a project's lockfiles name.

Parsers (one module per ecosystem) turn dependency files into `Dep`s; `project` finds the
files of a project; `plan` decides what each dependency needs; `actions` is the one place
that calls other layers (store, registry client, builder); `docslock` writes
`.context/docs.lock`; `scope` reads it back for agents.
"""

from pathlib import Path

# Where a project's docs.lock lives: here, so that finding it (`scope`, on every search)
# does not load the lock's reader and writer (`docslock`).
LOCK_PATH = Path(".context") / "docs.lock"
