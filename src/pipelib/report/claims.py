"""The papers' claims as data, and their verdicts on this run's result tables (``results/claims.csv``).

Each claim (``src/pipelib/claims.yaml``) names the paper and where it says it, the claim in a sentence, and
the comparison that tests it: which table (a results CSV or a figure's data), which rows (column filters),
which metric, and a kind:

- ``greater``: the ``a`` rows above the ``b`` rows;
- ``increasing`` / ``decreasing``: the ``a`` rows along the column ``x``, from its smallest to its largest value;
- ``within``: the ``a`` and ``b`` rows within ``tolerance`` of each other;
- ``at_least`` / ``at_most``: the ``a`` rows against ``threshold``.

``per`` lists columns over which the claim must hold at every value (each dataset, each epsilon).  Each
comparison reads the rows' 95 % intervals (``<metric>_low``, ``<metric>_high``): *holds* when the intervals
show it, *does not hold* when they show the opposite, *inconclusive* when they overlap in between.  A claim
whose rows are missing, or any of whose rows departs from its paper's privacy/utility regime (a row's
``regime`` column, non-empty), is *untested*, never *does not hold*.  So is an ``at_least`` claim that misses its
threshold on a row that sits at its ``ceiling`` (a column that bounds the metric whatever the method does, such
as reverse k-NN's cluster purity for its label accuracy) when that ceiling lies below the threshold: the
method lost nothing, the representation stopped the row short.  A row below its ceiling keeps its verdict.
Over ``per`` groups: does not hold if any group does not, else inconclusive if any is, else holds.
"""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from ..io import write_csv
from . import regime

CLAIMS_FILE = Path(__file__).resolve().parents[1] / "claims.yaml"
KINDS = ("greater", "increasing", "decreasing", "within", "at_least", "at_most")
VERDICTS = ("holds", "does not hold", "inconclusive", "untested")
CEILING_TOLERANCE = 0.005  # a value this close to its ceiling has lost nothing to the method
CLAIMS_COLUMNS = ["id", "paper", "where", "claim", "verdict", "numbers", "why", "source", "kind", "regime", "preset"]


@dataclass(frozen=True)
class Claim:
    """One finding of a paper and the comparison that tests it."""

    id: str
    paper: str
    where: str
    claim: str
    kind: str
    source: str
    a: dict
    b: dict = field(default_factory=dict)
    metric: str = "accuracy"
    x: str | None = None
    per: tuple = ()
    tolerance: float | None = None
    threshold: float | None = None
    ceiling: str | None = None
    notes: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: unknown kind {self.kind!r}; allowed: {', '.join(KINDS)}")
        if self.kind in ("greater", "within") and not self.b:
            raise ValueError(f"claim {self.id}: kind {self.kind} needs rows b")
        if self.kind in ("increasing", "decreasing") and not self.x:
            raise ValueError(f"claim {self.id}: kind {self.kind} needs the column x")
        if self.kind == "within" and self.tolerance is None:
            raise ValueError(f"claim {self.id}: kind within needs a tolerance")
        if self.kind in ("at_least", "at_most") and self.threshold is None:
            raise ValueError(f"claim {self.id}: kind {self.kind} needs a threshold")
        if self.ceiling and self.kind != "at_least":
            raise ValueError(f"claim {self.id}: a ceiling applies to kind at_least only")


def load_claims(path=CLAIMS_FILE) -> list[Claim]:
    """The claims of ``path`` (a YAML list), checked: unique ids, known kinds, what each kind needs."""
    entries = yaml.safe_load(Path(path).read_text())
    out = []
    for e in entries:
        test = e["test"]
        out.append(
            Claim(
                id=e["id"],
                paper=str(e["paper"]),
                where=e["where"],
                claim=e["claim"],
                kind=test["kind"],
                source=test["source"],
                a=dict(test.get("a") or {}),
                b=dict(test.get("b") or {}),
                metric=test.get("metric", "accuracy"),
                x=test.get("x"),
                per=tuple(test.get("per") or ()),
                tolerance=test.get("tolerance"),
                threshold=test.get("threshold"),
                ceiling=test.get("ceiling"),
                notes=e.get("notes", ""),
            )
        )
    ids = [c.id for c in out]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: claim ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}")
    return out


