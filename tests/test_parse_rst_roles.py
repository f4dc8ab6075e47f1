"""Which role names `register_for` finds in a page (it gives docutils a handler for each one
it lacks): a prefix role not glued to a word, or a suffix role right after a backquote."""

from __future__ import annotations

from docutils.parsers.rst import roles

from context_cli.parse.rst_sphinx import register_for


def test_prefix_and_suffix_roles_are_found_and_glued_ones_are_not() -> None:
    register_for(":zzprefix:`a` and `b`:zzsuffix: and x:zzglued:`c` and :zzdotted.name:`d` "
                 "and ``:zzinliteral:`` and :zznotarole: here")
    for name in ("zzprefix", "zzsuffix", "zzdotted.name", "zzinliteral"):
        assert name in roles._roles, name
    for name in ("zzglued", "zznotarole"):
        assert name not in roles._roles, name


def test_a_role_at_the_very_start_of_a_page_is_found() -> None:
    register_for(":zzfirst:`x`")
    assert "zzfirst" in roles._roles
