"""The package of one version of a library, for `changes`: installed, else through the usual
chain (the registry server, then a build through the docs-source ladder), as `sync` gets docs.
A package installed before packages carried their API (no `symbols` table) is rebuilt
through the ladder, which reads the API from the release."""

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
    server, else built from the released artefact (pip and npm); never another version. With
    `fetch`, an installed package without its API is rebuilt with it (`_with_api`)."""
    found = store.find(Spec(name, version, registry))
    if found:
        return _with_api(store, found[0]) if fetch else found[0]
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


def _with_api(store: Store, inst: Installed) -> Installed:
    """`inst` itself if it carries its API (or cannot be rebuilt: `changes` then says what to
    do); else rebuilt through the docs-source ladder and installed in its place."""
    from ..package.reader import open_package
    from ..store.store import Replaced
    from ..sync import actions

    registry, name, version = inst.id.registry, inst.id.name, inst.id.version
    with open_package(inst.path) as pkg:
        if pkg.has_symbols or not actions.can_build(registry):
            return inst
    spec = actions.artefact_spec(registry, name, version)
    try:
        actions.build_docs(store, registry, name, version, ["installed: built before packages carried their API"])
    except Replaced:
        raise ContextError(f"{inst.label} is installed from a registry server without its API reference (built "
                           f"before packages carried one); `context add {spec} --replace` rebuilds it with it") from None
    except ContextError as e:
        raise ContextError(f"{inst.label} has no API reference and rebuilding it failed: {e}") from None
    return store.resolve(Spec(name, version, registry))
