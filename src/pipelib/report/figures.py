"""Figures of the papers, in one style (:mod:`pipelib.report.style`): our measurements as lines with markers
and their 95 % intervals, in a fixed colour per method, mechanism or dataset, flagged points hollow; closed
forms as lines; the papers' printed values (where they print any) as hollow black markers labelled "paper".

Every figure is written as PNG and SVG together with the data it is drawn from (``.csv`` beside it),
so that a test can check what a figure shows without reading pixels.  The ``*_data`` functions compute
that data (closed forms, or views of result rows); the ``plot_*`` functions draw it.
"""

from __future__ import annotations

import math
import textwrap

import matplotlib

matplotlib.use("Agg")  # figures go to files: no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FixedLocator, MaxNLocator, NullFormatter, NullLocator  # noqa: E402

from .. import stats
from ..io import atomic_path, read_csv, read_table, write_csv
from ..privacy import gaussian
from ..privacy.nfdp import SAMPLINGS, WITH_REPLACEMENT, nfdp
from ..schema import read_result
from ..words import plural
from . import flags, paper, regime, style
from .parties import over_seeds

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
    "svg.hashsalt": "pipelib",  # fixed clip-path ids: the same figure, the same SVG bytes
}
PAPER = {"color": "black", "marker": "o", "markerfacecolor": "none", "linestyle": "none", "markersize": 7}


def _plt():
    plt.rcParams.update(STYLE)
    return plt


def integer_x(ax) -> None:
    """Ticks at whole numbers only (parties, rounds, neighbours)."""

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def log_x(ax, values) -> None:
    """A log x axis labelled at the plotted values only, as plain numbers with thousands separators (no
    overlapping 3x10^-1, no 100000)."""

    ticks = sorted(set(float(v) for v in values))
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    style.thousands(ax.xaxis)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def fmt_values(values) -> str:
    """The distinct values of a column in words ('10', '10 / 20'; '' for none): captions name settings."""
    out = []
    for v in pd.Series(values).dropna().drop_duplicates():
        out.append(f"{v:g}" if isinstance(v, (int, float, np.integer, np.floating)) else str(v))
    return " / ".join(out)


def own_flags(rows: pd.DataFrame) -> pd.Series:
    """Whether each row is flagged: its ``flags`` column (:func:`with_flags`) where the data has one, else
    the flags of its own run (diverged, a clipping box: pipelib.report.flags)."""
    if "flags" in rows:
        return rows["flags"].map(lambda cell: any(_hollow(f) for f in flags.split(cell)))
    return pd.Series(
        [bool(flags.diverged(r) or flags.clipped_box(r)) for r in rows.to_dict("records")], index=rows.index
    )


def _hollow(flag: str) -> bool:
    """Whether a flag hollows its point: every flag but a stand-in teacher, which every row of a paper 004
    figure shares (the page names it; a hollow figure would mark nothing)."""
    return not (flags.name(flag) == "substitute" and "fixed box" not in flag)


def caption_width(fig, fontsize: float) -> int:
    """How many characters of a ``fontsize`` title line fit across ``fig`` (the flag caption wraps there)."""
    return max(40, int(fig.get_figwidth() * 72 / (0.65 * fontsize)))


def flag_caption(data: pd.DataFrame, width: int = 90) -> str:
    """A second title line naming the flags behind the figure's hollow points ('' where none)."""
    if "flags" not in data:
        return ""
    found = {}  # each flag with the datasets whose rows carry it, named where the figure draws several
    for cell, dataset in zip(data["flags"], data.get("dataset", pd.Series("", index=data.index))):
        for f in flags.split(cell):
            if _hollow(f):
                found.setdefault(f, dict.fromkeys([]))[dataset] = None
    several = "dataset" in data and data["dataset"].nunique() > 1
    named = [_with_datasets(f, sets) if several else f for f, sets in found.items()]
    return ("\n" + textwrap.fill("hollow: " + "; ".join(named), width)) if found else ""


def _with_datasets(flag: str, datasets) -> str:
    """'utility floor (CIFAR-10): FedMD-NP 0.747 (paper 0.869)': a flag with the datasets it holds for."""
    kind, _, detail = flag.partition(": ")
    return (
        f"{kind} ({' / '.join(map(str, datasets))}): {detail}"
        if detail
        else f"{kind} ({' / '.join(map(str, datasets))})"
    )


def with_flags(name: str, data: pd.DataFrame, tables: dict | None) -> pd.DataFrame:
    """``data`` with a ``flags`` column: its rows' own flags and those they inherit from the table of their
    setting (``tables``: table name -> CSV path; pipelib.report.flags.INHERITS), as the claims read them."""
    if not tables:
        return data
    frames = {k: read_csv(v) for k, v in tables.items() if v}
    return data.assign(flags=flags.of_source(name, data, frames).to_numpy())


def plotter(name: str):
    """The function that draws figure ``name`` (its file name without extension) from its data (the CSV
    beside it): ``plotter(name)(data, out)``; None for a name no figure has."""
    if name.startswith("compare_"):
        return lambda data, out: plot_compare(data, name[len("compare_") :], out)
    if name.startswith("p004_"):
        return plot_ldpdl_sweeps
    return {
        "p001_clients": plot_p001_clients,
        "p001_fraction_rounds": plot_p001_fraction_rounds,
        "p001_epsilon": plot_p001_epsilon,
        "p002_privacy_vs_parties": plot_privacy_vs_parties,
        "p002_privacy_vs_k": plot_privacy_vs_k,
        "p002_accuracy_vs_parties": plot_accuracy_vs_parties,
        "p002_budget": plot_budget,
        "p002_rounds": plot_rounds,
        "p003_queries_and_neighbours": plot_queries_and_neighbours,
        "p003_local_dp": plot_local_dp,
        "audit": plot_audit,
    }.get(name)