RANGE = re.compile(r"^(>=|<=|>|<)\s*(-?[0-9.eE+-]+)$")  # a filter such as '>=2': a range of a numeric column
OPS = {">=": "ge", "<=": "le", ">": "gt", "<": "lt"}


def _matches(frame: pd.DataFrame, filters: dict) -> pd.Series:
    """Rows whose columns match every filter: a number equal to 0.1 % (an accountant's epsilon 4.99998 is 5), a
    range ('>=2'), or text (booleans as text)."""
    keep = pd.Series(True, index=frame.index)
    for column, value in filters.items():
        if column not in frame:
            return pd.Series(False, index=frame.index)
        values = frame[column]
        bound = RANGE.match(value) if isinstance(value, str) else None
        if bound:
            numbers = pd.to_numeric(values, errors="coerce")
            keep &= getattr(numbers, OPS[bound.group(1)])(float(bound.group(2)))
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            keep &= values.astype(str).str.lower() == str(value).lower()
        else:
            keep &= pd.to_numeric(values, errors="coerce").sub(value).abs().le(1e-3 * abs(value))
    return keep


@dataclass
class Side:
    """The measured value of one side of a comparison: its point and 95 % interval."""

    value: float
    low: float
    high: float

    @property
    def half(self) -> float:
        """The interval's half-width (the mean of its two sides; an asymmetric Wilson interval is nearly even)."""
        return (self.high - self.low) / 2

    def text(self, digits: int = 3) -> str:
        if math.isnan(self.low) or self.low == self.high:  # no interval, or an exact (closed-form) value
            return f"{self.value:.{digits}f}"
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def _side(rows: pd.DataFrame, metric: str) -> Side:
    """One row's value and interval.  A measured accuracy without an interval column has none (only a threshold
    can then decide); a closed-form metric (epsilon, delta) is exact: its interval is the point."""
    r = rows.iloc[0]
    value = float(r[metric])
    if f"{metric}_low" in r:
        return Side(value, float(r[f"{metric}_low"]), float(r[f"{metric}_high"]))
    if "accuracy" in metric:
        return Side(value, math.nan, math.nan)
    return Side(value, value, value)


def _order(a: Side, b: Side) -> str:
    """a above b: holds when a's interval lies above b's, does not hold when below, else inconclusive."""
    if math.isnan(a.low) or math.isnan(b.low):
        return "inconclusive"  # no interval: a difference cannot be told from noise
    if a.low > b.high:
        return "holds"
    if b.low > a.high:
        return "does not hold"
    return "inconclusive"


def _rows(filters: dict) -> str:
    """A side's rows as text: 'rows with dataset MNIST, encoder umap_digits' ('rows' without filters)."""
    return "rows" + (" with " + ", ".join(f"{k} {v}" for k, v in filters.items()) if filters else "")


