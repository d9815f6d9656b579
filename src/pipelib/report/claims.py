"""The papers' claims as data, and their verdicts on this run's result tables (``results/claims.csv``).

Each claim (``src/pipelib/claims.yaml``) names the paper and where it says it, the claim in a sentence, and
the comparison that tests it: which table (a results CSV or a figure's data), which rows (column filters; the
text ``max`` / ``min`` chooses a column's largest / smallest value in the group), which metric, and a kind:

- ``greater``: the ``a`` rows above the ``b`` rows, by more than ``margin`` (0: any amount) where a magnitude
  is claimed; the difference's 95 % interval (the two half-widths in quadrature) decides;
- ``increasing`` / ``decreasing``: the ``a`` rows along the column ``x`` over every grid point: the endpoints'
  difference decides its direction and the rank correlation over all points (at least ``RHO_MIN`` in the
  claimed direction) that the points between follow it;
- ``gap``: the difference ``b - a`` (a noise-free row minus a private one) at each value of ``x``, tested as a
  trend in ``direction`` (``decreasing``: the gap shrinks);
- ``within``: the ``a`` rows within ``tolerance`` of the ``b`` rows, or of the value ``threshold`` where a
  claim names no rows b ("close to -2"); ``side: below`` makes it one-sided (a loss of ``a`` under ``b`` of
  at most the tolerance; ``a`` above ``b`` is no loss);
- ``at_least`` / ``at_most``: the ``a`` rows against ``threshold``;
- ``headline``: each ``a`` row against the value its paper prints (``paper_accuracy``), within a tolerance
  that tightens near 100 %: ``HEADLINE_SHARE`` of the paper's error, at least ``HEADLINE_MIN``.

``per`` lists columns over whose values the claim must hold (each dataset, each epsilon); with ``distinct``
(the columns that identify a run), groups resting on the same runs (a sweep's default point, shared by several
sweeps) count once.  With ``always: true`` a
``greater`` claim over many groups is judged as a share: groups where both sides sit at the chance floor
(``chance`` + ``CHANCE_MARGIN``) are left out, and it holds when no group shows the opposite and ``a`` leads
in at least ``share`` of them (one group at least separated), does not hold when any group shows the opposite.
Otherwise over ``per`` groups: does not hold if any group does not, else inconclusive if any is, else holds.

A claim is *untested*, never *does not hold*, when its rows are missing, when any of its rows departs from its
paper's privacy/utility regime (a row's ``regime``), or when its rows carry a row flag
(:mod:`pipelib.report.flags`: utility floor, diverged, at ceiling, substitute) that the claim does not
``accepts`` (a claim about that very reference accepts it); flagged groups of a ``per`` claim are left out and
named, and the claim is untested when none remain.  So is an ``at_least`` claim missed by a row at its
``ceiling`` (a column that bounds the metric whatever the method does) below the threshold.  A claim on a
closed form (epsilon, delta, sigma, answers per owner) is exact, read whatever the rows' regime and flags (an
identity of our formulas at the rows' parameters), and summarised apart from trained ones.
A verdict on single-seed rows says so: their interval covers the test set only, not the training's spread.
"""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from scipy.stats import t as _t

from ..config import safe_load
from ..io import write_csv
from ..words import IRREGULAR
from . import flags as rowflags
from . import regime

