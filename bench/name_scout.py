"""Do the descriptions of a package's API-named sections find the page a question's answer is on?

    python bench/name_scout.py DUMP --home H [--set NAME ...] [--style question] [--sentences 1] [--show N]

Reads `bench/retrieval.py --dump` (hybrid rows) and each set's package in the home H. A section
is *named* when its own heading is an API name (`identifiers.identifier`: a dot, an
underscore, a hump or a call's `()` on one name: `LOGIN_REDIRECT_URL`, `post_save`,
`nextTick()`, `Session.execute`; or one word in lower case: `choices`, `hero`). Each named section is described as "name: its first
sentence(s)" (the first prose paragraph of its text, markup dropped), and every question is
matched against those descriptions alone, by BM25 over them (the package's stemmer), by the
static model's cosine, and by both (reciprocal ranks). Each ranking of descriptions gives a
ranking of their pages.

Printed per group of questions (the misses whose gold section is headed by a name the
question never says, as `vocab_gap.py` counts them; the other misses; the hits): how often
the gold page is the descriptions' first page, in their first 5 and 10, and how often it
stands higher there than in the search's own ranking; and for every question, how often the
descriptions' first page is a gold one (a boost to it would help) or not (would hurt).

    NS_SIDE=dense NS_W=0.3 NS_Z0=2 NS_ZCAP=6 python bench/name_scout.py rank --home H --set ...

`rank` runs `bench/retrieval.py` (its options) with one page bonus more: each candidate page
gains NS_W x (its best named section's description score - NS_Z0) / (NS_ZCAP - NS_Z0),
clipped to [0, 1], where the score is the description's cosine z among the package's named
sections (`dense`), its BM25 over the descriptions as a z among them (`bm25`), or the larger
(`both`); NS_SENT sentences a description (1); NS_UNSAID=1: only the sections whose name the
question does not say (all of its words) count. The ranking code is untouched (the bonus rides
on the page's title match, which the page bonus weighs by `title_weight`).
"""

from __future__ import annotations

import math
import re
import sqlite3
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from retrieval import SETS, load_questions  # noqa: E402
from vocab_gap import _CODE, _WORD, dump_options, dump_rows  # noqa: E402

_PART = re.compile(r" \(part \d+\)$")
_NAME = re.compile(r"[\w$.@/:#-]+(?:\(\))?")
_MARKUP = re.compile(r"`|\*\*|(?<!\w)_(?=\w)|(?<=\w)_(?!\w)|:[\w:.+-]+:(?=`)|\[([^\]]*)\]\([^)]*\)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")
KINDS = ("bm25", "dense", "both")


def api_name(section_title: str) -> str | None:
    """The API name a section's own heading is (`post_save`, `Session.execute()`), or None."""
    from context_cli.package.identifiers import identifier

    heading = _PART.sub("", section_title.rsplit(" > ", 1)[-1]).strip().strip("`").strip()
    m = _NAME.match(heading)
    if m is None:
        return None
    rest = heading[m.end():].strip()
    if rest and not rest.startswith(("(", "[", "<", ":", "=")):  # words after the name: a heading of words
        return None
    name = m.group(0)
    if re.fullmatch(r"[a-z][\w$]*(?:\(\))?", name):  # one lower-case word: an option or a setting (`choices`, `hero`)
        return name.removesuffix("()")
    return identifier(name)


def description(content: str, sentences: int) -> str:
    """The first `sentences` sentences of the section's first prose paragraph (no heading,
    code, bare code line or list of fields), inline markup dropped."""
    para: list[str] = []
    fenced = False
    for line in content.splitlines():
        s = line.strip()
        if s.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or line.startswith(("    ", "\t")) or s.startswith(("#", "|", ">>>", "$ ", ":")):
            if para:
                break
            continue
        if not s:
            if para:
                break
            continue
        if not para and re.fullmatch(r"`[^`]+`", s):  # the entry's name as code (`django...post_save`)
            continue
        para.append(s)
    text = " ".join(para)
    text = _MARKUP.sub(lambda m: m.group(1) or "", text)
    return " ".join(_SENTENCE.split(text)[:sentences])[:400]


@dataclass
class Named:
    """A package's named sections: their pages, names, descriptions, BM25 statistics and vectors."""

    paths: list[str]
    names: list[str]
    texts: list[str]
    stems: list[Counter[str]]
    df: Counter[str]
    vectors: np.ndarray

    def bm25(self, query_stems: list[str], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
        n = len(self.texts)
        avg = sum(sum(c.values()) for c in self.stems) / max(n, 1)
        out = np.zeros(n)
        for s in set(query_stems):
            if not self.df[s]:
                continue
            idf = math.log(1 + (n - self.df[s] + 0.5) / (self.df[s] + 0.5))
            for i, c in enumerate(self.stems):
                if tf := c[s]:
                    out[i] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * sum(c.values()) / avg))
        return out