def save(fig, data: pd.DataFrame, out: dict) -> None:
    """Write the figure (``out['png']``, ``out['svg']``) and its data (``out['data']``), atomically; the same
    figure gives the same bytes (no date in the SVG)."""
    plt = _plt()
    for ax in fig.axes:
        if style.series(ax):  # an accuracy axis: never zoomed into its noise
            style.min_span(ax)
    fig.tight_layout()
    for kind, metadata in (("png", None), ("svg", {"Date": None})):
        with atomic_path(out[kind]) as tmp:
            fig.savefig(tmp, format=kind, metadata=metadata)
    plt.close(fig)
    write_csv(data, out["data"])


# --------------------------------------------------------------------------------------- paper 002


def privacy_vs_parties_data(private_n: dict, k: int, parties: int, answers: int) -> pd.DataFrame:
    """Figure 2(a)-(c): NFDP's epsilon and delta (Theorem 2, natural log) of k records drawn from n/N, and
    FedMD-LDP's sigma at that (epsilon, delta) for ``answers`` releases: the paper's formula
    sqrt(T ln(1/delta)) / epsilon (c2 = 1, no sensitivity) beside the sigma the exact composed Gaussian
    needs (softmax answers, L2 sensitivity sqrt 2)."""

    rows = []
    for label, total in private_n.items():
        for n_parties in range(1, parties + 1):
            n = total / n_parties  # records per party (not an integer in general, as in the paper)
            eps = k * math.log1p(1 / n)
            delta = -math.expm1(k * math.log1p(-1 / n))
            sigma_paper = math.sqrt(answers * math.log(1 / delta)) / eps
            sigma_exact = gaussian.gaussian_sigma(eps, delta, answers)
            rows.append(
                {
                    "dataset": label,
                    "parties": n_parties,
                    "n_per_party": n,
                    "k": k,
                    "sampling": WITH_REPLACEMENT,
                    "epsilon": eps,
                    "delta": delta,
                    "log10_epsilon": math.log10(eps),
                    "log10_delta": math.log10(delta),
                    "sigma_paper_formula": sigma_paper,
                    "sigma_exact": sigma_exact,
                    "log10_sigma_paper_formula": math.log10(sigma_paper),
                    "log10_sigma_exact": math.log10(sigma_exact),
                }
            )
    return pd.DataFrame(rows)


def plot_privacy_vs_parties(data: pd.DataFrame, out: dict) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.8))
    panels = [("log10_epsilon", "(a) log10 epsilon"), ("log10_delta", "(b) log10 delta"), (None, "(c) log10 sigma")]
    for ax, (column, title) in zip(axes, panels):
        for label, g in data.groupby("dataset", sort=False):
            c = style.color("dataset", label)  # the dataset's colour in every figure; the line style tells the formula
            if column:
                ax.plot(g["parties"], g[column], marker=".", color=c, label=label)
            else:
                ax.plot(
                    g["parties"], g["log10_sigma_paper_formula"], marker=".", color=c, label=f"{label}: paper's formula"
                )
                ax.plot(
                    g["parties"],
                    g["log10_sigma_exact"],
                    marker=".",
                    linestyle="--",
                    color=c,
                    label=f"{label}: exact, needed",
                )
        ax.set_title(title)
        ax.set_xlabel("number of parties N")
        integer_x(ax)
    # the paper's text: at N = 10, log10 epsilon and delta close to -2 (CIFAR) and -3 (FEMNIST)
    for ax in axes[:2]:
        ax.plot([10, 10], [-3, -2], **PAPER, label="paper (text, N = 10)")
    style.legend_below(axes[0], ncol=3)
    style.legend_below(axes[2], ncol=2)
    save(fig, data, out)


def privacy_vs_k_data(n: int) -> pd.DataFrame:
    """Figure 4: Theorems 1 and 2 (natural log) for k = 1..n records of n."""

    return pd.DataFrame(
        [
            {"n": n, "k": k, "sampling": s, "epsilon": nfdp(n, k, s).epsilon, "delta": nfdp(n, k, s).delta}
            for s in SAMPLINGS
            for k in range(1, n + 1)
        ]
    )


def plot_privacy_vs_k(data: pd.DataFrame, out: dict) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.2))
    for ax, column in zip(axes, ("epsilon", "delta")):
        for sampling, g in data.groupby("sampling"):
            ax.plot(g["k"], g[column], label=sampling.replace("_", " "))
        ax.set_xlabel(f"k (records sampled of n = {data['n'].iloc[0]})")
        ax.set_title(f"({'ab'[column == 'delta']}) {column}")
        ax.legend()
    save(fig, data, out)


def accuracy_vs_parties_data(rows: pd.DataFrame, paper: dict) -> pd.DataFrame:
    """Figure 2(d): mean accuracy over parties against N (result rows, with their dataset label and N);
    ``paper``: (label, N) -> the paper's Table 3 argmax value, overlaid where it exists."""
    columns = [
        "dataset",
        "parties",
        "accuracy",
        "accuracy_low",
        "accuracy_high",
        "accuracy_std",
        "seeds",
        "k",
        "answer",
    ]
    data = rows.reindex(columns=[*columns, "scenario"]).sort_values(["dataset", "parties"], kind="stable")
    data["paper_accuracy"] = [paper.get((d, n)) for d, n in zip(data["dataset"], data["parties"])]
    return data.reset_index(drop=True)


