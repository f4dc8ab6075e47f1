"""Scout query expansion without touching the ranking code: `bench/retrieval.py` run with
`Bm25Index.units` patched to add weighted extra BM25 units after the query's own.

    EXP=near EXP_W=0.3 EXP_K=2 EXP_MIN=0.6 python bench/expansion_scout.py --set click ...
    EXP=rm3 RM_K=5 RM_M=3 RM_W=0.3 python bench/expansion_scout.py --set click ...
    EXP=zipf ZP_REF=180 ZP_P=1 ZP_FLOOR=0.3 python bench/expansion_scout.py --set click ...

`near`: each query term the package holds in at most EXP_RARE sections gets the package's
EXP_K terms nearest to it by the static model's vectors (cosine at least EXP_MIN, held by at
least EXP_FREQ sections), each added with weight EXP_W x cosine. `rm3`: the first BM25 pass's
top RM_K sections' headings give their RM_M commonest stems (weighted by the sections'
normalised scores; not the query's), added with weight RM_W x their share of the best.
`qnear`: the EXP_K package terms nearest the whole question's vector (cosine at least
EXP_MIN, in at most EXP_MAXSHARE of the sections), each with weight EXP_W x cosine.
`zipf` adds nothing: it scales each query term's BM25 part down by its token vector's length
(`damped`), so that everyday words weigh less (ZP_TITLES=1: only where the section title
holds the word).
`oracle` is a ceiling, not a method: the terms the question's gold pages lack are scaled by
ORACLE_W (0: dropped) in BM25 (ORACLE_DENSE=1: and left out of the text the dense side embeds).
`dprune` is its realistic form: the terms none of the dense side's first DP_K pages holds,
scaled by DP_W.
`learned`: each term's BM25 part x min(1, p / LT_REF) ** LT_P, p a logistic model's chance
that the gold page holds the term (fitted on the other tuning sets' questions).
`flat` raises each term's BM25 part to FL_A.
An added unit adds to BM25 only (not to the terms' coverage): scouted as a phrase is.
EXP_SHOW=1 prints each question's additions. Everything else is `bench/retrieval.py`'s.
"""

from __future__ import annotations

import math
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from context_cli.search import bm25 as bm25_mod  # noqa: E402
from context_cli.search.query import STOPWORDS, Query, words  # noqa: E402

MODE = os.environ.get("EXP", "")
ENV = {k: float(v) for k, v in os.environ.items() if k.startswith(("EXP_", "RM_", "ZP_", "ORACLE_", "DP_", "LT_", "FL_"))}
SHOW = bool(ENV.get("EXP_SHOW"))
_original_units = bm25_mod.Bm25Index.units
_original_encode: Any = None
_vocab: dict[int, tuple[list[str], np.ndarray, np.ndarray]] = {}


def _embedder() -> Any:
    from context_cli.embed.model import load_model

    return load_model()


_forms: dict[str, np.ndarray] = {}


def stem_vectors() -> dict[str, np.ndarray]:
    """Each stem of a whole word of the model's vocabulary -> the mean of its words' token
    vectors, normalised (a real word's vector, where encoding the stem `instanc` is not)."""
    if not _forms:
        from context_cli.package.bm25 import stemmer

        model = _embedder()
        toks = model._json.tokens
        ids = {t: i for i, t in enumerate(toks) if t.isalpha() and t.islower() and len(t) >= 3}
        acc: dict[str, list[int]] = {}
        for word, stems in stemmer().tokens(list(ids)).items():
            if len(stems) == 1:
                acc.setdefault(stems[0], []).append(ids[word])
        for stem, rows in acc.items():
            v = model.vectors[rows].astype(np.float32).mean(axis=0)
            _forms[stem] = v / (np.linalg.norm(v) or 1.0)
    return _forms