def _group_verdict(c: Claim, frame: pd.DataFrame) -> tuple[str, str]:
    """(verdict, numbers) of one ``per`` group's rows."""
    a_rows = frame[_matches(frame, c.a)]
    if a_rows.empty:
        return "untested", f"no {_rows(c.a)}"
    if c.kind in ("increasing", "decreasing"):
        series = a_rows.sort_values(c.x)
        if len(series) != series[c.x].nunique():
            values = series[c.x].nunique()
            return "untested", f"{len(series)} {_rows(c.a)} at {values} values of {c.x}, one per value needed"
        if len(series) < 2:
            return ("skip", "") if c.per else ("untested", f"needs rows at two values of {c.x} or more")
        first, last = _side(series.head(1), c.metric), _side(series.tail(1), c.metric)
        x0, x1 = series[c.x].iloc[0], series[c.x].iloc[-1]
        numbers = f"{c.x} {x0:g}: {first.text()} -> {c.x} {x1:g}: {last.text()}"
        return _order(last, first) if c.kind == "increasing" else _order(first, last), numbers
    if len(a_rows) != 1:
        return "untested", f"{len(a_rows)} {_rows(c.a)}, one needed"
    a = _side(a_rows, c.metric)
    if c.kind in ("at_least", "at_most"):
        # one more digit where three would print the threshold itself (0.9696 against 0.97 is not "0.970")
        digits = 4 if f"{a.value:.3f}" == f"{c.threshold:.3f}" else 3
        numbers = f"{a.text(digits)} against {c.threshold:g}"
        low, high = (a.value, a.value) if math.isnan(a.low) else (a.low, a.high)
        if c.kind == "at_least":
            v = "holds" if low >= c.threshold else "does not hold" if high < c.threshold else "inconclusive"
            cap = float(a_rows[c.ceiling].iloc[0]) if c.ceiling and c.ceiling in a_rows else math.nan
            if math.isnan(cap):
                return v, numbers
            numbers += f" ({c.ceiling} {cap:.4g})"
            if v != "holds" and cap < c.threshold and a.value >= cap - CEILING_TOLERANCE:
                # the method lost nothing against the bound, and the bound itself is short of the threshold
                return "untested", f"{numbers}: at its {c.ceiling}, which is below the threshold before any noise"
            return v, numbers
        return ("holds" if high <= c.threshold else "does not hold" if low > c.threshold else "inconclusive"), numbers
    b_rows = frame[_matches(frame, c.b)]
    if c.per and b_rows.empty:
        return "skip", ""  # a group with no rows b (a point the other side was not run at)
    if len(b_rows) != 1:
        return "untested", f"{len(b_rows)} {_rows(c.b)}, one needed"
    b = _side(b_rows, c.metric)
    numbers = f"{a.text()} vs {b.text()}"
    if c.kind == "greater":
        return _order(a, b), numbers
    # within: the difference's 95 % interval (the two half-widths in quadrature) inside +-tolerance, or outside
    numbers += f" (within {c.tolerance:g}?)"
    if math.isnan(a.low) or math.isnan(b.low):
        return "inconclusive", numbers
    gap, half = abs(a.value - b.value), math.hypot(a.half, b.half)
    verdict = "holds" if gap + half <= c.tolerance else "does not hold" if gap - half > c.tolerance else "inconclusive"
    return verdict, numbers


def _nominal(value):
    return float(f"{value:.3g}") if isinstance(value, float) and math.isfinite(value) else value


def _regime(frame: pd.DataFrame, c: Claim) -> list[str]:
    """The regime departures of the claim's rows (their ``regime`` column)."""
    if "regime" not in frame:
        return []
    rows = frame[_matches(frame, c.a) | (_matches(frame, c.b) if c.b else False)]
    return sorted({str(f) for f in rows["regime"].dropna() if str(f)})