def plot_accuracy_vs_parties(data: pd.DataFrame, out: dict) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    for label, g in data.groupby("dataset", sort=False):
        style.accuracy(
            ax,
            g,
            "parties",
            series=("dataset", label),
            label=label,
            flagged=own_flags(g),
        )
        p = g.dropna(subset=["paper_accuracy"])
        ax.plot(p["parties"], p["paper_accuracy"], **PAPER)
    if data["paper_accuracy"].notna().any():  # a legend entry only for points drawn
        ax.plot([], [], **PAPER, label="paper (Table 3)")
    ax.set_xlabel("number of parties N")
    integer_x(ax)
    ax.set_ylabel("test accuracy (mean over parties)")
    seeds = data["seeds"].dropna()
    seed_word = "seed" if set(seeds) == {1} else "seeds"
    ax.set_title(f"(d) accuracy against N, k = {fmt_values(data['k'])}, {fmt_values(seeds)} {seed_word}", fontsize=8)
    fig.suptitle(flag_caption(data, 110).strip(), fontsize=7)
    style.flag_legend(ax, own_flags(data))
    style.legend_outside(ax)
    save(fig, data, out)


def plot_budget(data: pd.DataFrame, out: dict) -> None:
    """FedMD's budget ablation: accuracy (95 % interval) against rounds x public queries, one panel per
    dataset, one line per method and pre-training epochs; paper 002's Table 2 value (printed at its
    own budget, 20 x 5,000) as a hollow marker there."""
    plt = _plt()
    datasets = list(dict.fromkeys(data["dataset"]))
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.4 * len(datasets), 3.3), squeeze=False)
    for ax, label in zip(axes[0], datasets):
        d = data[data["dataset"] == label]
        few = d["pretrain_epochs"].min()
        for (method, epochs), g in d.groupby(["method", "pretrain_epochs"], sort=False):
            g = g.sort_values("budget")
            style.accuracy(
                ax,
                g,
                "budget",
                series=("method", method),
                marker="s" if epochs == few else "o",
                linestyle="--" if epochs == few else "-",
                label=f"{method}, {plural(int(epochs), 'pre-training epoch')}",
            )
        printed = d.dropna(subset=["paper_accuracy"]).drop_duplicates("method")
        ax.plot([20 * 5000] * len(printed), printed["paper_accuracy"], **PAPER)
        log_x(ax, list(d["budget"]) + [20 * 5000])
        ax.set_ylabel("test accuracy (mean over parties)")
        ax.set_title(label)
    fig.supxlabel("distillation budget: rounds x public queries per round (log)", fontsize=9)
    axes[0][-1].plot([], [], **PAPER, label="paper (Table 2)")
    style.legend_outside(axes[0][-1])
    save(fig, data, out)


def p002_budget(out: dict, table_csv) -> pd.DataFrame:
    """Figure of results/fedmd_budget.csv (the table is the data)."""
    data = read_csv(table_csv)
    plot_budget(data, out)
    return data


def rounds_data(rounds: pd.DataFrame, method: str, k: int) -> pd.DataFrame:
    """Figure 3: every party's accuracy after every round, for one Table 2 row per dataset, with its Wilson
    interval over the row's ``test_n`` test records (rounds tables written before they held it: none)."""
    keep = (rounds["method"] == method) & (rounds["k"] == k)
    cols = ["dataset", "method", "k", "round", "party", "arch", "accuracy"] + (["test_n"] if "test_n" in rounds else [])
    data = rounds.loc[keep, cols].reset_index(drop=True)
    return stats.with_accuracy_interval(data, "test_n", 4) if "test_n" in data else data


def rounds_mean(g: pd.DataFrame) -> pd.DataFrame:
    """The parties' mean accuracy after each round, with its 95 % interval over the parties and the test
    records (:func:`pipelib.stats.mean_accuracy_interval`)."""
    rows = []
    for r, p in g.groupby("round"):
        p = p.dropna(subset=["accuracy"])
        if p.empty:
            continue
        n = p["test_n"].iloc[0]
        low, high = stats.mean_accuracy_interval(p["accuracy"], int(n)) if n == n else (math.nan, math.nan)
        rows.append({"round": r, "accuracy": p["accuracy"].mean(), "accuracy_low": low, "accuracy_high": high})
    return pd.DataFrame(rows, columns=["round", "accuracy", "accuracy_low", "accuracy_high"])


PARTY_LINE = {"marker": ".", "markersize": 3, "linewidth": 0.5, "elinewidth": 0.5, "capsize": 0, "alpha": 0.35}