def word_vectors(said: list[str]) -> np.ndarray:
    """The query words' vectors: a whole word's token vector, else the model's encoding."""
    model = _embedder()
    out = model.encode(said)
    ids = model._json.vocab
    for i, w in enumerate(said):
        if w in ids:
            v = model.vectors[ids[w]].astype(np.float32)
            out[i] = v / (np.linalg.norm(v) or 1.0)
    return out


def package_terms(index: bm25_mod.Bm25Index) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The package's frequent word stems, their dfs and unit vectors (once per package)."""
    got = _vocab.get(id(index))
    if got is None:
        least = ENV.get("EXP_FREQ", 5)
        rows = [(t, df) for t, df in index.db.execute("SELECT term, df FROM bm25_terms")
                if isinstance(t, str) and t.isalpha() and len(t) >= 3 and df >= least and t not in STOPWORDS]
        forms = stem_vectors()
        if not ENV.get("EXP_RAW"):
            rows = [(t, df) for t, df in rows if t in forms]
        terms = [t for t, _ in rows]
        raw = _embedder().encode(terms) if terms else np.zeros((0, 1))
        vecs = np.array([forms[t] if t in forms else raw[i] for i, t in enumerate(terms)]).reshape(len(terms), -1)
        got = (terms, np.array([df for _, df in rows]), vecs)
        _vocab[id(index)] = got
    return got


def nearest(index: bm25_mod.Bm25Index, query: Query, units: list[Any]) -> list[tuple[str, float]]:
    """(package stem, weight) for the query's rare terms' nearest frequent package terms."""
    terms, dfs, vecs = package_terms(index)
    if not terms:
        return []
    toks = query.unit_tokens
    own = {s for w in query.terms for s in toks[w]}
    rare = [w for w, u in zip(query.terms, units, strict=False)
            if len(toks[w]) == 1 and (u is None or u.df <= ENV.get("EXP_RARE", 2)) and w.isalpha()]
    if not rare:
        return []
    qv = word_vectors(rare)
    cos = qv @ vecs.T
    out: dict[str, float] = {}
    k, least, w = int(ENV.get("EXP_K", 2)), ENV.get("EXP_MIN", 0.6), ENV.get("EXP_W", 0.3)
    for row in cos:
        for j in np.argsort(-row)[:k]:
            if row[j] >= least and terms[j] not in own:
                out[terms[j]] = max(out.get(terms[j], 0.0), w * float(row[j]))
    return list(out.items())


def question_nearest(index: bm25_mod.Bm25Index, query: Query, units: list[Any]) -> list[tuple[str, float]]:
    """(package stem, weight): the EXP_K package terms nearest the whole question's vector
    (cosine at least EXP_MIN, held by at most EXP_MAXSHARE of the sections), not the
    question's own, each with weight EXP_W x cosine."""
    terms, dfs, vecs = package_terms(index)
    if not terms:
        return []
    toks = query.unit_tokens
    own = {s for w in query.words for s in toks.get(w, ())}
    row = vecs @ _embedder().encode([query.text])[0]
    row[dfs > ENV.get("EXP_MAXSHARE", 0.05) * index.n] = -1.0
    k, least, w = int(ENV.get("EXP_K", 3)), ENV.get("EXP_MIN", 0.3), ENV.get("EXP_W", 0.2)
    out = []
    for j in np.argsort(-row):
        if len(out) >= k or row[j] < least:
            break
        if terms[j] not in own:
            out.append((terms[j], w * float(row[j])))
    return out