CLAIMS_FILE = Path(__file__).resolve().parents[1] / "claims.yaml"
KINDS = ("greater", "increasing", "decreasing", "gap", "within", "at_least", "at_most", "headline")
TRENDS = ("increasing", "decreasing")
VERDICTS = ("holds", "does not hold", "inconclusive", "untested")
CEILING_TOLERANCE = 0.005  # a value this close to its ceiling has lost nothing to the method
RHO_MIN = 0.5  # a trend's rank correlation over all its points, in the claimed direction
CHANCE_MARGIN = 0.05  # 'always' claims: a group with both sides this close to chance is left out
HEADLINE_SHARE, HEADLINE_MIN = 0.2, 0.01  # a headline cell within 20 % of the paper's error, at least 1 point
CLAIMS_COLUMNS = [
    "id", "paper", "where", "claim", "verdict", "numbers", "why", "source", "kind", "form", "regime", "flags",
    "preset",
]  # fmt: skip


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
    margin: float = 0.0
    side: str = "two"
    direction: str | None = None
    always: bool = False
    share: float = 0.9
    chance: float | None = None
    accepts: tuple = ()
    distinct: tuple = ()
    notes: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: unknown kind {self.kind!r}; allowed: {', '.join(KINDS)}")
        if self.kind in ("greater", "gap") and not self.b:
            raise ValueError(f"claim {self.id}: kind {self.kind} needs rows b")
        if self.kind == "within" and not self.b and self.threshold is None:
            raise ValueError(f"claim {self.id}: kind within needs rows b or a threshold value")
        if self.kind in (*TRENDS, "gap") and not self.x:
            raise ValueError(f"claim {self.id}: kind {self.kind} needs the column x")
        if self.kind == "gap" and self.direction not in TRENDS:
            raise ValueError(f"claim {self.id}: kind gap needs a direction: increasing or decreasing")
        if self.kind == "within" and self.tolerance is None:
            raise ValueError(f"claim {self.id}: kind within needs a tolerance")
        if self.side not in ("two", "below") or (self.side == "below" and self.kind != "within"):
            raise ValueError(f"claim {self.id}: side {self.side!r}: 'two', or 'below' for kind within")
        if self.kind in ("at_least", "at_most") and self.threshold is None:
            raise ValueError(f"claim {self.id}: kind {self.kind} needs a threshold")
        if self.ceiling and self.kind != "at_least":
            raise ValueError(f"claim {self.id}: a ceiling applies to kind at_least only")
        if self.always and (self.kind != "greater" or not self.per):
            raise ValueError(f"claim {self.id}: always applies to kind greater over per groups")
        unknown = set(self.accepts) - set(rowflags.NAMES)
        if unknown:
            raise ValueError(f"claim {self.id}: accepts unknown flags {sorted(unknown)}; known: {rowflags.NAMES}")

    @property
    def form(self) -> str:
        """'closed form' for a claim on a quantity our formulas give exactly (epsilon, delta, sigma, answers per
        owner), else 'trained' (an accuracy, or a clustering's purity)."""
        return "trained" if "accuracy" in self.metric or "purity" in self.metric else "closed form"


FIELDS = (
    "metric",
    "x",
    "tolerance",
    "threshold",
    "ceiling",
    "margin",
    "side",
    "direction",
    "always",
    "share",
    "chance",
)


def load_claims(path=CLAIMS_FILE) -> list[Claim]:
    """The claims of ``path`` (a YAML list), checked: unique ids, known kinds, what each kind needs."""
    entries = safe_load(Path(path).read_text())
    out = []
    for e in entries:
        test = e["test"]
        unknown = set(test) - {"kind", "source", "a", "b", "per", "accepts", "distinct", *FIELDS}
        if unknown:
            raise ValueError(f"{path}: claim {e['id']}: unknown test fields {sorted(unknown)}")
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
                per=tuple(test.get("per") or ()),
                accepts=tuple(test.get("accepts") or ()),
                distinct=tuple(test.get("distinct") or ()),
                notes=e.get("notes", ""),
                **{k: test[k] for k in FIELDS if k in test},
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
    range ('>=2'), 'max' / 'min' (the column's largest / smallest value in ``frame``), or text (booleans as
    text)."""
    keep = pd.Series(True, index=frame.index)
    for column, value in filters.items():
        if column not in frame:
            return pd.Series(False, index=frame.index)
        values = frame[column]
        bound = RANGE.match(value) if isinstance(value, str) else None
        if value in ("max", "min"):
            numbers = pd.to_numeric(values, errors="coerce")
            keep &= numbers == getattr(numbers, value)()
        elif bound:
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
    std: float = math.nan  # the spread over seeds (repeats), where measured
    seeds: int = 1

    @property
    def half(self) -> float:
        """The interval's half-width (the mean of its two sides; an asymmetric Wilson interval is nearly even)."""
        return (self.high - self.low) / 2

    @property
    def exact(self) -> bool:
        return not math.isnan(self.low) and self.low == self.high

    def text(self, digits: int = 3) -> str:
        if math.isnan(self.low) or self.low == self.high:  # no interval, or an exact (closed-form) value
            return f"{self.value:.{digits}f}"
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def minus(self, other: Side) -> Side:
        """self - other, the two half-widths in quadrature (independent estimates)."""
        d, half = self.value - other.value, math.hypot(self.half, other.half)
        return Side(d, d - half, d + half)