def plot_rounds(data: pd.DataFrame, out: dict) -> None:
    """Each party's accuracy per round (thin, with its interval over the test records) and their mean (bold,
    with its interval over the parties and the test records), in the method's colour."""
    plt = _plt()
    labels = list(dict.fromkeys(data["dataset"]))
    fig, axes = plt.subplots(1, len(labels), figsize=(4.2 * len(labels) + 1.6, 3.2), squeeze=False)
    for ax, label in zip(axes[0], labels):
        g = data[data["dataset"] == label]
        series = ("method", g["method"].iloc[0])
        if "accuracy_low" not in g:  # a rounds table without test counts: the parties' points alone
            for _, p in g.groupby("party"):
                ax.plot(p["round"], p["accuracy"], marker=".", color=style.color(*series), linewidth=0.6)
        else:
            parties = list(g.groupby("party"))
            step = min(0.06, 0.5 / len(parties))  # parties side by side at each round, so their bars read apart
            for i, (_, p) in enumerate(parties):
                p = p.assign(round=p["round"] + (i - (len(parties) - 1) / 2) * step)
                label_ = "each party" if i == 0 else None
                style.accuracy(ax, p, "round", series=series, label=label_, **PARTY_LINE)
            mean = rounds_mean(g)
            style.accuracy(ax, mean, "round", series=series, linewidth=2.2, zorder=3, label="mean over the parties")
        ax.set_title(f"({'ab'[labels.index(label) % 2]}) {label}, {g['method'].iloc[0]} k = {g['k'].iloc[0]}")
        ax.set_xlabel("communication round (0: after initialization)")
        integer_x(ax)
        ax.set_ylabel("test accuracy (95 % intervals)")
    if "accuracy_low" in data:
        style.legend_outside(axes[0][-1], fontsize=7)
    save(fig, data, out)


# --------------------------------------------------------------------------------------- paper 003


def _purity(rows: pd.DataFrame) -> list[str]:
    """The clusters' purity column where the rows have it: the noise-free bound of their label accuracy, which
    the claims read (``ceiling``)."""
    return ["cluster_purity"] if "cluster_purity" in rows else []


def queries_and_neighbours_data(rows: pd.DataFrame) -> pd.DataFrame:
    """Figure 2(a)-(c): label and student accuracy (with its interval) against s (k = 1) and k (s fixed)."""
    columns = ["dataset", "sweep", "s", "k", "epsilon", "label_accuracy", "accuracy", "accuracy_low", "accuracy_high"]
    columns += ["label_accuracy_low", "label_accuracy_high"]
    rows = stats.with_accuracy_interval(rows, "test_n")
    # label accuracy: a share of the labelled public samples (Wilson over public_n)
    n = rows["public_n"] if "public_n" in rows else pd.Series(np.nan, index=rows.index)
    bounds = [
        stats.accuracy_interval(a, int(m)) if m == m else (math.nan, math.nan)
        for a, m in zip(rows["label_accuracy"], n)
    ]
    rows["label_accuracy_low"], rows["label_accuracy_high"] = [b[0] for b in bounds], [b[1] for b in bounds]
    return (
        rows[[*columns, "encoder", *_purity(rows)]]
        .sort_values(["dataset", "sweep", "s", "k"], kind="stable")
        .reset_index(drop=True)
    )


def plot_queries_and_neighbours(data: pd.DataFrame, out: dict) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.2))
    for ax, (sweep, x) in zip(axes, (("s", "s"), ("k", "k"))):
        for label, g in data[data["sweep"] == sweep].groupby("dataset", sort=False):
            enc = f"{fmt_values(g['encoder'])}, eps {fmt_values(g['epsilon'])}"
            style.accuracy(
                ax,
                g,
                x,
                series=("dataset", label),
                y="label_accuracy",
                label=f"{label} ({enc}): label accuracy",
                flagged=own_flags(g),
            )
            style.accuracy(
                ax,
                g,
                x,
                series=("dataset", label),
                marker="s",
                linestyle="--",
                label=f"{label} ({enc}): student test accuracy",
                flagged=own_flags(g),
            )
        ax.set_xlabel("number of queries s (k = 1)" if sweep == "s" else "nearest queries k per record")
        if sweep == "s":
            log_x(ax, data.loc[data["sweep"] == "s", "s"])
        else:
            integer_x(ax)
        ax.set_ylabel("accuracy")
    axes[0].set_title("(a-c) against s")
    axes[1].set_title("against k")
    fig.suptitle(flag_caption(data).strip(), fontsize=8)
    style.flag_legend(axes[1], own_flags(data))
    style.legend_outside(axes[1])
    save(fig, data, out)


def local_dp_data(rows: pd.DataFrame, paper: dict) -> pd.DataFrame:
    """Figure 2(d): test accuracy against epsilon, randomized response against Collision; ``paper``:
    (label, mechanism, epsilon) -> the paper's printed test accuracy."""
    columns = ["dataset", "mechanism", "epsilon", "label_accuracy", "accuracy", "accuracy_low", "accuracy_high"]
    data = (
        stats.with_accuracy_interval(rows, "test_n")[[*columns, "s", "k", "encoder", *_purity(rows)]]
        .sort_values(["dataset", "mechanism", "epsilon"], kind="stable")
        .reset_index(drop=True)
    )
    data["paper_accuracy"] = [
        paper.get((d, m, e)) for d, m, e in zip(data["dataset"], data["mechanism"], data["epsilon"])
    ]
    return data


def plot_local_dp(data: pd.DataFrame, out: dict) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.8, 3.2))
    datasets = list(dict.fromkeys(data["dataset"]))
    for (label, mech), g in data.groupby(["dataset", "mechanism"], sort=False):
        style.accuracy(
            ax,
            g,
            "epsilon",
            series=("mechanism", mech),
            marker="os^"[datasets.index(label) % 3],
            linestyle=("-", "--", ":")[datasets.index(label) % 3],
            label=f"{label} ({fmt_values(g['encoder'])}): {'randomized response' if mech == 'rr' else 'Collision'}",
            flagged=own_flags(g),
        )
    p = data.dropna(subset=["paper_accuracy"])
    if not p.empty:  # no legend entry for a point the figure does not draw
        ax.plot(p["epsilon"], p["paper_accuracy"], **PAPER, label="paper (Collision, text)")
    log_x(ax, data["epsilon"])
    ax.set_xlabel("epsilon (local DP, per record)")
    ax.set_ylabel("student test accuracy")
    ax.set_title(
        f"(d) local DP, s = {fmt_values(data['s'])}, k = {fmt_values(data['k'])}" + flag_caption(data), fontsize=8
    )
    style.flag_legend(ax, own_flags(data))
    style.legend_outside(ax)
    save(fig, data, out)