def feedback(index: bm25_mod.Bm25Index, query: Query, units: list[Any]) -> list[tuple[str, float]]:
    """(stem, weight): the commonest stems of the first pass's top sections' headings."""
    from context_cli.package.bm25 import stemmer

    first = bm25_mod.score_packages([(index.n, units, ())], int(ENV.get("RM_K", 5)))
    if not len(first.cid):
        return []
    share = first.score / first.score.sum()
    heads = dict(index.db.execute(f"SELECT id, section_title FROM chunks WHERE id IN ({','.join('?' * len(first.cid))})",
                                  first.cid.tolist()))
    toks = query.unit_tokens
    own = {s for w in query.words for s in toks.get(w, ())}
    counts: dict[str, float] = {}
    for cid, weight in zip(first.cid.tolist(), share.tolist(), strict=True):
        said = [w for w in words(heads.get(cid, "")) if w not in STOPWORDS and w.isalpha() and len(w) >= 3]
        for stem in {s for t in stemmer().tokens(said).values() for s in t}:
            if stem not in own:
                counts[stem] = counts.get(stem, 0.0) + weight
    best = sorted(counts.items(), key=lambda kv: -kv[1])[:int(ENV.get("RM_M", 3))]
    least = ENV.get("RM_MIN", 0.0)
    top = best[0][1] if best else 1.0
    return [(s, ENV.get("RM_W", 0.3) * c / top) for s, c in best if c >= least]


_norms: dict[str, float] = {}


def norms() -> dict[str, float]:
    """Each whole token of the model's vocabulary -> its vector's length."""
    if not _norms:
        model = _embedder()
        norm = np.linalg.norm(model.vectors.astype(np.float32), axis=1)
        _norms.update({t: float(norm[i]) for t, i in model._json.vocab.items()})
    return _norms


def scaled(query: Query, out: list[Any], factor: dict[str, float]) -> list[Any]:
    """The query's terms' BM25 parts, each scaled by its `factor` (1 where it has none)."""
    for i, term in enumerate(query.terms):
        p, f = out[i], factor.get(term, 1.0)
        if p is not None and f != 1.0:
            out[i] = bm25_mod.Posting(ids=p.ids, contrib=p.contrib * f, df=p.df, in_title=p.in_title)
    return out


def damped(query: Query, out: list[Any]) -> list[Any]:
    """The query's terms' BM25 parts scaled by min(1, |token vector| / ZP_REF) ** ZP_P (not
    below ZP_FLOOR): the static model's vectors are Zipf-weighted, so an everyday word
    ("show", "keep") has a short vector and a topical one ("fixture") a long one."""
    ref, power, floor = ENV.get("ZP_REF", 180.0), ENV.get("ZP_P", 1.0), ENV.get("ZP_FLOOR", 0.3)
    factor = {t: max(floor, min(1.0, norms()[t] / ref) ** power) for t in query.terms if t in norms()}
    if SHOW:
        print(f"  ~ {query.text[:60]!r}: " + ", ".join(f"{t} {f:.2f}" for t, f in factor.items()))
    if not ENV.get("ZP_TITLES"):
        return scaled(query, out, factor)
    for i, term in enumerate(query.terms):  # (only where the section's title holds the word)
        p = out[i]
        if p is not None and p.in_title is not None and factor.get(term, 1.0) < 1.0:
            scale = np.where(p.in_title, factor[term], 1.0)
            out[i] = bm25_mod.Posting(ids=p.ids, contrib=p.contrib * scale, df=p.df, in_title=p.in_title)
    return out


@dataclass
class SetData:
    """A set's package as the gold-reading modes need it: each page's stems, each stem's
    section and page counts, the sections, and the sections' vectors and pages."""

    pages: dict[str, set[str]]
    df: Counter[str]
    sections: int
    page_df: Counter[str]
    matrix: np.ndarray
    paths: list[str]

    def held(self, paths: Any) -> set[str]:
        """The stems any of these pages holds."""
        return set().union(*(self.pages.get(p, set()) for p in paths))

    def dense_pages(self, text: str, k: int) -> list[str]:
        """The first `k` distinct pages of the dense side's ranking for `text`."""
        top: list[str] = []
        for j in np.argsort(-(self.matrix @ _embedder().encode([text])[0])):
            if self.paths[j] not in top:
                top.append(self.paths[j])
                if len(top) >= k:
                    break
        return top


_sets: dict[str, SetData] = {}
_owner: dict[str, tuple[str, list[str]]] = {}  # question -> (its set, its gold pages)