def _side(rows: pd.DataFrame, metric: str) -> Side:
    """One row's value and interval.  A measured accuracy without an interval column has none (only a threshold
    can then decide); a closed-form metric (epsilon, delta) is exact: its interval is the point."""
    r = rows.iloc[0]
    value = float(r[metric])
    if f"{metric}_low" in r and not pd.isna(r[f"{metric}_low"]):
        spread = f"{metric}_seed_std"  # over the seeds' runs (pipelib.report.parties), not over one run's parties
        std = float(r[spread]) if spread in r and not pd.isna(r[spread]) else math.nan
        seeds = int(r["seeds"]) if "seeds" in r and not pd.isna(r["seeds"]) else 1
        return Side(value, float(r[f"{metric}_low"]), float(r[f"{metric}_high"]), std, seeds)
    if "accuracy" in metric:
        return Side(value, math.nan, math.nan)
    return Side(value, value, value)


def _above(d: Side, margin: float = 0.0) -> str:
    """A difference above ``margin``: holds when its interval lies above it, does not hold when below."""
    if math.isnan(d.low):
        return "inconclusive"  # no interval: a difference cannot be told from noise
    if d.low > margin:
        return "holds"
    if d.high < margin or (d.exact and d.value <= margin):
        return "does not hold"
    return "inconclusive"


def _rows(filters: dict) -> str:
    """A side's rows as text: 'rows with dataset MNIST, encoder umap_digits' ('rows' without filters)."""
    return "rows" + (" with " + ", ".join(f"{k} {v}" for k, v in filters.items()) if filters else "")


def _rank_correlation(x: list, y: list) -> float:
    """Spearman's rank correlation of two series (average ranks for ties); nan when either is constant."""
    rx, ry = pd.Series(x).rank().to_numpy(), pd.Series(y).rank().to_numpy()
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(((rx - rx.mean()) * (ry - ry.mean())).mean() / (rx.std() * ry.std()))


def _trend(c: Claim, points: list[tuple[float, Side]], what: str) -> tuple[str, str]:
    """A series along x in the claimed direction: the endpoints' difference and the rank correlation."""
    direction = c.direction if c.kind == "gap" else c.kind
    (x0, first), (x1, last) = points[0], points[-1]
    rho = _rank_correlation([p[0] for p in points], [p[1].value for p in points])
    sign = 1 if direction == "increasing" else -1
    ends = _above(last.minus(first) if sign > 0 else first.minus(last))
    numbers = f"{what}{c.x} {x0:g}: {first.text()} -> {c.x} {x1:g}: {last.text()}"
    if len(points) > 2:
        numbers += f" ({len(points)} points, rank correlation {rho:+.2f})"
    if ends == "holds" and (len(points) == 2 or sign * rho >= RHO_MIN):
        return "holds", numbers
    return ("does not hold" if ends == "does not hold" else "inconclusive"), numbers