# ------------------------------------------------------------------------ stage entries (one per rule)


def _rows(entries: list[dict]) -> pd.DataFrame:
    """Result rows of ``entries`` (dicts with ``path`` and the columns to add, such as the dataset label)."""
    return pd.DataFrame([{**read_result(e["path"]), **{k: v for k, v in e.items() if k != "path"}} for e in entries])


def p002_privacy_vs_parties(out: dict, private_n: dict, k: int, parties: int, answers: int) -> pd.DataFrame:
    data = privacy_vs_parties_data(private_n, k, parties, answers)
    plot_privacy_vs_parties(data, out)
    return data


def p002_privacy_vs_k(out: dict, n: int) -> pd.DataFrame:
    data = privacy_vs_k_data(n)
    plot_privacy_vs_k(data, out)
    return data


def p002_accuracy_vs_parties(out: dict, entries: list[dict], answer: str, tables: dict | None = None) -> pd.DataFrame:
    """Figure 2(d) from its entries (``path``: the row's result, ``repeats``: its other seeds')."""
    points = {(d, n): v / 100 for (d, n, a), v in paper.TABLE3.items() if a == answer}
    runs = [[e["path"], *e.get("repeats", [])] for e in entries]
    rows = pd.DataFrame(
        [
            {
                **over_seeds([read_result(p) for p in paths], paths),
                **{k: v for k, v in e.items() if k not in ("path", "repeats")},
            }
            for e, paths in zip(entries, runs)
        ]
    )
    data = with_flags("p002_accuracy_vs_parties", accuracy_vs_parties_data(rows, points), tables)
    plot_accuracy_vs_parties(data, out)
    return data


def p002_rounds(out: dict, rounds_path, method: str, k: int) -> pd.DataFrame:
    data = rounds_data(read_table(rounds_path).to_pandas(), method, k)
    plot_rounds(data, out)
    return data


def p003_queries_and_neighbours(out: dict, entries: list[dict], tables: dict | None = None) -> pd.DataFrame:
    data = with_flags("p003_queries_and_neighbours", queries_and_neighbours_data(_rows(entries)), tables)
    plot_queries_and_neighbours(data, out)
    return data


def p003_local_dp(out: dict, entries: list[dict], tables: dict | None = None) -> pd.DataFrame:
    data = local_dp_data(_rows(entries), {k: v / 100 for k, v in paper.FIGURE_RKNN_LOCAL.items()})
    data = with_flags("p003_local_dp", data, tables)
    plot_local_dp(data, out)
    return data


# --------------------------------------------------------------------------------------- paper 004

P004_PANELS = (
    ("epsilon", "(a) total epsilon per owner"),
    ("per_query", "(b) owners per query N_Q"),
    ("owners", "(c) owners L"),
)


def ldpdl_sweeps_data(rows: pd.DataFrame) -> pd.DataFrame:
    """Figures 4-6: student test accuracy (with its 95 % interval over the test records) per sweep
    (epsilon, N_Q, L), mechanism and query sampling."""
    rows = stats.with_accuracy_interval(rows, "test_n")
    cols = [
        "dataset",
        "sweep",
        "x",
        "mechanism",
        "aqs",
        "accuracy",
        "accuracy_low",
        "accuracy_high",
        "test_n",
        "label_accuracy",
        "epsilon",
        "per_query",
        "owners",
        "per_answer_epsilon",
        "max_answers",
    ]
    return rows[cols].sort_values(["sweep", "mechanism", "aqs", "x"], kind="stable").reset_index(drop=True)


def plot_ldpdl_sweeps(data: pd.DataFrame, out: dict) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.3), sharey=True)
    names = {"pm": "PM", "duchi": "Duchi", "laplacebox": "Laplace"}
    for ax, (sweep, title) in zip(axes, P004_PANELS):
        for (mech, aqs), g in data[data["sweep"] == sweep].groupby(["mechanism", "aqs"], sort=False):
            style.accuracy(
                ax,
                g,
                "x",
                series=("mechanism", mech),
                marker="o" if aqs else "s",
                linestyle="-" if aqs else "--",
                label=f"{names.get(mech, mech)}{' + AQS' if aqs else ''}",
                flagged=own_flags(g),
            )
        rows = data[data["sweep"] == sweep]
        ax.set_xlabel(title.split(" ", 1)[1])
        held = [  # the settings this panel holds fixed, named in its title
            f"{label} {', '.join(f'{v:,g}' for v in rows[column].dropna().unique())}"
            for column, label in (("epsilon", "eps"), ("per_query", "N_Q"), ("owners", "L"))
            if column != sweep and column in rows
        ]
        ax.set_title(f"{title}\n({'; '.join(held)})", fontsize=8)
        # ticks at the run's values only, with separators: 2,000 and 10,000, never 9000 against 10000
        ax.xaxis.set_major_locator(FixedLocator(sorted(rows["x"].unique())))
        style.thousands(ax.xaxis)
    axes[0].set_ylabel("student test accuracy (95 % interval)")
    style.flag_legend(axes[-1], own_flags(data))
    style.legend_outside(axes[-1])
    title = f"{', '.join(dict.fromkeys(data['dataset']))}: LDP-DL (the paper prints no numbers)"
    fig.suptitle(title + flag_caption(data), fontsize=9)
    save(fig, data, out)