def named_sections(db: sqlite3.Connection, sentences: int) -> Named:
    from context_cli.embed.model import load_model
    from context_cli.package.bm25 import stemmer
    from context_cli.package.identifiers import parts

    paths, names, texts = [], [], []
    for path, title, content in db.execute("SELECT doc_path, section_title, content FROM chunks ORDER BY id"):
        name = api_name(title)
        if name is not None:
            paths.append(path)
            names.append(name)
            texts.append(f"{name}: {description(content, sentences)}")
    words = [[*_WORD.findall(t.lower()), *parts(n)] for t, n in zip(texts, names, strict=True)]
    table = stemmer().tokens(sorted({w for ws in words for w in ws}))
    stems = [Counter(s for w in ws for s in table.get(w, ())) for ws in words]
    df: Counter[str] = Counter(s for c in stems for s in c)
    vectors = load_model().encode(texts) if texts else np.zeros((0, 1), dtype=np.float32)
    return Named(paths, names, texts, stems, df, vectors)


def page_order(scores: np.ndarray, paths: list[str]) -> list[str]:
    """The pages of the sections scored above 0, best first, each once."""
    out: list[str] = []
    for i in np.argsort(-scores, kind="stable"):
        if scores[i] <= 0:
            break
        if paths[i] not in out:
            out.append(paths[i])
    return out


def rankings(named: Named, question: str) -> dict[str, list[str]]:
    """The named sections' pages for a question: by BM25, by cosine, by both."""
    from context_cli.embed.model import load_model
    from context_cli.search.query import Query

    if not named.texts:
        return {k: [] for k in KINDS}
    query = Query.of(question)
    toks = query.unit_tokens
    lex = named.bm25([s for t in query.terms for s in toks[t]])
    cos = named.vectors @ load_model().encode([question])[0]
    z = (cos - cos.mean()) / (cos.std() or 1.0)
    rr = np.zeros(len(lex))
    for scores in (lex, z):
        order = np.argsort(-scores, kind="stable")
        rr[order] += 1 / (60 + np.arange(1, len(order) + 1))
    rr[(lex <= 0) & (z <= 1.0)] = 0.0  # neither side found it
    return {"bm25": page_order(lex, named.paths), "dense": page_order(np.where(z > 0, z, 0), named.paths),
            "both": page_order(rr, named.paths)}


def group_of(q: dict, gold_rank: int | None) -> str:  # type: ignore[type-arg]
    """The question's group: a hit; a miss whose gold section is a named one (its heading an
    API name, `api_name`) the question does not say; another miss whose gold heading is
    written as code and not said (`vocab_gap.py`'s 42 are these two); another miss."""
    from retrieval import _plain

    from context_cli.package.identifiers import parts

    if gold_rank == 1:
        return "hits"
    heads = [s.get("heading", "") for s in q.get("gold_sections") or []]
    said = {w.lower() for w in _WORD.findall(q["question"])}
    names = [n for n in (api_name(_plain(h)) for h in heads) if n is not None]
    if any(not set(parts(n)) <= said for n in names):
        return "misses, gold section named, unsaid"
    if any(_CODE.search(h) and not ({w.lower() for w in _WORD.findall(h)} <= said) for h in heads):
        return "misses, gold heading has unsaid code"
    return "other misses"