@dataclass
class Group:
    """One ``per`` group's verdict and what decided it."""

    verdict: str
    numbers: str
    a: Side | None = None
    b: Side | None = None
    flags: tuple = ()
    rows: pd.DataFrame | None = None  # the rows it read
    regime: list = field(default_factory=list)
    left_out: str = ""  # why a group is left out of the verdict: outside the regime, flagged, at chance


def _flags(c: Claim, rows: pd.DataFrame) -> tuple:
    """The row flags of ``rows`` that the claim does not accept (none for a closed form: no model is involved)."""
    if "flags" not in rows or c.form != "trained":
        return ()
    found = [f for cell in rows["flags"] for f in rowflags.split(cell) if rowflags.name(f) not in c.accepts]
    return tuple(dict.fromkeys(found))


def _one(rows: pd.DataFrame, filters: dict) -> str:
    return "" if len(rows) == 1 else f"{len(rows)} {_rows(filters)}, one needed"


def _series(c: Claim, frame: pd.DataFrame, a_rows: pd.DataFrame) -> Group:
    """increasing / decreasing / gap: the group's points along x."""
    if c.kind == "gap":
        b_rows = frame[_matches(frame, c.b)]
        ax, bx = a_rows[c.x].map(_nominal), b_rows[c.x].map(_nominal)  # 4.99998 pairs with 5
        xs = sorted(set(ax.dropna()) & set(bx.dropna()))
        points = []
        for x in xs:
            at_a, at_b = a_rows[ax == x], b_rows[bx == x]
            if len(at_a) != 1 or len(at_b) != 1:
                return Group("untested", f"{len(at_a)} {_rows(c.a)} and {len(at_b)} {_rows(c.b)} at {c.x} {x:g}")
            points.append((x, _side(at_b, c.metric).minus(_side(at_a, c.metric))))
        rows = pd.concat([a_rows[ax.isin(xs)], b_rows[bx.isin(xs)]])
        what = "gap "
    else:
        series = a_rows[a_rows[c.x].notna()].sort_values(c.x)
        if len(series) != series[c.x].nunique():
            values = series[c.x].nunique()
            return Group("untested", f"{len(series)} {_rows(c.a)} at {values} values of {c.x}, one per value needed")
        points = [(x, _side(series.iloc[[i]], c.metric)) for i, x in enumerate(series[c.x])]
        rows, what = series, ""
    if len(points) < 2:
        return Group("skip", "") if c.per else Group("untested", f"needs rows at two values of {c.x} or more")
    verdict_, numbers = _trend(c, points, what)
    return Group(verdict_, numbers, points[-1][1], points[0][1], _flags(c, rows), rows)


def _threshold(c: Claim, a_rows: pd.DataFrame, a: Side) -> Group:
    # one more digit where three would print the threshold itself (0.9696 against 0.97 is not "0.970")
    digits = 4 if f"{a.value:.3f}" == f"{c.threshold:.3f}" else 3
    numbers = f"{a.text(digits)} against {c.threshold:g}"
    low, high = (a.value, a.value) if math.isnan(a.low) else (a.low, a.high)
    flags = _flags(c, a_rows)
    if c.kind == "at_most":
        v = "holds" if high <= c.threshold else "does not hold" if low > c.threshold else "inconclusive"
        return Group(v, numbers, a, flags=flags, rows=a_rows)
    v = "holds" if low >= c.threshold else "does not hold" if high < c.threshold else "inconclusive"
    cap = float(a_rows[c.ceiling].iloc[0]) if c.ceiling and c.ceiling in a_rows else math.nan
    if math.isnan(cap):
        return Group(v, numbers, a, flags=flags, rows=a_rows)
    numbers += f" ({c.ceiling} {cap:.4g})"
    if v != "holds" and cap < c.threshold and a.value >= cap - CEILING_TOLERANCE:
        # the method lost nothing against the bound, and the bound itself is short of the threshold
        return Group("untested", f"{numbers}: at its {c.ceiling}, which is below the threshold before any noise")
    return Group(v, numbers, a, flags=flags, rows=a_rows)