def p004_sweeps(out: dict, entries: list[dict], tables: dict | None = None) -> pd.DataFrame:
    data = with_flags("p004_", ldpdl_sweeps_data(_rows(entries)), tables)
    plot_ldpdl_sweeps(data, out)
    return data


# --------------------------------------------------------------------------------------- paper 001

P001_COLUMNS = ["dataset", "panel", "x", "run", "private", "accuracy", "accuracy_low", "accuracy_high"]
P001_COLUMNS += ["epsilon", "paper_epsilon", "range", "peak_accuracy", "peak_round", "init", "init_in_box"]
P001_COLUMNS += ["scenario", "rounds"]  # with run and fraction: the run (a Table 1 row's flags are its own)


def ldpfl_data(entries: list[dict], with_rounds: bool = False) -> pd.DataFrame:
    """Final accuracy of each run (``panel`` = its entry's artifact); with ``with_rounds`` also every run's
    accuracy after each round (``panel`` = rounds, ``x`` = round), from its rounds table."""
    rows = stats.with_accuracy_interval(_rows(entries).rename(columns={"artifact": "panel"}), "test_records")
    rows["private"] = rows["mechanism"] != "none"
    # each run's best round: a final accuracy far under it is a run that diverged (pipelib.report.flags)
    peaks = [flags.peak(read_table(e["path"].replace("result.json", "rounds.parquet")).to_pandas()) for e in entries]
    rows["peak_accuracy"], rows["peak_round"] = [p[0] for p in peaks], [p[1] for p in peaks]
    data = rows.reindex(columns=P001_COLUMNS + ["fraction"])
    if with_rounds:
        per_round = []
        for e, n in zip(entries, rows["test_records"]):
            h = read_table(e["path"].replace("result.json", "rounds.parquet")).to_pandas().assign(test_records=n)
            per_round.append(
                stats.with_accuracy_interval(h, "test_records")
                .assign(dataset=e["dataset"], panel="rounds", run=e["run"], private=e["run"] != "none")
                .rename(columns={"round": "x"})
                .reindex(columns=P001_COLUMNS + ["fraction"])
            )
        data = pd.concat([data, *per_round], ignore_index=True)
    return data.sort_values(["panel", "dataset", "x", "run"], kind="stable").reset_index(drop=True)


def _by_dataset(plt, data: pd.DataFrame, rows: int = 1):
    datasets = list(dict.fromkeys(data["dataset"]))
    width = max(3.6 * len(datasets), 5.5)
    fig, axes = plt.subplots(rows, len(datasets), figsize=(width, 3.8 * rows), squeeze=False)  # legends below
    return fig, axes, datasets


def plot_p001_clients(data: pd.DataFrame, out: dict) -> None:
    plt = _plt()
    fig, axes, datasets = _by_dataset(plt, data)
    for ax, d in zip(axes[0], datasets):
        for private, g in data[data["dataset"] == d].groupby("private"):
            label = (
                f"LDP-FL, eps = {g['paper_epsilon'].iloc[0]:g} per weight, {fmt_values(g['range'])} range"
                if private
                else "noise-free FedAvg"
            )
            style.accuracy(
                ax,
                g,
                "x",
                series=("method", "LDP-FL" if private else "FedAvg"),
                marker="o" if private else "s",
                label=label,
                flagged=own_flags(g),
            )
        ax.set(title=d, xlabel="clients n", ylabel="test accuracy")
        integer_x(ax)
        style.thousands(ax.xaxis)
        style.flag_legend(ax, own_flags(data))
        style.legend_below(ax)
    fig.suptitle(
        "Paper 001, Figure 3 (the paper prints no values)" + flag_caption(data, caption_width(fig, 9)), fontsize=9
    )
    save(fig, data, out)


def p001_clients(out: dict, entries: list[dict], tables: dict | None = None) -> pd.DataFrame:
    """Figure 3: accuracy against the number of clients n, LDP-FL vs noise-free federated averaging."""
    data = with_flags("p001_clients", ldpfl_data(entries), tables)
    plot_p001_clients(data, out)
    return data


def plot_p001_fraction_rounds(data: pd.DataFrame, out: dict) -> None:
    plt = _plt()
    fig, axes, datasets = _by_dataset(plt, data, rows=2)
    for top, bottom, d in zip(axes[0], axes[1], datasets):
        g = data[(data["dataset"] == d) & (data["panel"] == "fraction")]
        style.accuracy(
            top,
            g,
            "x",
            series=("method", "LDP-FL"),
            label=f"LDP-FL ({fmt_values(g['range'])} range)",
            flagged=own_flags(g),
        )
        style.flag_legend(top, own_flags(g))
        style.legend_below(top)
        top.set(title=d, xlabel="fraction of clients per round f_r", ylabel="final test accuracy")
        rounds = data[(data["dataset"] == d) & (data["panel"] == "rounds")]
        run_flagged = dict(zip(g["fraction"], own_flags(g)))  # a run's rounds are hollow where its point is
        for i, (fraction, h) in enumerate(rounds.groupby("fraction")):
            style.accuracy(
                bottom,
                h,
                "x",
                series=("method", "LDP-FL"),
                marker="o^sDv"[i % 5],
                linestyle=("-", "--", ":", "-.")[i % 4],
                label=f"f_r = {fraction:g}",
                flagged=pd.Series(bool(run_flagged.get(fraction, False)), index=h.index),
            )
        style.flag_legend(bottom, [run_flagged.get(f, False) for f in rounds["fraction"].unique()])
        bottom.set(xlabel="communication round", ylabel="test accuracy")
        integer_x(bottom)
        style.legend_below(bottom, ncol=2)
    fig.suptitle(
        "Paper 001, Figure 4 (the paper prints no values)" + flag_caption(data, caption_width(fig, 9)), fontsize=9
    )
    save(fig, data, out)


