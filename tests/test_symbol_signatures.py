"""Signatures are stored without the entry's own name and read back exactly."""

from __future__ import annotations

import pytest

from context_cli.package.symbol_signatures import LAST1, LAST2, packed_signature, signature_text

CASES = [
    ("p.signer.Signer.sign", "Signer.sign(value)", f"{LAST2}(value)"),
    ("p.shortcuts.get_object_or_404", "get_object_or_404(klass, *args, **kwargs)", f"{LAST1}(klass, *args, **kwargs)"),
    ("p.mail.EmailBackend", "class EmailBackend(ConsoleEmailBackend)\nEmailBackend(*args, file_path=None)",
     f"class {LAST1}(ConsoleEmailBackend)\n{LAST1}(*args, file_path=None)"),
    ("p.apps.AppConfig.create", "@classmethod AppConfig.create(entry)", f"@classmethod {LAST2}(entry)"),
    ("p.dispatch.Signal.asend", "async Signal.asend(sender, **named)", f"async {LAST2}(sender, **named)"),
    ("p.db.connection", "connection = ConnectionProxy(connections)", f"{LAST1} = ConnectionProxy(connections)"),
    ("react.useEffect", "function useEffect(effect: EffectCallback): void\nfunction useEffect(): void",
     f"function {LAST1}(effect: EffectCallback): void\nfunction {LAST1}(): void"),
    ("top", "top(x)", f"{LAST1}(x)"),
    ("p.get", "getter()", f"{LAST1}ter()"),  # another name that starts with it reads back too
    ("p.C.get", "C.get_all()", f"{LAST2}_all()"),
    ("p.C.$x", "C.$x: number", f"{LAST2}: number"),
    ("p.f", "", ""),
    ("p.f", "g = f(1)", "g = f(1)"),  # the name is not where a signature names itself
]


@pytest.mark.parametrize(("name", "signature", "stored"), CASES)
def test_signatures_are_stored_without_their_name_and_read_back(name: str, signature: str, stored: str) -> None:
    assert packed_signature(name, signature) == stored
    assert signature_text(name, stored) == signature


def test_the_marks_in_a_signature_are_stored_as_replacement_characters() -> None:
    """No language writes them in a signature; a hostile one that does cannot forge a name."""
    stored = packed_signature("p.f", f"f(x='{LAST1}{LAST2}')")
    assert stored == f"{LAST1}(x='\ufffd\ufffd')"
    assert signature_text("p.f", stored) == "f(x='\ufffd\ufffd')"