def headline_tolerance(printed: float) -> float:
    """How far a headline cell may sit from the paper's printed value: a share of the paper's error."""
    return max(HEADLINE_MIN, HEADLINE_SHARE * (1 - printed))


def _within(c: Claim, a: Side, b: Side, tolerance: float) -> str:
    """Two-sided: |a - b| within the tolerance; side below: a at most the tolerance under b."""
    if math.isnan(a.low) or math.isnan(b.low):
        return "inconclusive"
    d = b.minus(a)  # the loss of a under b
    gap, half = (d.value, d.value - d.low) if c.side == "below" else (abs(d.value), d.value - d.low)
    if gap + half <= tolerance:
        return "holds"
    return "does not hold" if gap - half > tolerance else "inconclusive"


def _group(c: Claim, frame: pd.DataFrame) -> Group:
    """One ``per`` group's verdict."""
    a_rows = frame[_matches(frame, c.a)]
    if a_rows.empty:
        return Group("untested", f"no {_rows(c.a)}")
    if c.kind in (*TRENDS, "gap"):
        return _series(c, frame, a_rows)
    if c.kind == "headline":  # the rows the paper prints a value for
        printed = a_rows["paper_accuracy"].notna() if "paper_accuracy" in a_rows else False
        a_rows = a_rows[printed & a_rows[c.metric].notna()]  # not the quoted rows (a baseline we did not run)
        if a_rows.empty:
            return Group("skip", "") if c.per else Group("untested", "the paper prints no value for these rows")
    if _one(a_rows, c.a):
        return Group("untested", _one(a_rows, c.a))
    a = _side(a_rows, c.metric)
    if c.kind in ("at_least", "at_most"):
        return _threshold(c, a_rows, a)
    if c.kind == "within" and not c.b:  # a value the paper states, not rows
        b = Side(c.threshold, c.threshold, c.threshold)
        numbers = f"{a.text()} vs {c.threshold:g} (within {c.tolerance:g}?)"
        return Group(_within(c, a, b, c.tolerance), numbers, a, b, _flags(c, a_rows), a_rows)
    if c.kind == "headline":
        printed = float(a_rows["paper_accuracy"].iloc[0])
        b = Side(printed, printed, printed)
        tolerance = c.tolerance if c.tolerance is not None else headline_tolerance(b.value)
        numbers = f"{a.text()} vs paper {b.value:.4g} (within {tolerance:.3g}?)"
        return Group(_within(c, a, b, tolerance), numbers, a, b, _flags(c, a_rows), a_rows)
    b_rows = frame[_matches(frame, c.b)]
    if c.per and b_rows.empty:
        return Group("skip", "")  # a group with no rows b (a point the other side was not run at)
    if _one(b_rows, c.b):
        return Group("untested", _one(b_rows, c.b))
    if a_rows.index.equals(b_rows.index):
        return Group("untested", f"{_rows(c.a)} and {_rows(c.b)} are the same row: nothing is compared")
    b = _side(b_rows, c.metric)
    numbers = f"{a.text()} vs {b.text()}"
    rows = pd.concat([a_rows, b_rows])
    flags = _flags(c, rows)
    if c.kind == "greater":
        if c.margin:
            numbers += f" (by more than {c.margin:g}?)"
        return Group(_above(a.minus(b), c.margin), numbers, a, b, flags, rows)
    numbers += (
        f" ({'at most' if c.side == 'below' else 'within'} {c.tolerance:g}{' under' if c.side == 'below' else ''}?)"
    )
    return Group(_within(c, a, b, c.tolerance), numbers, a, b, flags, rows)


def _nominal(value):
    return float(f"{value:.3g}") if isinstance(value, float) and math.isfinite(value) else value