def owner(text: str) -> tuple[str, list[str]] | None:
    """The set a question is of and its gold pages (None: no set's question)."""
    from retrieval import SETS, load_questions

    if not _owner:
        for name, (_, path) in SETS.items():
            if path.exists():
                _owner.update({q["question"]: (name, q["gold"]) for q in load_questions(path)})
    return _owner.get(text)


def set_data(name: str) -> SetData:
    """The set's package in CONTEXT_HOME, read once."""
    import sqlite3

    from vocab_gap import page_stems

    if name not in _sets:
        db = sqlite3.connect(Path(os.environ["CONTEXT_HOME"]) / "packages" / f"local__{name}__1.0.0.db")
        pages, df, n = page_stems(db)
        rows = db.execute("SELECT v.chunk_id, v.vector, c.doc_path FROM vectors v JOIN chunks c ON c.id = v.chunk_id"
                          " ORDER BY v.chunk_id").fetchall()
        m = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.int8).reshape(len(rows), -1).astype(np.float32)
        m /= np.linalg.norm(m, axis=1, keepdims=True).clip(1e-9)
        _sets[name] = SetData(pages, df, n, Counter(x for held in pages.values() for x in held), m, [r[2] for r in rows])
        db.close()
    return _sets[name]


def lacking(query: Query, held: set[str]) -> list[str]:
    """The query's terms some of whose stems `held` lacks."""
    toks = query.unit_tokens
    return [t for t in query.terms if not set(toks[t]) <= held]


def oracle(query: Query, out: list[Any]) -> list[Any]:
    """A ceiling, not a method: the query's terms that its gold pages lack (in any section)
    scaled by ORACLE_W (0: dropped) in BM25, from the sets' gold. What ignoring the words
    that point elsewhere could win at most."""
    found = owner(query.whole or query.text)
    if found is None:
        return out
    held = set_data(found[0]).held(found[1])
    return scaled(query, out, dict.fromkeys(lacking(query, held), ENV.get("ORACLE_W", 0.0)))


def oracle_text(text: str) -> str:
    """The question without its terms that its gold pages lack (stopwords kept): what the
    dense side embeds under ORACLE_DENSE=1."""
    found = owner(text)
    if found is None:
        return text
    query = Query.of(text)
    gone = set(lacking(query, set_data(found[0]).held(found[1])))
    return " ".join(w for w in query.words if w not in gone)


def encode(self: Any, texts: Any, **kw: Any) -> Any:
    return _original_encode(self, [oracle_text(t) for t in ([texts] if isinstance(texts, str) else texts)], **kw)


def dense_pruned(query: Query, out: list[Any]) -> list[Any]:
    """The query's terms that none of the dense side's first DP_K pages holds, scaled by
    DP_W in BM25 (a realistic `oracle`: the dense side's pages as the judge of the topic)."""
    text = query.whole or query.text
    found = owner(text)
    if found is None:
        return out
    data = set_data(found[0])
    held = data.held(data.dense_pages(text, int(ENV.get("DP_K", 10))))
    return scaled(query, out, dict.fromkeys(lacking(query, held), ENV.get("DP_W", 0.0)))


_models: dict[str, np.ndarray] = {}


def term_features(data: SetData, text: str, query: Query) -> list[tuple[str, list[float]]]:
    """Each query term's features for `learned`: its IDF in the package, its token vector's
    length, whether the dense side's first page holds it, the shares of its top 3 and top 10
    pages that do, and the share of the package's pages that do."""
    top = data.dense_pages(text, 10)
    toks, out = query.unit_tokens, []
    for t in query.terms:
        st = set(toks[t])
        if not st:
            continue
        d = min(data.df[x] for x in st)
        on = [st <= data.pages.get(p, set()) for p in top]
        out.append((t, [math.log(1 + (data.sections - d + 0.5) / (d + 0.5)), norms().get(t, 250.0), float(on[0]),
                        sum(on[:3]) / 3, sum(on) / 10, min(data.page_df[x] for x in st) / max(1, len(data.pages))]))
    return out


