"""Ceilings of finished LDP-DL / PATE runs (an evaluation, not part of the DAG: it reads the owners'
teachers, which no server job may).

Per scenario and teachers file (``teachers-L<n>``: the owners; ``teachers-T<n>``: PATE's disjoint teachers)
prints the public-pool accuracy of one teacher (mean over up to 500 teachers), of the noise-free
plurality vote of every PATE teacher (PATE without noise) and, for every LDP-DL run, of the noise-free
mean soft label of the owners its plan assigns to each query slot (LDP-DL without noise, on the run's
own queries), beside the label accuracy the run actually reached; and per PM run with AQS the per-answer
epsilon and the standard deviation of one coordinate of the server's average of N_Q answers (the
multidimensional Piecewise mechanism at input 0), against the signal's range [-1, 1].  ``--students``
also trains the run's student on its own queries with their true labels (the student's ceiling: what
perfect answers would give) and with the noise-free mean soft labels (LDP-DL's ceiling with these teachers:
what its answers would give without the mechanism's noise), once each on all the run's queries; about 20 s
per student on 2 CPU cores. ``--through-noise`` (with ``--students``, PM runs) sends two other answers through
the run's own mechanism at each owner's per-answer epsilon (fresh noise, keyed by the run) and trains the
student on the server's estimate (and on the one-hot of its top class, a server-side alternative): every
owner's *hard* answer (the one-hot of its teacher's top class: the most signal a teacher can put into the box)
and a *perfect* answer (the one-hot of the query's true label, as if every teacher were right): what the
mechanism leaves of the best possible teachers.
``--scenarios`` and ``--teachers`` (globs) keep some scenarios and teachers files.

``--hog`` adds, per teachers file, the one-teacher accuracy of ridge heads on HOG features alone (the HOG
part of the dataset's encoder) fitted on the same sampled teachers' records: the teachers the transfer
encoders replaced, side by side with them.  Every teachers file gets a row of its own (``run`` empty),
whether or not runs used it.

    .venv/bin/python benchmarks/ldpdl_ceilings.py results/reduced --hog
    .venv/bin/python benchmarks/ldpdl_ceilings.py results/reduced --students --runs 'pm-*-q30-L10000-aqs'  # Table 1
    .venv/bin/python benchmarks/ldpdl_ceilings.py results/reduced --students --runs 'pm-*-q30-L10000-aqs' \
        --scenarios 'ldpdl_fashion*' --teachers L10000  # Fashion-MNIST's Table 1 LDP-DL rows, every seed
    .venv/bin/python benchmarks/ldpdl_ceilings.py results/reduced --students --through-noise \
        --runs 'pm-*-q30-L10000-aqs' --scenarios 'ldpdl_fashion*' --teachers L10000
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from pipelib.features import hog_encoder
from pipelib.io import read_images
from pipelib.job import Job
from pipelib.methods import ldpdl, teacher_encoder, teachers
from pipelib.methods.student import ServerStudent
from pipelib.privacy import soft_label
from pipelib.seeding import rng


def pm_variance(eps: float, t: float = 0.0) -> float:
    """Variance of PM-ONE's output for input t (Wang et al. 2019, Lemma 1)."""
    e = math.exp(eps / 2)
    return t * t / (e - 1) + (e + 3) / (3 * (e - 1) ** 2)


def pm_md_variance(eps: float, k: int) -> float:
    """Variance of one coordinate of the multidimensional PM at input 0: m of k coordinates reported at
    eps / m each and scaled by k / m (pipelib.privacy.soft_label.pm)."""
    m = soft_label.pm_coordinates(k, eps)
    return k / m * pm_variance(eps / m)


def encoder_of(scenario: str, config: dict, root: Path) -> tuple[dict, Path | None]:
    """The teachers' encoder settings of a scenario and its model file (None for HOG)."""
    t, private = config["ldpdl"]["teacher"], config["scenarios"][scenario]["private"]
    settings = t["by_dataset"].get(private, t["encoder"])
    return settings, (root / "ldpdl" / f"encoder-{private}" / "encoder.pt" if settings["kind"] == "transfer" else None)


def student_on(root: Path, scenario: str, queries, targets, config: dict, what: str) -> float:
    """Test accuracy of the run's student architecture trained once on its queries with ``targets`` (soft labels,
    one row per query; one-hot rows: the true labels)."""
    from pipelib.train import loop

    d = root / "partitions" / scenario
    job = Job(device="cpu", threads=2, input={"public": str(d / "public.parquet"), "test": str(d / "test.parquet")})
    server = ServerStudent(job, config["ldpdl"]["student"], config["ldpdl"]["loss"])
    server.fit(np.asarray(queries), np.asarray(targets, dtype=np.float64), 0, what)
    return loop.accuracy(server.model, server.x_test, server.y_test)