def _regime(rows: pd.DataFrame | None) -> list[str]:
    """The regime departures of a group's rows (their ``regime`` column)."""
    if rows is None or "regime" not in rows:
        return []
    return sorted({str(f) for f in rows["regime"].dropna() if str(f) and str(f) != "nan"})


def _always(c: Claim, groups: list[Group]) -> tuple[str, str]:
    """An 'always' claim over its groups (those at the chance floor already left out): none against, a leads in
    ``share`` of them, one at least separated."""
    against = sum(g.verdict == "does not hold" for g in groups)
    separated = sum(g.verdict == "holds" for g in groups)
    leads = sum(g.a.value > g.b.value for g in groups)
    text = f"a leads at {leads} of {len(groups)} distinct points ({separated} separated, {against} against)"
    if against:
        return "does not hold", text
    if separated and leads >= c.share * len(groups):
        return "holds", text
    return "inconclusive", text


def _at_chance(c: Claim, g: Group) -> bool:
    """Both sides of a two-sided comparison within CHANCE_MARGIN of the claim's ``chance`` accuracy."""
    if c.chance is None or g.a is None or g.b is None or c.kind not in ("greater", "within"):
        return False
    return max(g.a.value, g.b.value) <= c.chance + CHANCE_MARGIN


def _half_width(side: Side, n: int) -> float:
    """A side's 95 % half-width were it the mean of ``n`` seeds: Student's t over the seeds at its measured seed
    spread, and the rest of its interval now (the test records' sampling), in quadrature, as its interval is
    made (:func:`pipelib.stats.repeated_accuracy_interval`)."""
    now = float(_t.ppf(0.975, side.seeds - 1)) * side.std / math.sqrt(side.seeds)
    rest = math.sqrt(max(side.half**2 - now**2, 0.0))
    return math.hypot(float(_t.ppf(0.975, n - 1)) * side.std / math.sqrt(n), rest)


def seeds_needed(c: Claim, g: Group, most: int = 1000) -> int | None:
    """How many seeds per side the measured spread says would decide an inconclusive group by the verdict's own
    rule (the two intervals apart by the claim's boundary, its margin or tolerance): the smallest n at which the
    two sides' half-widths at n seeds (:func:`_half_width`) sum to less than the distance from the measured
    difference to that boundary; None without a spread measured on both sides (2 seeds or more), or beyond
    ``most``."""
    if g.a is None or g.b is None or math.isnan(g.a.std) or math.isnan(g.b.std) or min(g.a.seeds, g.b.seeds) < 2:
        return None
    d = g.a.value - g.b.value
    if c.kind == "greater":
        distance = abs(d - c.margin)
    elif c.side == "below":
        distance = abs(c.tolerance - (-d))  # the loss of a under b, signed, against the tolerance
    else:
        distance = abs(c.tolerance - abs(d))
    for n in range(2, most + 1):
        if _half_width(g.a, n) + _half_width(g.b, n) < distance:
            return n
    return None


def _single_seed(c: Claim, groups: list[Group]) -> bool:
    """Whether any measured row the verdict read is a single run (no ``seeds`` column, or one seed)."""
    if c.form != "trained":
        return False
    for g in groups:
        if g.rows is None:
            continue
        if "seeds" not in g.rows or bool(pd.to_numeric(g.rows["seeds"], errors="coerce").fillna(1).le(1).any()):
            return True
    return False