def fit_terms(sets: list[str]) -> np.ndarray:
    """A logistic model of "the gold page holds this term" over these sets' question-style
    questions (weights for the standardised features, then mean and spread, then bias)."""
    from retrieval import SETS, load_questions

    xs, ys = [], []
    for name in sets:
        data = set_data(name)
        for q in load_questions(SETS[name][1]):
            if (q.get("style") or "question") != "question":
                continue
            query = Query.of(q["question"])
            gone = set(lacking(query, data.held(q["gold"])))
            for t, f in term_features(data, q["question"], query):
                xs.append(f)
                ys.append(float(t not in gone))
    x, y = np.array(xs), np.array(ys)
    mu, sd = x.mean(0), x.std(0).clip(1e-9)
    z = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    for _ in range(30):
        p = 1 / (1 + np.exp(-z @ w))
        w -= np.linalg.solve((z * (p * (1 - p))[:, None]).T @ z + 0.01 * np.eye(len(w)), z.T @ (p - y) + 0.01 * w)
    return np.concatenate([w[:-1], mu, sd, w[-1:]])


def learned(query: Query, out: list[Any]) -> list[Any]:
    """Each term's BM25 part x min(1, p / LT_REF) ** LT_P, p the fitted chance that the gold
    page holds it (the model fitted without the question's own set, for a tuning set)."""
    from rerank_features import TUNING

    text = query.whole or query.text
    found = owner(text)
    if found is None:
        return out
    name = found[0]
    key = name if name in TUNING else "*"
    if key not in _models:
        _models[key] = fit_terms([s for s in TUNING if s != name])
    w = _models[key]
    k = (len(w) - 1) // 3
    coef, mu, sd, bias = w[:k], w[k:2 * k], w[2 * k:3 * k], w[-1]
    ref, power = ENV.get("LT_REF", 0.5), ENV.get("LT_P", 1.0)
    return scaled(query, out, {t: min(1.0, 1 / (1 + math.exp(-(float(((np.array(f) - mu) / sd) @ coef) + bias))) / ref) ** power
                               for t, f in term_features(set_data(name), text, query)})


def flattened(query: Query, out: list[Any]) -> list[Any]:
    """Each term's BM25 part in each section raised to FL_A (< 1: a section that one word
    scores high counts less against one that holds more of the question's words)."""
    a = ENV.get("FL_A", 0.75)
    for i, p in enumerate(out[:len(query.terms)]):
        if p is not None:
            out[i] = bm25_mod.Posting(ids=p.ids, contrib=p.contrib ** a, df=p.df, in_title=p.in_title)
    return out


def units(self: bm25_mod.Bm25Index, query: Query, with_phrases: bool = True) -> list[Any]:
    out = _original_units(self, query, with_phrases)
    if not with_phrases or not query.terms:
        return out
    weighed = {"flat": flattened, "zipf": damped, "oracle": oracle, "dprune": dense_pruned, "learned": learned}.get(MODE)
    if weighed is not None:
        return weighed(query, out)
    extra = {"near": nearest, "qnear": question_nearest, "rm3": feedback}.get(MODE)
    if extra is None:
        return out
    added = extra(self, query, out)
    if SHOW and added:
        print(f"  + {query.text[:70]!r}: {', '.join(f'{s} {w:.2f}' for s, w in added)}")
    found = self.postings([s for s, _ in added])
    for stem, weight in added:
        p = found.get(stem)
        if p is not None:
            out.append(bm25_mod.Posting(ids=p.ids, contrib=p.contrib * weight, df=p.df, in_title=p.in_title))
    return out


if __name__ == "__main__":
    import retrieval

    bm25_mod.Bm25Index.units = units  # type: ignore[method-assign]  # (patched here only, not on import)
    if MODE == "oracle" and ENV.get("ORACLE_DENSE"):
        from context_cli.embed.model import Embedder

        _original_encode = Embedder.encode
        Embedder.encode = encode  # type: ignore[method-assign]
    retrieval.main()