def through_noise(answers: np.ndarray, owners: np.ndarray, plan: dict, mechanism: str, seed: int, key: str):
    """The server's targets (queries x k) from ``answers`` (queries x N_Q x k probability rows; ``owners``: who
    gives each) each sanitized by ``mechanism`` at its owner's per-answer epsilon under the plan (the total over
    the owner's own load, as the release gives it), with noise keyed by ``seed`` and ``key`` (not the run's own
    draw: :func:`pipelib.seeding.release_rng` keys that)."""
    q, n, k = answers.shape
    eps = ldpdl.owner_epsilons(plan["total_epsilon"], np.asarray(plan["loads"]))[np.asarray(owners)].ravel()
    flat, out = answers.reshape(-1, k), np.empty((q * n, k))
    g = rng(seed, "ldpdl-ceilings", key)
    for e in np.unique(eps):  # one call per epsilon, in row order: one call when every owner carries one load
        rows = eps == e
        out[rows] = soft_label.sanitize(mechanism, flat[rows], float(e), g)
    return ldpdl.server_targets(out.reshape(q, n, k))


def sampled(n: int) -> np.ndarray:
    """The teachers a one-teacher accuracy averages over: up to 500, a fixed draw."""
    return np.random.default_rng(0).choice(n, min(500, n), replace=False)


def hog_heads_accuracy(root: Path, scenario: str, design: str, config: dict, images, y) -> float:
    """Mean public-pool accuracy of ridge heads on HOG features alone (the HOG part of the dataset's
    transfer encoder, else ``ldpdl.teacher.encoder``; ridge ``ldpdl.teacher.ridge``) fitted on the records
    of the sampled teachers of ``design``, as rule ldpdl_teachers fits them."""
    t = config["ldpdl"]["teacher"]
    hog = t["by_dataset"].get(config["scenarios"][scenario]["private"], {}).get("hog", t["encoder"])
    tables = sorted((root / "partitions" / scenario).glob("party-*.parquet"), key=lambda p: int(p.stem.split("-")[1]))
    parts = [read_images(p) for p in tables]
    sizes = [len(f) for f, _, _ in parts]
    labels = np.concatenate([f["label"].to_numpy().astype(np.int64) for f, _, _ in parts])
    k = len(parts[0][2]["task_classes"])
    records = config["ldpdl"]["owners"]["records"] if design.startswith("L") else 0
    sets = ldpdl.owner_records(design, sizes, records, config["seed"], scenario)
    some = sampled(len(sets))
    features = hog_encoder(np.concatenate([im for _, im, _ in parts]), hog)
    weights, temps, _ = teachers.fit_heads(features, labels, [sets[i] for i in some], k, float(t["ridge"]))
    public = hog_encoder(images, hog)
    return float(np.mean([(ldpdl.Owner(i, weights[i], temps[i]).votes(public) == y).mean() for i in range(len(some))]))