def verdict(c: Claim, frame: pd.DataFrame | None) -> dict:
    """The claim's row of claims.csv on ``frame`` (its source table; None: not made by this run)."""
    row = {"id": c.id, "paper": c.paper, "where": c.where, "claim": c.claim, "source": c.source, "kind": c.kind}
    row["form"] = c.form
    empty = {"numbers": "", "regime": "", "flags": ""}
    if frame is None:
        return {**row, **empty, "verdict": "untested", "why": f"{c.source} is not made by this run"}
    needed = (*c.per, *([c.x] if c.x else []), c.metric, *c.distinct)
    missing = [col for col in needed if col not in frame]
    if missing:
        return {**row, **empty, "verdict": "untested", "why": f"{c.source} has no column {missing[0]}"}
    # group on 3 significant figures: an accountant's epsilon (4.99998) falls with its nominal value (5)
    keys = frame[list(c.per)].apply(lambda col: col.map(_nominal)) if c.per else None
    groups = list(frame.groupby([keys[k] for k in c.per], sort=True, dropna=False)) if c.per else [((), frame)]
    results, seen = [], set()
    for key, rows in groups:
        if c.per and not _matches(rows, c.a).any():
            continue
        g = _group(c, rows)
        if g.verdict == "skip":
            continue
        if c.distinct:  # the same runs again (a sweep's default point in several sweeps): one group
            used = rows[_matches(rows, c.a) | (_matches(rows, c.b) if c.b else False)]
            same = tuple(sorted(map(str, used[list(c.distinct)].itertuples(index=False))))
            if same in seen:
                continue
            seen.add(same)
        # a closed form is an identity of our formulas at the rows' own parameters: true whatever the regime
        departures = _regime(g.rows) if c.form == "trained" else []
        if g.verdict != "untested":
            g.left_out = (
                "outside the regime"
                if departures
                else "flagged"
                if g.flags
                else "at chance"
                if _at_chance(c, g)
                else ""
            )
        g.regime = departures
        label = ", ".join(
            f"{k:g}" if isinstance(k, float) else f"{k}" for k in (key if isinstance(key, tuple) else (key,))
        )
        text = f"{label}: {g.numbers}" if c.per else g.numbers
        g.numbers = f"[{g.left_out}] {text}" if g.left_out and c.per else text
        results.append(g)
    if not results:
        return {**row, **empty, "verdict": "untested", "why": "no rows match"}
    regime_text = "; ".join(dict.fromkeys(d for g in results for d in g.regime))
    flag_text = "; ".join(dict.fromkeys(f for g in results for f in g.flags))
    tested = [g for g in results if not g.left_out]
    numbers = _numbers([(g.verdict, g.numbers) for g in results])
    out = {**row, "numbers": numbers, "regime": regime_text, "flags": flag_text}
    reasons = {
        "outside the regime": "rows outside the paper's regime",
        "flagged": "rows flagged: " + ", ".join(dict.fromkeys(rowflags.name(f) for g in results for f in g.flags)),
        "at chance": "both sides at the chance floor",
    }
    early = None
    if "untested" in [g.verdict for g in results]:
        early = next(g.numbers for g in results if g.verdict == "untested")
    elif not tested:
        early = "; ".join(reasons[r] for r in dict.fromkeys(g.left_out for g in results))
    if early is not None:
        return {**out, "numbers": "" if numbers == early else numbers, "verdict": "untested", "why": early}
    counts = {r: sum(g.left_out == r for g in results) for r in reasons}
    left_out = ", ".join(f"{n} {r}" for r, n in counts.items() if n)
    left_out = f"; {len(results) - len(tested)} of {len(results)} groups left out ({left_out})" if left_out else ""
    verdicts = [g.verdict for g in tested]
    if c.always:
        overall, why = _always(c, tested)
    elif "does not hold" in verdicts:
        overall, why = (
            "does not hold",
            ("the exact values show the opposite" if c.form != "trained" else "the 95 % intervals show the opposite")
            + (" in a group" if len(tested) > 1 else ""),
        )
    elif "inconclusive" in verdicts:
        overall = "inconclusive"
        why = "the values do not decide" if c.form != "trained" else "the 95 % intervals do not decide"
    else:
        overall = "holds"
        why = (
            "exact values (closed form)"
            if c.form != "trained"
            else ("" if c.kind in ("at_least", "at_most") else "the 95 % intervals decide")
        )
    why += left_out
    if overall == "inconclusive" and c.kind in ("greater", "within") and not c.always:
        needed = [seeds_needed(c, g) for g in tested if g.verdict == "inconclusive"]
        if needed and all(n is not None for n in needed):
            why += f"; about {max(needed)} seeds a side would decide it at the measured spread"
    if _single_seed(c, tested):
        why += "; single seed: the interval covers the test set only"
    out["numbers"] = "" if out["numbers"] == why else out["numbers"]
    return {**out, "verdict": overall, "why": why.lstrip("; ")}


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