def verdict(c: Claim, frame: pd.DataFrame | None) -> dict:
    """The claim's row of claims.csv on ``frame`` (its source table; None: not made by this run)."""
    row = {"id": c.id, "paper": c.paper, "where": c.where, "claim": c.claim, "source": c.source, "kind": c.kind}
    if frame is None:
        return {**row, "verdict": "untested", "numbers": "", "why": f"{c.source} is not made by this run", "regime": ""}
    missing = [col for col in (*c.per, *([c.x] if c.x else []), c.metric) if col not in frame]
    if missing:
        return {
            **row,
            "verdict": "untested",
            "numbers": "",
            "why": f"{c.source} has no column {missing[0]}",
            "regime": "",
        }
    regime = _regime(frame, c)
    # group on 3 significant figures: an accountant's epsilon (4.99998) falls with its nominal value (5)
    keys = frame[list(c.per)].apply(lambda col: col.map(_nominal)) if c.per else None
    groups = list(frame.groupby([keys[k] for k in c.per], sort=True)) if c.per else [((), frame)]
    results = []
    for key, rows in groups:
        if c.per and not _matches(rows, c.a).any():
            continue
        v, numbers = _group_verdict(c, rows)
        if v == "skip":
            continue
        label = ", ".join(
            f"{k:g}" if isinstance(k, float) else f"{k}" for k in (key if isinstance(key, tuple) else (key,))
        )
        results.append((v, f"{label}: {numbers}" if c.per else numbers))
    if not results:
        return {**row, "verdict": "untested", "numbers": "", "why": "no rows match", "regime": "; ".join(regime)}
    verdicts = [v for v, _ in results]
    if "untested" in verdicts:
        overall, why = "untested", next(n for v, n in results if v == "untested")
    elif regime:
        overall, why = "untested", "rows outside the paper's regime"
    elif "does not hold" in verdicts:
        overall, why = "does not hold", "the intervals show the opposite" + (" in a group" if c.per else "")
    elif "inconclusive" in verdicts:
        overall, why = "inconclusive", "the 95 % intervals overlap"
    else:
        overall, why = "holds", "the 95 % intervals separate the rows" if c.kind not in ("at_least", "at_most") else ""
    numbers = _numbers(results)
    return {
        **row,
        "verdict": overall,
        "numbers": "" if numbers == why else numbers,  # a reason, not numbers: said once, under why
        "why": why,
        "regime": "; ".join(regime),
    }


MAX_GROUPS = 6  # a claim over more ``per`` groups lists its first and last and those that do not hold


def _numbers(results: list[tuple[str, str]]) -> str:
    """The numbers of a claim's groups, '; '-joined; past MAX_GROUPS, the first and the last group and those whose
    verdict is not 'holds' (up to MAX_GROUPS in all), then how many more and their verdicts."""
    if len(results) <= MAX_GROUPS:
        return "; ".join(n for _, n in results)
    odd = [i for i, (v, _) in enumerate(results) if v != "holds"]
    keep = sorted({0, len(results) - 1, *odd[: MAX_GROUPS - 2]})
    hidden = [v for i, (v, _) in enumerate(results) if i not in keep]
    counts = ", ".join(f"{hidden.count(v)} {v}" for v in VERDICTS if v in hidden)
    return "; ".join(results[i][1] for i in keep) + f"; and {len(hidden)} more groups ({counts})"


def _source(frames: dict, name: str) -> pd.DataFrame | None:
    """The table a claim reads: one source, or every source a glob (``p004_*``) matches, joined."""
    names = [n for n in frames if fnmatch.fnmatchcase(n, name)]
    return pd.concat([frames[n] for n in sorted(names)], ignore_index=True) if names else None


def claims_table(claims: list[Claim], sources: dict, out_csv, preset: str) -> pd.DataFrame:
    """results/claims.csv: every claim's verdict on this run's tables (``sources``: source name -> CSV path)."""
    frames = {name: pd.read_csv(path) for name, path in sources.items()}
    for name, frame in frames.items():  # a figure's rows: the regime of its table's rows (same setting)
        flags = regime.of_figure(name, frame, frames) if "regime" not in frame else None
        if flags is not None:
            frame["regime"] = flags
    rows = [{**verdict(c, _source(frames, c.source)), "preset": preset} for c in claims]
    table = pd.DataFrame(rows, columns=CLAIMS_COLUMNS)
    write_csv(table, out_csv)
    return table


def summary(table: pd.DataFrame) -> list[str]:
    """One line per paper: 'paper 004: 3 of 7 claims hold, 2 inconclusive, 1 does not hold, 1 untested'."""
    lines = []
    for paper, rows in table.groupby("paper", sort=True):
        counts = rows["verdict"].value_counts()
        held = int(counts.get("holds", 0))
        rest = [f"{int(counts[v])} {v}" for v in VERDICTS[1:] if counts.get(v, 0)]
        lines.append(f"paper {paper}: {held} of {len(rows)} claims hold" + (", " + ", ".join(rest) if rest else ""))
    return lines