def main() -> None:
    from pipelib.config import load, scenarios, validate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", default="results")
    ap.add_argument("--configfile", nargs="*", default=[], help="the run's preset (default: from its folder name)")
    ap.add_argument(
        "--students",
        action="store_true",
        help="train each run's student on its queries with their true labels, and with the noise-free mean soft labels",
    )
    ap.add_argument(
        "--through-noise",
        action="store_true",
        help="with --students: also the student on hard and on perfect answers through the run's mechanism",
    )
    ap.add_argument("--scenarios", default="*", help="only the scenarios whose name matches (a glob)")
    ap.add_argument("--teachers", default="*", help="only the teacher designs that match (a glob: 'L10000')")
    ap.add_argument("--hog", action="store_true", help="and ridge heads on HOG features for the same teachers")
    ap.add_argument(
        "--runs", default="*", help="only the runs whose folder name matches (a glob: 'pm-*-q30-L10000-aqs')"
    )
    args = ap.parse_args()
    root = Path(args.results)
    preset = Path("presets") / f"{root.name}.yaml"
    config = validate(load("config.yaml", *(args.configfile or ([preset] if preset.is_file() else []))))
    config = {**config, "scenarios": scenarios(config)}  # with the variants: Table 1's seeds <scenario>-s<i>
    rows, noise = [], []
    for d in sorted(p for p in (root / "ldpdl").iterdir() if not p.name.startswith("encoder-")):
        public = root / "partitions" / d.name / "public.parquet"
        if not public.is_file() or "canaries" in d.name:
            continue
        frame, images, _ = read_images(public)
        y = frame["label"].to_numpy()
        if d.name not in config["scenarios"] or not fnmatch.fnmatch(d.name, args.scenarios):
            continue
        files = sorted(d.glob(f"teachers-{args.teachers}/teachers.npz"))
        if any(not f.parent.name.startswith("teachers-S") for f in files):  # heads: the encoder's features
            features = teacher_encoder.encoder_features(images, *encoder_of(d.name, config, root))
        for tf in files:
            design = tf.parent.name.removeprefix("teachers-")
            info = json.loads((tf.parent / "teachers.json").read_text())
            if design.startswith("S"):  # PATE's own teachers: CNNs from scratch, each voting on the pool
                params, arch = teachers.load_cnn_teachers(tf)
                k = params["classifier.weight"].shape[1]
                all_votes = teachers.cnn_votes(params, arch, k, images)
                one = np.mean([(all_votes[t] == y).mean() for t in sampled(len(all_votes))])
            else:
                weights, temps = ldpdl.load_owners(tf)
                k = weights.shape[2]
                some = sampled(len(weights))
                one = np.mean([(ldpdl.Owner(t, weights[t], temps[t]).votes(features) == y).mean() for t in some])
            row = {
                "scenario": d.name,
                "teachers": design,
                "features": info["features"],
                "records each": "-".join(map(str, sorted(set(info["records_each"])))),
                "one teacher": round(float(one), 3),
            }
            if args.hog and not design.startswith("S"):
                row["one teacher, HOG heads"] = round(hog_heads_accuracy(root, d.name, design, config, images, y), 3)
            if design[0] in "TS":
                votes = (
                    all_votes
                    if design.startswith("S")
                    else np.stack([ldpdl.Owner(t, weights[t], temps[t]).votes(features) for t in range(len(weights))])
                )
                row["noise-free vote"] = round(float((ldpdl.vote_counts(votes, k).argmax(1) == y).mean()), 3)
            rows.append({**row, "run": ""})
            if design[0] in "TS":
                pate = root / "distill" / d.name  # PATE runs in the distillation stage
                for run in sorted(pate.glob(f"pate-{design}-q*/gnmax-eps*/labels.parquet")):
                    lab = pd.read_parquet(run)
                    acc = (lab["label"].to_numpy() == y[lab["row"].to_numpy()]).mean()
                    name = f"{run.parent.parent.name}/{run.parent.name}"
                    rows.append({**row, "run": name, "run label acc.": round(float(acc), 3)})
                continue
            for plan_path in sorted(d.glob(f"*-{design}-*/plan.json")):
                if not fnmatch.fnmatch(plan_path.parent.name, args.runs):
                    continue
                plan = json.loads(plan_path.read_text())
                run = plan_path.parent
                if not (run / f"iter-{plan['iterations']}/result.json").is_file():
                    print(f"skipped {run}: not finished")
                    continue
                slots = np.asarray(plan["slots"])
                queries, targets, hard = [], [], []
                for t in range(1, plan["iterations"] + 1):
                    q = np.load(run / ("iter-1/queries.npy" if t == 1 else f"iter-{t - 1}/next.npy"))
                    s = slots[(t - 1) * plan["per_iteration"] : t * plan["per_iteration"]]
                    for query, owners in zip(q, s):
                        soft = np.concatenate(
                            [ldpdl.Owner(o, weights[o], temps[o]).soft(features[[query]]) for o in owners]
                        )
                        queries.append(query)
                        targets.append(soft.mean(0))
                        hard.append(np.eye(k)[soft.argmax(1)])
                ceiling = (np.argmax(targets, 1) == y[queries]).mean()
                result = json.loads((run / f"iter-{plan['iterations']}/result.json").read_text())
                extra = {}
                if args.students:
                    onehot = np.eye(k)[y[np.asarray(queries)]]
                    for what, target in (("student on true labels", onehot), ("student on noise-free labels", targets)):
                        extra[what] = round(student_on(root, d.name, queries, target, config, what), 3)
                    mechanism = run.name.split("-")[0]
                    if args.through_noise and mechanism == "pm":
                        answers = {"hard": np.stack(hard), "perfect": np.repeat(onehot[:, None], len(hard[0]), 1)}
                        owners = slots[: len(queries)]  # the slots in query order, iteration by iteration
                        for what, a in answers.items():  # one key for both arms: paired draws
                            noisy = through_noise(a, owners, plan, mechanism, config["seed"], f"{d.name}/{run.name}")
                            extra[f"{what} answers + noise: labels"] = round(
                                float((noisy.argmax(1) == y[queries]).mean()), 3
                            )
                            extra[f"{what} answers + noise: student"] = round(
                                student_on(root, d.name, queries, noisy, config, what), 3
                            )
                            top = np.eye(k)[noisy.argmax(1)]  # the server keeps only the estimate's top class
                            extra[f"{what} answers + noise: student on its argmax"] = round(
                                student_on(root, d.name, queries, top, config, what), 3
                            )
                rows.append(
                    {
                        **row,
                        "run": run.name,
                        "noise-free mean soft label": round(float(ceiling), 3),
                        "run label acc.": round(result["label_accuracy"], 3),
                        "student acc.": round(result["accuracy"], 3),
                        **extra,
                    }
                )
                if run.name.startswith("pm-") and run.name.endswith("-aqs"):
                    eps, nq = plan["per_answer_epsilon"], plan["per_query"]
                    std = math.sqrt(pm_md_variance(eps, weights.shape[2]) / nq)
                    noise.append(
                        {
                            "run": f"{d.name}/{run.name}",
                            "per-answer eps": round(eps, 4),
                            "N_Q": nq,
                            "std of one averaged coordinate": round(std, 2),
                        }
                    )
    print(pd.DataFrame(rows).to_markdown(index=False))
    print()
    print(pd.DataFrame(noise).to_markdown(index=False))


if __name__ == "__main__":
    main()