def source_frame(frames: dict, name: str) -> pd.DataFrame | None:
    """The table a claim reads: one source, or every source a glob (``p004_*``) matches, joined."""
    names = [n for n in frames if fnmatch.fnmatchcase(n, name)]
    return pd.concat([frames[n] for n in sorted(names)], ignore_index=True) if names else None


def with_flags(frames: dict) -> dict:
    """Every source with its ``regime`` (a figure: its table's) and row ``flags`` (:mod:`pipelib.report.flags`)."""
    out = {}
    for name, frame in frames.items():
        frame = frame.copy()
        if "regime" not in frame:
            flags = regime.of_figure(name, frame, frames)
            if flags is not None:
                frame["regime"] = flags
        frame["flags"] = rowflags.of_source(name, frame, frames)
        out[name] = frame
    return out


def claims_table(claims: list[Claim], sources: dict, out_csv, preset: str) -> pd.DataFrame:
    """results/claims.csv: every claim's verdict on this run's tables (``sources``: source name -> CSV path)."""
    frames = with_flags({name: pd.read_csv(path) for name, path in sources.items()})
    rows = [{**verdict(c, source_frame(frames, c.source)), "preset": preset} for c in claims]
    table = pd.DataFrame(rows, columns=CLAIMS_COLUMNS)
    write_csv(table, out_csv)
    return table


def counted(n: int, verdict: str, of: int | None = None) -> str:
    """A count of claims with a verdict, in grammatical English: '1 holds', '5 of 13 hold', '6 do not hold',
    '1 does not hold', '2 inconclusive' (the verbs agree by pipelib.words.plural's table)."""
    verb = verdict if n == 1 else IRREGULAR.get(verdict, verdict)
    return f"{n} of {of} {verb}" if of is not None else f"{n} {verb}"


def _counts(rows: pd.DataFrame) -> str:
    counts = rows["verdict"].value_counts()
    rest = [counted(int(counts[v]), v) for v in VERDICTS[1:] if counts.get(v, 0)]
    return counted(int(counts.get("holds", 0)), "holds", len(rows)) + (", " + ", ".join(rest) if rest else "")


def summary(table: pd.DataFrame) -> list[str]:
    """One line per paper, trained claims apart from closed forms: 'paper 002: trained 3 of 13 hold, 2
    inconclusive, ...; closed form 2 of 2 hold'; then the flags behind the untested claims, counted."""
    lines = []
    form = table["form"] if "form" in table else pd.Series("trained", index=table.index)
    for paper, rows in table.groupby("paper", sort=True):
        parts = [
            f"{f} {_counts(rows[form[rows.index] == f])}"
            for f in ("trained", "closed form")
            if (form[rows.index] == f).any()
        ]
        lines.append(f"paper {paper}: " + "; ".join(parts))
    if "flags" in table:  # the claims untested because of their rows' flags, per flag
        flagged = table[table["why"].fillna("").astype(str).str.startswith("rows flagged")]
        per_claim = [{rowflags.name(f) for f in rowflags.split(cell)} for cell in flagged["flags"]]
        counts = {n: sum(n in names for names in per_claim) for n in rowflags.NAMES}
        if any(counts.values()):
            lines.append("untested on flagged rows: " + ", ".join(f"{n} {k}" for n, k in counts.items() if k))
    return lines