def main() -> None:
    ap = dump_options(__doc__)
    ap.add_argument("--sentences", type=int, default=1, help="sentences of each description")
    ap.add_argument("--show", type=int, default=0, help="print so many target misses with the descriptions' first pages")
    args = ap.parse_args()
    rows = dump_rows(args)
    count: dict[str, Counter[str]] = defaultdict(Counter)
    first: dict[str, Counter[str]] = defaultdict(Counter)  # over every question: the first page gold or not
    shown = 0
    print("| set | sections | named | share |\n|---|---|---|---|")
    for name in dict.fromkeys(r["set"] for r in rows):
        db = sqlite3.connect(args.home / "packages" / f"local__{name}__1.0.0.db")
        named = named_sections(db, args.sentences)
        total = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        db.close()
        print(f"| {name} | {total} | {len(named.texts)} | {len(named.texts) / total:.1%} |")
        questions = {q["id"]: q for q in load_questions(SETS[name][1])}
        for r in (r for r in rows if r["set"] == name):
            q = questions[r["id"]]
            group = group_of(q, r["gold_rank"])
            gold = {p for p, g in (q.get("grades") or {p: 2 for p in q["gold"]}).items() if g == 2}
            count[group]["questions"] += 1
            count[group]["gold page has a named section"] += bool(gold & set(named.paths))
            for kind, pages in rankings(named, q["question"]).items():
                at = next((i for i, p in enumerate(pages, 1) if p in gold), None)
                for k in (1, 5, 10):
                    count[group][f"{kind} @{k}"] += at is not None and at <= k
                count[group][f"{kind} above search"] += at is not None and (r["gold_rank"] is None or at < r["gold_rank"])
                if pages:
                    first[kind]["gold" if pages[0] in gold else "not gold"] += 1
                    first[kind][f"gold, {group}" if pages[0] in gold else f"not gold, {group}"] += 1
                else:
                    first[kind]["none"] += 1
            if args.show and shown < args.show and group.startswith("misses"):
                shown += 1
                pages = rankings(named, q["question"])["both"][:3]
                print(f"  {name}:{q['id']} {q['question']!r} gold {sorted(gold)} search rank {r['gold_rank']}; "
                      f"descriptions' first {pages}")
    print(f"\nstyle {args.style}, {args.sentences} sentence(s) a description\n")
    keys = ["questions", "gold page has a named section",
            *(f"{kind} {m}" for kind in KINDS for m in ("@1", "@5", "@10", "above search"))]
    groups = list(count)
    print("| | " + " | ".join(groups) + " |\n|---|" + "---|" * len(groups))
    for key in keys:
        print(f"| {key} | " + " | ".join(str(count[g][key]) for g in groups) + " |")
    print("\nthe descriptions' first page, over every question:")
    for kind in KINDS:
        print(f"  {kind}: " + ", ".join(f"{k} {v}" for k, v in sorted(first[kind].items())))


_named: dict[str, Named] = {}


def page_bonus(named: Named, question: str, env: dict[str, float], side: str) -> dict[str, float]:
    """Each page's bonus for the question: NS_W x its best named section's score above NS_Z0."""
    from context_cli.embed.model import load_model
    from context_cli.search.query import Query

    if not named.texts:
        return {}
    sides = []
    if side in ("dense", "both"):
        cos = named.vectors @ load_model().encode([question])[0]
        sides.append((cos - cos.mean()) / (cos.std() or 1.0))
    if side in ("bm25", "both"):
        query = Query.of(question)
        lex = named.bm25([s for t in query.terms for s in query.unit_tokens[t]])
        sides.append((lex - lex.mean()) / (lex.std() or 1.0))
    z = np.max(sides, axis=0)
    if env.get("NS_UNSAID"):  # only the names the question does not say
        from context_cli.package.identifiers import parts

        said = {w.lower() for w in _WORD.findall(question)}
        z = np.where([set(parts(n)) <= said for n in named.names], -np.inf, z)
    z0, cap = env.get("NS_Z0", 2.0), env.get("NS_ZCAP", 6.0)
    value = np.clip((z - z0) / (cap - z0), 0.0, 1.0)
    out: dict[str, float] = {}
    for path, v in zip(named.paths, value.tolist(), strict=True):
        if v > out.get(path, 0.0):
            out[path] = v
    return {p: env.get("NS_W", 0.3) * v for p, v in out.items()}


def patch_engine() -> None:
    """Make `engine.ranked` add the named sections' page bonus (`page_bonus`) to each page's title match."""
    import os

    from context_cli.search import engine

    env = {k: float(v) for k, v in os.environ.items() if k.startswith("NS_") and k != "NS_SIDE"}
    side = os.environ.get("NS_SIDE", "dense")
    original = engine.attach_evidence

    def attach(c, run, params):  # type: ignore[no-untyped-def]
        out = original(c, run, params)
        owner = np.full(len(out.paths), -1)
        owner[out.page] = out.package
        for p, pq in enumerate(out.packages):
            key = str(pq.searcher.pkg.path)
            if key not in _named:
                _named[key] = named_sections(sqlite3.connect(key), int(env.get("NS_SENT", 1)))
            bonus = page_bonus(_named[key], pq.query.whole or pq.query.text, env, side)
            for at in np.flatnonzero(owner == p).tolist():
                if (b := bonus.get(out.paths[at])):
                    out.title_match[at] += b / params.title_weight
        return out

    engine.attach_evidence = attach


if __name__ == "__main__":
    if sys.argv[1:2] == ["rank"]:
        import retrieval

        del sys.argv[1]
        patch_engine()
        retrieval.main()
    else:
        main()