def p001_fraction_rounds(out: dict, entries: list[dict], tables: dict | None = None) -> pd.DataFrame:
    """Figure 4: final accuracy against the fraction of clients per round (top) and accuracy after each
    round for each fraction (bottom)."""
    data = with_flags("p001_fraction_rounds", ldpfl_data(entries, with_rounds=True), tables)
    plot_p001_fraction_rounds(data, out)
    return data


def plot_p001_epsilon(data: pd.DataFrame, out: dict) -> None:
    plt = _plt()
    sweeps = data[data["panel"] == "epsilon"]
    radius = data[data["panel"] == "radius"]
    datasets = list(dict.fromkeys(sweeps["dataset"]))
    n = len(datasets) + (not radius.empty)
    cols = min(n, 2)  # two panels a row: four in a row do not read at page width
    rows = math.ceil(n / cols)
    fig, grid = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.8 * rows), squeeze=False)
    axes = [list(grid.flat)]
    for ax in axes[0][n:]:
        ax.set_visible(False)
    for i, (ax, d) in enumerate(zip(axes[0], datasets)):
        g = sweeps[sweeps["dataset"] == d]
        style.accuracy(
            ax,
            g,
            "x",
            series=("method", "LDP-FL"),
            label=f"LDP-FL ({fmt_values(g['range'])} range)",
            flagged=own_flags(g),
        )
        style.flag_legend(ax, own_flags(g))
        printed = [(e, a / 100) for (ds, e), a in paper.FIGURE_LDPFL_EPSILON.items() if ds == d]
        if printed:
            ax.plot(*zip(*printed), **PAPER, label="paper")
        ax.set(title=f"({'abc'[i]}) {d}", xlabel="epsilon per weight and round", ylabel="test accuracy")
        style.legend_below(ax)
    if not radius.empty:
        ax = axes[0][n - 1]
        style.accuracy(
            ax,
            radius,
            "x",
            series=("method", "LDP-FL"),
            label="fixed range (0, r)",
            flagged=own_flags(radius),
        )
        ax.set(
            title=f"(d) {radius['dataset'].iloc[0]}, eps = {radius['paper_epsilon'].iloc[0]:g}",
            xlabel="range radius r",
            ylabel="test accuracy",
            xscale="log",
        )
        style.legend_below(ax)
    fig.suptitle("Paper 001, Figure 5" + flag_caption(data, caption_width(fig, 9)), fontsize=9)
    save(fig, data, out)


def p001_epsilon(out: dict, entries: list[dict], tables: dict | None = None) -> pd.DataFrame:
    """Figure 5 (a)-(c): accuracy against the per-weight epsilon per dataset, the paper's printed points
    overlaid; (d): accuracy against the fixed range's radius r."""
    data = with_flags("p001_epsilon", ldpfl_data(entries), tables)
    plot_p001_epsilon(data, out)
    return data


# --------------------------------------------------------------------------------------------- audit


def plot_audit(data: pd.DataFrame, out: dict) -> None:
    """Claimed epsilon (log axis) against the audit's empirical lower bound, one marker per audited
    release; the dashed curve is where a bound would meet its claim (above it: the claim is refuted).
    A paper's own claim, where it differs (LDP-FL's per weight and round), is a hollow triangle joined to
    the composed claim by a dotted line.  No claim (no mechanism): at the right edge."""
    plt = _plt()

    fig, ax = plt.subplots(figsize=(9.0, 3.8))
    finite = data["epsilon"].replace(math.inf, np.nan)
    paper_eps = pd.to_numeric(data.get("paper_epsilon", pd.Series(np.nan, index=data.index)), errors="coerce")
    positive = pd.concat([finite[finite > 0], paper_eps[paper_eps > 0]])
    lo = float(positive.min()) / 2 if len(positive) else 0.1
    cap = 10 ** math.ceil(math.log10(max(float(positive.max()) if len(positive) else 1.0, 1.0)) + 1)
    shown = finite.fillna(cap)  # no claim: drawn at the right edge
    top = max(float(data["epsilon_lb"].max()), 1.0) * 1.2
    groups = data.groupby(["method", "released"], sort=False)
    nth = {}
    for (method, released), g in groups:
        color = style.color("method", method)  # the method's colour; groups of one colour told apart by marker
        nth[color] = nth.get(color, -1) + 1
        ax.plot(
            shown[g.index],
            g["epsilon_lb"],
            marker="osDv<>ph"[nth[color] % 8],
            linestyle="none",
            color=color,
            label=f"{method} ({released})",
        )
        for j in g.index[paper_eps[g.index].notna()]:
            ax.plot([paper_eps[j], shown[j]], [g.at[j, "epsilon_lb"]] * 2, color="grey", linewidth=0.8, linestyle=":")
            ax.plot(
                paper_eps[j], g.at[j, "epsilon_lb"], marker="^", markerfacecolor="none", color=color, linestyle="none"
            )
    grid = np.geomspace(lo, max(lo, min(cap, top)), 200)
    ax.plot(grid, grid, color="grey", linewidth=1, linestyle="--", label="bound = claim")
    ax.axvline(cap, color="grey", linewidth=0.6, linestyle=":")
    ax.set_xscale("log")
    ax.set_xlim(lo, cap * 3)
    ax.set_ylim(-0.05 * top, top)
    ax.set_xlabel(f"claimed epsilon (log; at {cap:g}: no claim; triangle: the paper's own claim)")
    ax.set_ylabel("empirical epsilon lower bound (95 %)")
    ax.set_title("One-run audit: claimed vs empirical epsilon")
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save(fig, data, out)


