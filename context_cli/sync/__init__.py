"""`context sync`: docs for exactly the versions a project's lockfiles name.

Parsers (one module per ecosystem) turn dependency files into `Dep`s; `project` finds the
files of a project; `plan` decides what each dependency needs; `actions` is the one place
that calls other layers (store, registry client, builder); `docslock` writes
`.context/docs.lock`; `scope` reads it back for agents.
"""
