"""The package of one version of a library, for `changes`: installed, else through the usual
chain (the registry server, then a build from the released artefact), as `sync` gets docs."""

from __future__ import annotations

from ..errors import ContextError
from ..store.store import Installed, Spec, Store


def registry_of(store: Store, spec: Spec) -> str:
    """The registry `spec` means: its own, else that of an installed version of the name."""
    if spec.registry:
        return spec.registry
    found = store.find(Spec(spec.name))
    if found:
        return found[0].id.registry
    raise ContextError(f"{spec.name} is not installed in any version; say which registry, e.g. "
                       f"pip/{spec.name} or npm/{spec.name}")


def obtain(store: Store, registry: str, name: str, version: str, *, fetch: bool = True) -> Installed:
    """Exactly `name` `version`: installed, else (with `fetch`) downloaded from the registry
    server, else built from the released artefact (pip and npm); never another version."""
    found = store.find(Spec(name, version, registry))
    if found:
        return found[0]
    if not fetch:
        raise ContextError(f"{registry}/{name}@{version} is not installed (run without --no-fetch to get it)")
    from ..sync import actions

    reasons = []
    try:
        actions.install_from_server(store, registry, name, version)
    except ContextError as e:
        reasons.append(f"registry server: {e}")
        if not actions.can_build(registry):
            raise ContextError(f"{registry}/{name}@{version}: {'; '.join(reasons)}") from None
        try:
            actions.build_docs(store, registry, name, version, reasons)
        except ContextError as e2:
            reasons.append(f"release: {e2}")
            raise ContextError(f"cannot get {registry}/{name}@{version} ({'; '.join(reasons)})") from None
    return store.resolve(Spec(name, version, registry))