def audit_figure(out: dict, table_csv) -> pd.DataFrame:

    data = read_csv(table_csv)
    plot_audit(data, out)
    return data


# ------------------------------------------------------------------------------- all methods compared
KIND_MARKERS = {"central": "o", "party": "D", "local": "s", "per-weight-per-round": "^", "none": "*"}


def compare_data(table: pd.DataFrame, scenario: str) -> pd.DataFrame:
    """The rows of one scenario (variants with other numbers of parties excluded), best first per method."""
    cols = ["method", "mechanism", "epsilon", "delta", "delta_vacuous", "guarantee_kind", "claim_kind"]
    cols += ["claim_epsilon", "accuracy", "protected_unit"] + (["regime"] if "regime" in table else [])
    cols += [c for c in ("accuracy_low", "accuracy_high", "evaluation_only") if c in table]
    rows = table[table["scenario"] == scenario][cols]
    return rows.sort_values(["method", "epsilon", "accuracy"], kind="stable").reset_index(drop=True)


def plot_compare(data: pd.DataFrame, scenario: str, out: dict) -> None:
    """Accuracy against the guarantee's epsilon, one colour per method and one line per method and kind
    of guarantee (its best row at each epsilon; every row a marker), marker shape by the guarantee's kind
    (hollow where delta >= 1/n: a vacuous delta; faded where the row is outside its paper's regime); paper
    001's per-weight claim drawn where it claims to be, joined to its composed guarantee by a dotted line.  No
    mechanism: at the right edge.  Evaluation-only rows (FedMD-LDP: parties trained on all their records, only
    the answers noised) are a dashed line of their own, labelled so, never part of the method's curve."""

    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.6, 3.6))
    data = data.assign(
        evaluation_only=data["evaluation_only"].astype(str).eq("True") if "evaluation_only" in data else False
    )
    finite = data["epsilon"].replace(math.inf, np.nan)
    hi = float(np.nanmax([finite.max(), data["claim_epsilon"].replace(math.inf, np.nan).max(), 1.0]))
    edge = 10 ** math.ceil(math.log10(hi) + 0.5)
    x = finite.fillna(edge)
    color = {m: style.color("method", m) for m in data["method"].drop_duplicates()}
    for method, c in color.items():
        evaluation = data.loc[data["method"] == method, "evaluation_only"]
        if not evaluation.all():
            ax.plot([], [], linewidth=1, color=c, label=method)
        if evaluation.any():
            ax.plot([], [], linewidth=1, linestyle="--", color=c, label=f"{method} (evaluation only)")
    for (method, kind, evaluation), g in data.groupby(["method", "guarantee_kind", "evaluation_only"], sort=False):
        c = color[method]
        best = g["accuracy"].groupby(x[g.index]).max()  # the curve: the best row at each epsilon
        ax.plot(best.index, best.values, linewidth=1, color=c, linestyle="--" if evaluation else "-")
        if evaluation:  # named at its points too: one point draws no dashes
            for xi, yi in zip(best.index, best.values):
                ax.annotate("eval. only", (xi, yi), xytext=(4, 3), textcoords="offset points", fontsize=6, color=c)
        if "accuracy_low" in g:
            style.intervals(ax, x[g.index], g, series=("method", method))
        for i in g.index:
            face = "none" if data.at[i, "delta_vacuous"] and kind != "none" else c
            flagged = "regime" in data and regime.flagged(data.at[i, "regime"])
            ax.plot(
                x[i],
                g.at[i, "accuracy"],
                KIND_MARKERS[kind],
                color=c,
                markerfacecolor=face,
                alpha=0.35 if flagged else 1,
            )
            if data.at[i, "claim_kind"] != kind:
                claim = data.at[i, "claim_epsilon"]
                ax.plot([claim, x[i]], [g.at[i, "accuracy"]] * 2, ":", color=c, linewidth=0.8)
                ax.plot(claim, g.at[i, "accuracy"], KIND_MARKERS["per-weight-per-round"], color=c)
    for kind, marker in KIND_MARKERS.items():
        ax.plot([], [], marker, color="grey", label=f"{kind}")
    ax.set_xscale("log")
    ax.axvline(edge, color="grey", linewidth=0.6, linestyle=":")
    ax.set_xlabel(f"epsilon of the guarantee (log; at {edge:g}: no mechanism)")
    ax.set_ylabel("test accuracy")
    dashed = "; dashed: evaluation only" if data["evaluation_only"].any() else ""
    ax.set_title(
        f"{scenario}: every method\n(hollow: delta >= 1/n; faded: outside its paper's regime{dashed})", fontsize=9
    )
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save(fig, data, out)


def compare_figure(out: dict, table_csv, scenario: str) -> pd.DataFrame:

    data = compare_data(read_csv(table_csv), scenario)
    plot_compare(data, scenario, out)
    return data
