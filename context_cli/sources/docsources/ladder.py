"""The docs-source ladder: for `registry/name@version`, the best documentation there is.

Steps, first success wins (`installed` and `registry server` come before these; sync tries
them itself and hands its reasons in as `earlier`):

1. `definition`: a catalogue definition (ours or Neuledge's): its git or zip source at the
   range's tag, or its artefact source with its docs path and exclusions;
2. `runtime`: for a type-only package (`@types/react`, `types-requests`), the runtime library's
   docs through these same steps, at the release the stubs track (`stubs.py`), labelled with
   that library and release; a runtime library with no more than a README is no answer here;
3. `repository`: the source repository at this version's exact tag (the definition's
   `repository` and tag pattern first, else the index metadata's), the docs tree located by
   `tree.best_tree`, and refused when most of its pages are stubs (`tree.thin_pages`);
4. `artefact`: the released sdist or tarball's own docs folder (a wheel's, for a PyPI release
   without an sdist; wheels rarely ship one);
5. `site`: the docs site the definition or else the metadata names (`site.fetch_docs_site`):
   its llms.txt / llms-full.txt / `.md` pages or crawl, for the exact version; the site as it
   is now only where the definition allows it, labelled `latest`;
6. `readme`: the artefact's README (a wheel's is the long description in its METADATA), or an
   artefact with neither docs folder nor README; the builder adds the API reference read from
   the code where it can, and the caller labels that `api`.

Every step that fails says why in one line; `Resolved.attempts` keeps them, and `NoDocs` says
them all. A step that raises something unexpected is a failed step, never the end of a sync.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import ContextError, SourceError
from ..base import Fetched, SourceOptions

STEPS = ("definition", "runtime", "repository", "artefact", "site", "readme")


@dataclass(frozen=True)
class Attempt:
    step: str
    ok: bool
    reason: str

    def __str__(self) -> str:
        return f"{self.step}: {self.reason}"


@dataclass
class Resolved:
    fetched: Fetched
    step: str  # the step that won
    readme_only: bool
    attempts: list[Attempt] = field(default_factory=list)

    def tried(self) -> str:
        return "; ".join(str(a) for a in self.attempts if not a.ok)


class NoDocs(SourceError):
    """No step gave anything to build; the message says what each step found."""

    def __init__(self, spec: str, attempts: list[Attempt]) -> None:
        self.attempts = attempts
        super().__init__(f"no docs for {spec}: tried " + "; ".join(str(a) for a in attempts))


def resolve(registry: str, name: str, version: str, *, definition: Any = None,
            earlier: list[Attempt] | None = None, use_catalogue: bool = True) -> Resolved:
    """Fetch the best docs of `registry/name@version`; the caller must `cleanup()` the result.

    `definition` skips the catalogue look-up (the publisher passes the one it builds).
    """
    attempts = list(earlier or [])
    run = _Run(registry, name, version, attempts)
    if definition is None and use_catalogue:
        definition = run.find_definition()
    readme: Fetched | None = None
    try:
        for step in STEPS[:-1]:
            got = run.step(step, definition)
            if got is None:
                continue
            if step in ("definition", "artefact") and _is_readme(got):
                attempts.append(Attempt(step, False, "has only a README"))
                if readme is None:
                    readme = got
                else:
                    got.cleanup()
                continue
            attempts.append(Attempt(step, True, got.notes[-1] if got.notes else "built"))
            got.meta.setdefault("docs_source", step)
            _tell(got, attempts)
            if readme is not None:
                readme.cleanup()
            return Resolved(got, step, False, attempts)
    except BaseException:
        if readme is not None:
            readme.cleanup()
        raise
    if readme is None:
        raise NoDocs(f"{registry}/{name}@{version}", attempts)
    attempts.append(Attempt("readme", True, "the release's README" if readme.docs_path else
                            "the release itself (no docs folder and no README)"))
    readme.meta["docs_source"] = "readme"
    _tell(readme, attempts)
    return Resolved(readme, "readme", True, attempts)


def _is_readme(fetched: Fetched) -> bool:
    """Whether a step found no more than a README: a README file, or a released artefact with
    no docs folder and no README at all (whatever else it holds, it is not documentation)."""
    from ..unpacked import README_NAME

    if not fetched.docs_path:
        return fetched.source_type in ("pypi", "npm")
    return bool(README_NAME.match(fetched.docs_path.rsplit("/", 1)[-1]))


def _tell(fetched: Fetched, attempts: list[Attempt]) -> None:
    failed = [str(a) for a in attempts if not a.ok]
    if failed:
        fetched.notes.append("tried first: " + "; ".join(failed))


class _Run:
    """One resolution's state: the index document is fetched once and shared by the steps."""

    def __init__(self, registry: str, name: str, version: str, attempts: list[Attempt]) -> None:
        self.registry, self.name, self.version, self.attempts = registry, name, version, attempts
        self._doc: dict[str, Any] | None = None
        self._doc_error: str | None = None

    def fail(self, step: str, reason: str) -> None:
        self.attempts.append(Attempt(step, False, reason))

    def step(self, step: str, definition: Any) -> Fetched | None:
        steps: dict[str, Callable[[Any], Fetched | None]] = {
            "definition": self.from_definition, "runtime": self.from_runtime, "repository": self.from_repository,
            "artefact": self.from_artefact, "site": self.from_site}
        try:
            return steps[step](definition)
        except ContextError as e:
            self.fail(step, str(e))
        except Exception as e:  # a hostile definition, repository or site: one line, go on
            self.fail(step, f"failed ({type(e).__name__}: {str(e)[:200]})")
        return None

    def index_doc(self) -> dict[str, Any] | None:
        if self._doc is None and self._doc_error is None:
            from .metadata import index_doc

            try:
                self._doc = index_doc(self.registry, self.name)
            except ContextError as e:
                self._doc_error = str(e)
        return self._doc

    def find_definition(self) -> Any:
        from .catalogue import load_catalogue

        catalogue = load_catalogue()
        found = catalogue.find(self.registry, self.name)
        if found is None:
            self.fail("definition", "none in the catalogue" + (
                f" (catalogue problems: {catalogue.problems[0]})" if catalogue.problems else ""))
        return found

    # -- the steps ---------------------------------------------------------------------------

    def from_definition(self, definition: Any) -> Fetched | None:
        if definition is None:
            return None
        from registry.fetch import fetch_defined

        if definition.versioned and definition.range_for(self.version) is None:
            self.fail("definition", f"{definition.origin or definition.key} covers no range with {self.version}")
            return None
        version = self.version if definition.versioned else "latest"
        fetched, source = fetch_defined(definition, version)
        if not definition.versioned and source.type in ("git", "zip"):
            # An unversioned definition's docs (react.dev's default branch): said, never passed off.
            fetched.meta.update({"docs_version": "latest", "docs_ref": fetched.source_commit or "default branch"})
            fetched.notes.append(f"docs from {fetched.source_url} (latest, not tagged per version)")
        return fetched

    def from_runtime(self, definition: Any) -> Fetched | None:
        from .metadata import index_doc
        from .stubs import runtime_of, tracked_release

        runtime = runtime_of(self.registry, self.name, self.version)
        if runtime is None:
            return None
        release = tracked_release(self.registry, index_doc(self.registry, runtime.name), runtime)
        if release is None:
            self.fail("runtime", f"{runtime.name} has no release {runtime.series}.x")
            return None
        try:
            inner = resolve(self.registry, runtime.name, release)
        except NoDocs as e:
            self.fail("runtime", str(e)[:600])
            return None
        fetched = inner.fetched
        if inner.readme_only:
            fetched.cleanup()
            self.fail("runtime", f"{runtime.name} {release} has only a README")
            return None
        # Built under the stubs' own name and version; the label says whose docs these are.
        covers = fetched.meta.get("docs_version") or release
        ref = fetched.meta.get("docs_ref") or fetched.source_commit
        read = fetched.source_url if not ref or ref == fetched.source_url or fetched.source_type in (
            "pypi", "npm") else f"{fetched.source_url}#{ref}"
        fetched.meta.update({"docs_version": f"{runtime.name}@{covers}", "docs_ref": read,
                             "docs_source": "runtime"})
        fetched.name, fetched.version, fetched.registry = self.name, self.version, self.registry
        fetched.notes.append(f"the docs of {runtime.name} {release} ({inner.step}), whose types this is")
        return fetched

    def from_repository(self, definition: Any) -> Fetched | None:
        from ..git import fetch_git, list_tags
        from .guard import check_public
        from .metadata import Repository, normalise, repository_of
        from .tree import thin_pages

        reasons: list[str] = []
        repo = None
        if definition is not None and definition.repository:
            url = normalise(definition.repository)
            if url:
                repo = Repository(check_public(url))
        if repo is None:
            doc = self.index_doc()
            if doc is None:
                self.fail("repository", f"no metadata ({self._doc_error})")
                return None
            repo = repository_of(self.registry, doc, self.version, reasons)
        if repo is None:
            self.fail("repository", "; ".join(reasons) or "the index names no source repository")
            return None
        tags = set(list_tags(repo.url, untrusted=True))
        wanted = self.tag_candidates(definition)
        tag = next((t for t in wanted if t in tags), None)
        if tag is None:
            from ..git import clean_url

            self.fail("repository", f"{clean_url(repo.url)} has no tag {' or '.join(wanted[:4])}")
            return None
        opts = SourceOptions(tag=tag, near=repo.directory, untrusted=True, require_docs=True)
        fetched = fetch_git(repo.url, opts)
        if fetched.folder is not None and fetched.docs_path:
            pages, stubs = thin_pages(fetched.folder / fetched.docs_path)
            if 2 * stubs > pages:
                fetched.cleanup()
                self.fail("repository", f"the docs tree {fetched.docs_path}/ at tag {tag} is mostly stubs "
                          f"({stubs} of {pages} pages point elsewhere)")
                return None
        fetched.notes.append(f"docs tree {fetched.docs_path}/ of {fetched.source_url} at tag {tag}")
        fetched.meta["docs_ref"] = tag
        return fetched

    def tag_candidates(self, definition: Any) -> list[str]:
        v, name = self.version, self.name
        short = name.rsplit("/", 1)[-1]
        out = []
        if definition is not None and definition.versioned:
            chosen = definition.range_for(v)
            if chosen is not None and chosen.docs_version is None:  # a docs repository's range names no tag
                out.append(chosen.tag_for(v))
        out += [f"v{v}", v, f"{name}@{v}", f"{short}@{v}", f"{short}-v{v}", f"{short}-{v}",
                f"release-{v}", f"{short}_{v}"]
        return list(dict.fromkeys(out))

    def from_artefact(self, definition: Any) -> Fetched | None:
        from ..artefact import REGISTRY_OF, fetch_npm, fetch_pypi

        kind = next((k for k, r in REGISTRY_OF.items() if r == self.registry), None)
        if kind is None:
            self.fail("artefact", f"{self.registry} releases are not built (their docs live in the code)")
            return None
        if definition is not None and getattr(definition.source, "type", None) in ("pypi", "npm"):
            return None  # the definition step fetched it already
        fetch = fetch_pypi if kind == "pypi" else fetch_npm
        return fetch(self.name, self.version)

    def from_site(self, definition: Any) -> Fetched | None:
        from .metadata import docs_site_of
        from .site import fetch_docs_site

        defined = getattr(definition, "site", None)
        if defined is not None:
            return fetch_docs_site(defined.url, self.version, latest=defined.latest, guarded=False)
        doc = self.index_doc()
        site = docs_site_of(self.registry, doc, self.version) if doc is not None else None
        if site is None:
            self.fail("site", "the metadata names no documentation site")
            return None
        return fetch_docs_site(site, self.version)


def resolve_spec(spec: str) -> Resolved:
    """`pypi:NAME[==VER]` / `npm:NAME[@VER]` through the ladder (the newest release when no
    version is given, as the artefact fetcher chooses it)."""
    from ..artefact import REGISTRY_OF, parse_artefact_spec
    from .metadata import index_doc, latest_version

    kind, name, version = parse_artefact_spec(spec)
    registry = REGISTRY_OF[kind]
    if registry == "pip":
        from packaging.utils import canonicalize_name

        name = str(canonicalize_name(name))
    doc = index_doc(registry, name)
    version = latest_version(registry, doc, version)
    resolved = resolve(registry, name, version)
    resolved.fetched.registry, resolved.fetched.name, resolved.fetched.version = registry, name, version
    return resolved
