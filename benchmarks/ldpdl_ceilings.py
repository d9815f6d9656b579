"""Ceilings of a finished LDP-DL / PATE run (an evaluation, not part of the DAG: it reads every owner's
teacher outputs, which no server job may).

Per scenario prints the public-pool accuracy of one teacher (mean over owners), of the noise-free
plurality vote of all teachers (PATE without noise) and of the noise-free mean soft label (LDP-DL without
noise), beside the label accuracy PATE actually reached on its queries; and, for the LDP-DL PM runs with
AQS, the per-answer epsilon and the standard deviation of one coordinate of the server's average of N_Q
answers (the multidimensional Piecewise mechanism at input 0), against the signal's range [-1, 1].

    .venv/bin/python benchmarks/ldpdl_ceilings.py results/reduced
"""

from __future__ import annotations

import argparse
import glob
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from pipelib.privacy import soft_label


def pm_variance(eps: float, t: float = 0.0) -> float:
    """Variance of PM-ONE's output for input t (Wang et al. 2019, Lemma 1)."""
    e = math.exp(eps / 2)
    return t * t / (e - 1) + (e + 3) / (3 * (e - 1) ** 2)


def pm_md_variance(eps: float, k: int) -> float:
    """Variance of one coordinate of the multidimensional PM at input 0: m of k coordinates reported at
    eps / m each and scaled by k / m (pipelib.privacy.soft_label.pm)."""
    m = soft_label.pm_coordinates(k, eps)
    return k / m * pm_variance(eps / m)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", default="results")
    args = ap.parse_args()
    root = Path(args.results)
    print("| scenario | owners | one teacher | noise-free vote | noise-free mean soft label | PATE labels (eps) |")
    print("|---|---|---|---|---|---|")
    for d in sorted((root / "ldpdl").iterdir()):
        files = sorted(glob.glob(f"{d}/owners/party-*/soft.npy"))
        public = root / "partitions" / d.name / "public.parquet"
        pates = sorted(glob.glob(f"{d}/pate-eps*/labels.json"))
        if not files or not public.is_file() or "-" in d.name:  # variants (-n<L>, canaries) left out
            continue
        y = pd.read_parquet(public, columns=["label"])["label"].to_numpy()
        soft = np.stack([np.load(f) for f in files])  # owners x public x k
        votes = soft.argmax(2)
        counts = np.stack([(votes == c).sum(0) for c in range(soft.shape[2])])
        pate = []
        for p in pates:
            lab = json.loads(Path(p).read_text())
            eps = Path(p).parent.name.removeprefix("pate-eps")
            pate.append(f"{(np.asarray(lab['labels']) == y[np.asarray(lab['queries'])]).mean():.3f} ({eps})")
        print(
            f"| {d.name} | {len(files)} | {(votes == y).mean():.3f} | {(counts.argmax(0) == y).mean():.3f} "
            f"| {(soft.mean(0).argmax(1) == y).mean():.3f} | {', '.join(pate)} |"
        )
    print()
    print("| run | per-answer eps | N_Q | std of one averaged coordinate (PM, input 0) |")
    print("|---|---|---|---|")
    for plan in sorted(glob.glob(f"{root}/ldpdl/*/pm-eps*-aqs/plan.json")):
        if "-n" in Path(plan).parts[-3] or "canaries" in plan:
            continue
        p = json.loads(Path(plan).read_text())
        eps, nq = p["per_answer_epsilon"], p["per_query"]
        k = json.loads(next(Path(plan).parent.parent.glob("owners/party-0/teacher.json")).read_text())["classes"]
        std = math.sqrt(pm_md_variance(eps, k) / nq)
        print(f"| {Path(plan).parts[-3]}/{Path(plan).parent.name} | {eps:.4f} | {nq} | {std:.1f} |")
    for total in (5.0, 8.0):  # paper 004's regime: 1,000 queries x 30 owners / 10,000 owners = 3 answers each
        eps = total / (1000 * 30 / 10000)
        std = math.sqrt(pm_md_variance(eps, 10) / 30)
        print(f"| paper 004's regime at total eps {total:g} (3 answers each, k = 10) | {eps:.4f} | 30 | {std:.2f} |")


if __name__ == "__main__":
    main()
