"""Version ranges from manifests without a lockfile: which versions satisfy them.

PyPI ranges are PEP 440 (plus Poetry's `^` and `~`); npm ranges are node-semver's common
forms (`^`, `~`, x-ranges, comparators, hyphen ranges, `||`). Pre-releases only match a
range that names one, as both ecosystems do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..versions import MAX_VERSION_CHARS
from .model import MAX_RANGE_CHARS

_SEMVER = re.compile(r"^v?(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?\Z")

SemKey = tuple[int, int, int, tuple[tuple[int, int | str], ...]]


def newest_satisfying(registry: str, wanted: str, versions: Iterable[str]) -> str | None:
    """The highest of `versions` inside the range, or None."""
    ok = [v for v in versions if satisfies(registry, wanted, v)]
    if not ok:
        return None
    if registry == "pip":
        from packaging.version import Version

        return max(ok, key=Version)
    return max(ok, key=lambda v: _sem(v) or (0, 0, 0, ()))


def satisfies(registry: str, wanted: str, version: str) -> bool:
    if len(version) > MAX_VERSION_CHARS or len(wanted) > MAX_RANGE_CHARS:
        return False  # never parsed: a run of 5,000 digits is past what int() reads
    if registry == "pip":
        return _pep440(wanted, version)
    if registry == "npm":
        return _npm(wanted, version)
    return wanted.strip() == version


# -- PyPI ------------------------------------------------------------------------------------


def _pep440(wanted: str, version: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        v = Version(version)
        spec = SpecifierSet(",".join(_poetry_to_pep440(p.strip()) for p in wanted.split(",") if p.strip()))
    except (InvalidSpecifier, InvalidVersion):
        return False
    return spec.contains(v, prereleases=any(s.version and Version(s.version.rstrip(".*")).is_prerelease
                                            for s in spec if not s.version.endswith("*")))


def _poetry_to_pep440(part: str) -> str:
    """`^1.2` -> `>=1.2,<2.0`; `~1.2` -> `>=1.2,<1.3`; `1.2.*` -> `==1.2.*`; `*` -> ``."""
    if part in ("*", ""):
        return ""
    m = re.match(r"^(\^|~(?!=))\s*(\d+(?:\.\d+)*)(.*)$", part)
    if m:
        nums = [int(x) for x in m.group(2).split(".")]
        if m.group(1) == "^":
            i = next((k for k, n in enumerate(nums) if n), len(nums) - 1)
            upper = [*nums[:i], nums[i] + 1]
        else:
            upper = [nums[0] + 1] if len(nums) == 1 else [nums[0], nums[1] + 1]
        return f">={m.group(2)}{m.group(3)},<{'.'.join(map(str, upper))}"
    if re.match(r"^\d", part):
        return f"=={part}"
    return part


# -- npm -------------------------------------------------------------------------------------


def _sem(version: str) -> SemKey | None:
    m = _SEMVER.match(version.strip())
    if not m or not all(g and g.isdigit() for g in m.group(1, 2, 3)):
        return None
    pre = tuple((0, int(p)) if p.isdigit() else (1, p) for p in (m.group(4) or "").split(".") if p)
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), pre


def _release(key: SemKey) -> tuple[int, int, int]:
    return key[0], key[1], key[2]


def _cmp(a: SemKey, b: SemKey) -> int:
    """semver order: a pre-release sorts below its release."""
    if _release(a) != _release(b):
        return -1 if _release(a) < _release(b) else 1
    if a[3] == b[3]:
        return 0
    if not a[3]:
        return 1
    if not b[3]:
        return -1
    return -1 if a[3] < b[3] else 1


def _npm(wanted: str, version: str) -> bool:
    v = _sem(version)
    if v is None:
        return False
    for alternative in wanted.split("||"):
        comparators = _expand(alternative.strip())
        if comparators is None:
            continue
        if all(_holds(op, bound, v) for op, bound in comparators):
            if not v[3] or any(b[3] and _release(b) == _release(v) for _, b in comparators):
                return True
    return False


def _holds(op: str, bound: SemKey, v: SemKey) -> bool:
    c = _cmp(v, bound)
    return {"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0, "=": c == 0}[op]


def _partial(text: str) -> tuple[list[int], tuple[tuple[int, int | str], ...]] | None:
    m = _SEMVER.match(text)
    if not m:
        return None
    nums = []
    for g in m.group(1, 2, 3):
        if g is None or not g.isdigit():
            break
        nums.append(int(g))
    pre = tuple((0, int(p)) if p.isdigit() else (1, p) for p in (m.group(4) or "").split(".") if p)
    return nums, pre


def _key(nums: list[int], pre: tuple[tuple[int, int | str], ...] = ()) -> SemKey:
    full = [*nums, 0, 0, 0][:3]
    return full[0], full[1], full[2], pre


def _bump(nums: list[int], index: int) -> SemKey:
    """The smallest version above every version that starts with nums[:index+1]."""
    upper = [*nums[:index], nums[index] + 1]
    return _key(upper, ((0, 0),))  # `-0`: below every release and pre-release of it


def _expand(text: str) -> list[tuple[str, SemKey]] | None:
    """One comparator set -> (op, bound) pairs; None when it cannot be read."""
    if text in ("", "*", "x", "X", "latest"):
        return []
    hyphen = re.match(r"^(\S+)\s+-\s+(\S+)$", text)
    if hyphen:
        low, high = _partial(hyphen.group(1)), _partial(hyphen.group(2))
        if not low or not high or not low[0] or not high[0]:
            return None
        upper = ("<=", _key(*high)) if len(high[0]) == 3 else ("<", _bump(high[0], len(high[0]) - 1))
        return [(">=", _key(*low)), upper]
    out: list[tuple[str, SemKey]] = []
    for token in re.sub(r"(>=|<=|>|<|=|\^|~>?)\s+", r"\1", text).split():
        m = re.match(r"^(>=|<=|>|<|=|\^|~>?)?(.+)$", token)
        if not m:
            return None
        op, parsed = m.group(1) or "", _partial(m.group(2))
        if parsed is None:
            return None
        nums, pre = parsed
        if not nums:
            continue  # `*`
        if op == "^":
            i = next((k for k, n in enumerate(nums) if n), len(nums) - 1)
            out += [(">=", _key(nums, pre)), ("<", _bump(nums, i))]
        elif op in ("~", "~>"):
            out += [(">=", _key(nums, pre)), ("<", _bump(nums, min(1, len(nums) - 1)))]
        elif op in ("", "=") and len(nums) < 3:
            out += [(">=", _key(nums)), ("<", _bump(nums, len(nums) - 1))]
        elif op in ("", "="):
            out.append(("=", _key(nums, pre)))
        elif op in (">", "<=") and len(nums) < 3:
            out.append((">=" if op == ">" else "<", _bump(nums, len(nums) - 1)))
        else:
            out.append((op, _key(nums, pre)))
    return out
