"""Ridge heads against logistic heads for LDP-DL's owners (issue 50: choose the heads by measurement; an
evaluation, not part of the DAG: it reads the owners' records).

For the first ``--owners`` owners of a design (their records drawn as rule ldpdl_teachers draws them), on
the features of the dataset's teacher encoder (its model under ``<results>/ldpdl/encoder-<dataset>/``), fits
(a) the workflow's heads: ridge least squares with a temperature fitted on the owner's own labels
(``pipelib.methods.teachers.fit_heads``), and (b) multinomial logistic regression with an L2 penalty
(``--l2`` x the owner's record count on every weight but the intercept's), all owners at once by L-BFGS on
the sum of their objectives (owners share no parameter, so each reaches its own optimum).  Prints per head:
fit seconds per owner, one teacher's accuracy, negative log-likelihood and expected calibration error on
the public pool, the accuracy of the noise-free mean of ``--per-query`` owners' soft labels on random
public queries, and of the same mean after the Piecewise mechanism at ``--epsilon`` / ``--answers`` per
answer (what LDP-DL's server sees; one seeded draw).

    .venv/bin/python benchmarks/ldpdl_heads.py results/reduced ldpdl_mnist --owners 200
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from pipelib.config import load
from pipelib.io import read_images
from pipelib.methods import ldpdl, teacher_encoder, teachers
from pipelib.privacy import soft_label


def logistic_heads(features, labels, sets, k: int, l2: float, iterations: int) -> np.ndarray:
    """Multinomial logistic heads (weights: owners x (d + 1) x k), each fitted on its own rows only."""
    x = torch.from_numpy(ldpdl.augment(features)).double()
    y = torch.as_tensor(np.asarray(labels, dtype=np.int64))
    rows = torch.from_numpy(np.stack(sets).astype(np.int64))  # equal sizes (an L<n> design)
    xb, yb = x[rows], y[rows]
    w = torch.zeros(len(sets), x.shape[1], k, dtype=torch.float64, requires_grad=True)
    mask = torch.ones(x.shape[1], 1, dtype=torch.float64)
    mask[-1] = 0.0  # the intercept is not penalised
    opt = torch.optim.LBFGS([w], lr=1, max_iter=iterations, history_size=20, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        logits = torch.bmm(xb, w)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, k), yb.reshape(-1), reduction="sum")
        loss = loss + 0.5 * l2 * rows.shape[1] * ((w * mask) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach().float().numpy()


def metrics(probs: np.ndarray, y: np.ndarray) -> dict:
    """Accuracy, mean negative log-likelihood and 15-bin expected calibration error of one owner's labels."""
    conf, pred = probs.max(1), probs.argmax(1)
    bins = np.minimum((conf * 15).astype(int), 14)
    ece = sum(abs((pred[bins == b] == y[bins == b]).mean() - conf[bins == b].mean()) * (bins == b).mean()
              for b in range(15) if (bins == b).any())  # fmt: skip
    nll = -np.log(np.clip(probs[np.arange(len(y)), y], 1e-12, None)).mean()
    return {"acc": (pred == y).mean(), "nll": nll, "ece": ece}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", type=Path, help="a preset's results folder with the scenario's partitions and encoder")
    ap.add_argument("scenario")
    ap.add_argument("--configfile", nargs="*", default=[], help="the preset (default: from the folder's name)")
    ap.add_argument("--design", default="L10000")
    ap.add_argument("--owners", type=int, default=200)
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--per-query", type=int, default=30)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--epsilon", type=float, default=5.0)
    ap.add_argument("--answers", type=int, default=3, help="answers per owner: per-answer epsilon = epsilon / this")
    args = ap.parse_args()
    torch.set_num_threads(2)
    preset = Path("presets") / f"{args.results.name}.yaml"
    config = load("config.yaml", *(args.configfile or ([preset] if preset.is_file() else [])))
    t = config["ldpdl"]["teacher"]
    private = config["scenarios"][args.scenario]["private"]
    encoder = t["by_dataset"].get(private, t["encoder"])
    model = args.results / "ldpdl" / f"encoder-{private}" / "encoder.pt" if encoder["kind"] == "transfer" else None
    root = args.results / "partitions" / args.scenario
    parts = [read_images(p) for p in sorted(root.glob("party-*.parquet"), key=lambda p: int(p.stem.split("-")[1]))]
    labels = np.concatenate([f["label"].to_numpy().astype(np.int64) for f, _, _ in parts])
    k = len(parts[0][2]["task_classes"])
    records = config["ldpdl"]["owners"]["records"]
    sets = ldpdl.owner_records(args.design, [len(f) for f, _, _ in parts], records, config["seed"], args.scenario)
    sets = sets[: args.owners]
    features = teacher_encoder.encoder_features(np.concatenate([im for _, im, _ in parts]), encoder, model)
    frame, public_images, _ = read_images(root / "public.parquet")
    y = frame["label"].to_numpy()
    public = teacher_encoder.encoder_features(public_images, encoder, model)
    g = np.random.default_rng(0)
    queries = g.choice(len(y), args.queries, replace=False)
    groups = np.stack([g.choice(len(sets), args.per_query, replace=False) for _ in queries])
    per_answer = args.epsilon / args.answers
    ridge = float(encoder.get("ridge", t["ridge"]))
    print(f"{args.scenario}: {len(sets)} owners of {records} records, {features.shape[1]} features, k = {k}")
    for head in ("ridge + temperature", "logistic"):
        t0 = time.perf_counter()
        if head == "logistic":
            weights = logistic_heads(features, labels, sets, k, args.l2, args.iterations)
            owners = [ldpdl.Owner(i, weights[i], 1.0) for i in range(len(sets))]
        else:
            weights, temps, _ = teachers.fit_heads(features, labels, sets, k, ridge)
            owners = [ldpdl.Owner(i, weights[i], temps[i]) for i in range(len(sets))]
        took = (time.perf_counter() - t0) / len(sets)
        soft = np.stack([o.soft(public) for o in owners])  # owners x pool x k
        m = [metrics(s, y) for s in soft]
        mean = soft[groups, queries[:, None]].mean(1)  # queries x k: the noise-free mean of each group
        noisy = np.stack([
            soft_label.pm(soft_label.to_box(soft[groups[:, j], queries]), per_answer, g)
            for j in range(args.per_query)
        ], 1)  # fmt: skip
        served = ldpdl.server_targets(noisy)
        print(
            f"  {head:20s} {took * 1e3:7.1f} ms/owner; one teacher acc {np.mean([r['acc'] for r in m]):.3f} "
            f"nll {np.mean([r['nll'] for r in m]):.3f} ece {np.mean([r['ece'] for r in m]):.3f}; "
            f"mean of {args.per_query} {(mean.argmax(1) == y[queries]).mean():.3f}, after PM at "
            f"{per_answer:.3g} per answer {(served.argmax(1) == y[queries]).mean():.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
