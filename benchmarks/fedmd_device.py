"""FedMD rows on a GPU machine that has PyTorch but no Snakemake (issue 29, item 5).

Two steps.  ``plan`` (here, in the project's environment) reads the preset the way the rules do and writes
one JSON job list: the pre-trainings (rule ``pretrain`` / ``pretrain_epochs``) and the FedMD rows (rule
``fedmd`` / ``fedmd_budget``) with the same parameters and the same output paths as the workflow, whose
inputs (partitions, NFDP samples and their ledger, the public data) must already exist.  ``run`` (on the
device) executes the list: every pre-training in parallel processes, then every FedMD row in parallel
processes, each job one call into pipelib exactly as its rule's script makes it, and prints each job's
wall time.  The outputs are the workflow's files (a Snakemake run on the same folder would call them
incomplete or stale: they are measurements to read, not cache to reuse; the result rows record the device).

    .venv/bin/python benchmarks/fedmd_device.py plan --configfile presets/reduced.yaml \
        --scenario femnist_iid --runs np nfdp-with_replacement-k16 --budget 20 5000 20 -o jobs.json
    python3 benchmarks/fedmd_device.py run jobs.json --parallel 12          # on the GPU machine
    .venv/bin/python benchmarks/fedmd_device.py report docs/reproduction/gpu-h200 --dataset FEMNIST

``report`` writes ``<folder>/README.md`` from the result rows under ``<folder>/results`` (each accuracy with
its 95 % interval over the parties and the test records, beside paper 002's Table 2; the run logs' wall times).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def plan(args) -> list[dict]:
    """The jobs of ``args.runs`` on ``args.scenario`` (at ``args.budget`` = rounds, queries, pre-training
    epochs, or the preset's own), with the rules' parameters."""
    from pipelib import config as cfgmod
    from pipelib.data import ingest

    config = cfgmod.load(Path(__file__).resolve().parents[1] / "config.yaml", *args.configfile)
    config = cfgmod.validate(config)
    fedmd, res = config["fedmd"], config["results_dir"]
    sc = cfgmod.scenarios(config)[args.scenario]
    archs = sorted({fedmd["architectures"][i % len(fedmd["architectures"])] for i in range(sc["parties"])})
    n_public = ingest.dataset(sc["public"]).classes
    n_classes = n_public + len(config["tasks"][sc["task"]]["classes"])
    own = (fedmd["rounds"], fedmd["public_per_round"], fedmd["pretrain"]["epochs"])
    rounds, queries, epochs = args.budget or own
    ablation = (rounds, queries, epochs) != own
    pre_dir = f"{res}/pretrain/{sc['public']}" + (f"/e{epochs}" if epochs != own[2] else "")
    jobs = []
    for arch in archs:
        stem = f"{pre_dir}/{arch}-c{n_classes}"
        jobs.append(
            {
                "kind": "pretrain",
                "arch": arch,
                "train_path": f"{res}/data/{sc['public']}/train.parquet",
                "test_path": f"{res}/data/{sc['public']}/test.parquet",
                "n_classes": n_classes,
                "settings": {**fedmd["pretrain"], "epochs": epochs},
                "lr": fedmd["lr"],
                "seed": config["seed"],
                "device": fedmd["device"],
                "out_model": f"{stem}.pt",
                "out_summary": f"{stem}.json",
                "checkpoint": f"{stem}.resume.pt",
            }
        )
    params = {k: v for k, v in fedmd.items() if k not in ("pretrain", "centralized", "runtime", "compare")}
    part = f"{res}/partitions/{args.scenario}"
    for run in args.runs:
        release = {"scenario": args.scenario, "answer": fedmd["answer"]}
        if ablation:
            release.update(rounds=str(rounds), q=str(queries), pe=str(epochs))
        release["run"] = run
        where = f"fedmd_budget/{args.scenario}/{fedmd['answer']}/R{rounds}-q{queries}-pe{epochs}/{run}"
        if not ablation:
            where = f"fedmd/{args.scenario}/{fedmd['answer']}/{run}"
        if run == "np":
            parties, ledger = [f"{part}/party-{i}.parquet" for i in range(sc["parties"])], None
        else:
            sampling, k = run.split("-")[1:]
            sample = f"{res}/samples/{args.scenario}/{sampling}-{k}"
            parties, ledger = [f"{sample}/party-{i}.parquet" for i in range(sc["parties"])], f"{sample}/ledger.csv"
        jobs.append(
            {
                "kind": "fedmd",
                "release": release,
                "party_paths": parties,
                "models": {a: f"{pre_dir}/{a}-c{n_classes}.pt" for a in archs},
                "public_path": f"{part}/public.parquet",
                "test_path": f"{part}/test.parquet",
                "n_public_classes": n_public,
                "cfg": {**params, "answer": fedmd["answer"], "rounds": rounds, "public_per_round": queries},
                "seed": int(sc.get("seed", config["seed"])),
                "preset": config["preset"],
                "out": {name: f"{res}/{where}/{name}.{ext}" for name, ext in OUTPUTS.items()},
                "checkpoint": f"{res}/{where}/resume.pt",
                "ledger_path": ledger,
                "randomness": "none",
            }
        )
    return jobs


OUTPUTS = {"result": "json", "rounds": "parquet", "models": "pt", "releases": "json"}


def execute(job: dict, threads: int, precision: str = "fp32") -> None:
    """One job, as its rule's script runs it (at ``precision``: the rule's ``fedmd.precision``)."""
    import logging

    from pipelib.job import Job  # the parent (run) may lack pipelib: its children get PYTHONPATH

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    for path in [job.get("out_model"), *job.get("out", {}).values()]:
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
    if job["kind"] == "pretrain":
        from pipelib.methods.pretrain import pretrain
        from pipelib.train.supervised import TrainSettings

        context = Job(
            seed=job["seed"],
            device=job["device"],
            threads=threads,
            precision=precision,
            rule="pretrain",
            release={"arch": job["arch"], "n_classes": str(job["n_classes"])},
            checkpoint=job["checkpoint"],
            input={"train": job["train_path"], "test": job["test_path"]},
            output={"model": job["out_model"], "summary": job["out_summary"]},
        )
        settings = TrainSettings.from_config(job["settings"], lr=job["lr"])
        pretrain(context, settings, n_classes=job["n_classes"], max_images=job["settings"]["max_images"])
    else:
        from pipelib.methods.fedmd import run_row

        inputs = {"parties": job["party_paths"], "public": job["public_path"], "test": job["test_path"]}
        if job["ledger_path"]:
            inputs["ledger"] = job["ledger_path"]
        context = Job(
            seed=job["seed"],
            preset=job["preset"],
            threads=threads,
            precision=precision,
            randomness=job["randomness"],
            rule="fedmd",
            release=job["release"],
            checkpoint=job["checkpoint"],
            input=inputs,
            output=job["out"],
        )
        run_row(context, job["cfg"], models=job["models"], n_public_classes=job["n_public_classes"])


def run(args) -> None:
    """Every pre-training, then every FedMD row, ``args.parallel`` processes at a time."""
    jobs = json.loads(Path(args.jobs).read_text())
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    logs = Path(args.logs)
    logs.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()
    for kind in ("pretrain", "fedmd"):
        stage = [(i, j) for i, j in enumerate(jobs) if j["kind"] == kind]
        running, t0 = [], time.perf_counter()
        for i, job in stage:
            while len(running) >= args.parallel:
                running = _reap(running)
                time.sleep(0.5)
            name = job.get("arch") or "_".join(Path(job["out"]["result"]).parent.parts[-3:])
            log = open(logs / f"{i:02d}-{kind}-{name}.log", "w")
            cmd = [sys.executable, __file__, "job", args.jobs, str(i), "--threads", str(args.threads)]
            cmd += ["--precision", args.precision]
            running.append((name, time.perf_counter(), subprocess.Popen(cmd, stdout=log, stderr=log, env=env)))
        while running:
            running = _reap(running)
            time.sleep(0.5)
        print(f"stage {kind}: {len(stage)} jobs, {time.perf_counter() - t0:.0f} s wall", flush=True)
    print(f"all: {time.perf_counter() - t_all:.0f} s wall", flush=True)


def _reap(running: list) -> list:
    left = []
    for name, t0, proc in running:
        if proc.poll() is None:
            left.append((name, t0, proc))
        else:
            print(f"  {name}: exit {proc.returncode}, {time.perf_counter() - t0:.0f} s", flush=True)
    return left


def _models(archs: list[str]) -> str:
    """'FedMD's ten CNNs' for the paper preset's parties, else the architectures."""
    names = sorted(set(archs))
    return f"{len(names)} FedMD CNNs (128-512 filters)" if len(names) == 10 else ", ".join(names)


def _finding(row: dict) -> str:
    """Where the paper's printed accuracy lies against a row's 95 % interval."""
    from pipelib.stats import against_interval

    what = f"- {row['preset']} preset, {row['method']} k = {row['k']} ({row['models']}, {row['R x queries']}):"
    if row["paper"] is None or row["paper"] != row["paper"]:
        return f"{what} no printed value to compare"
    where = against_interval(row["paper"], *row["_interval"], digits=3)
    suffix = ": reproduced at this budget" if where.startswith("inside") else ""
    return f"{what} the paper's {row['paper']:.3f} lies {where}{suffix}"


def report(args) -> str:
    """The page of a device run's FedMD rows (``args.folder``/results/**/result.json), generated."""
    import pandas as pd

    from pipelib import stats
    from pipelib.report import paper
    from pipelib.report.pages import markdown_table
    from pipelib.report.parties import final_party_accuracies

    folder = Path(args.folder)
    rows = []
    for path in sorted(folder.glob("results/**/result.json")):
        r = json.loads(path.read_text())
        low, high = stats.mean_accuracy_interval(final_party_accuracies(path.with_name("rounds.parquet")), r["test_n"])
        k = r["k"] if r["method"] == "FedMD-NFDP" else None
        printed = paper.table2(args.dataset, r["method"], args.paper_k.get(k, k))
        rows.append(
            {
                "preset": r["preset"],
                "run": str(path.parent.relative_to(folder / "results")),
                "method": r["method"],
                "k": r["k"],
                "n": r["n"],
                "epsilon": r["epsilon"],
                "delta": r["delta"],
                "R x queries": f"{r['rounds']} x {r['public_per_round']:,}",
                "models": _models(r["archs"]),
                "accuracy [95 %]": f"{r['accuracy']:.4f} [{low:.3f}, {high:.3f}]",
                "_interval": (low, high),
                "paper": printed[0] / 100 if printed else None,
                "gap (points)": round(100 * r["accuracy"] - printed[0], 1) if printed else None,
                "hardware": r["hardware"],
                "job wall (s)": round(r["wall_seconds"]),
            }
        )
    t = pd.DataFrame(rows).sort_values(["preset", "method", "k"], kind="stable")
    findings = [_finding(row) for row in t.to_dict("records")]
    t = t.drop(columns="_interval")
    pre = [json.loads(p.read_text()) | {"file": p.stem} for p in sorted(folder.glob("results/**/pretrain/**/*.json"))]
    lines = [
        f"<!-- generated by benchmarks/fedmd_device.py report from {folder}/results; do not edit by hand -->",
        "",
        f"# FedMD on a GPU: {args.dataset} ({folder.name})",
        "",
        "FedMD rows run by `benchmarks/fedmd_device.py` (the workflow's own pre-training and FedMD code, one process",
        "per job) on a GPU machine; the files they wrote are in `results/` beside this page and the device's console",
        "output in `logs/`. Accuracy: the mean over the parties with its 95 % interval over the parties and the test",
        "records (`pipelib.stats.mean_accuracy_interval`); paper: paper 002's Table 2 at the same k"
        + "".join(f", its k = {b:,} row for our k = {a:,}" for a, b in args.paper_k.items() if a != b)
        + ".",
        "Job wall: the result row's training time summed over every attempt of the job (a job resumed from its",
        "round checkpoint counts its first attempt too).",
        "",
        markdown_table(list(t.columns), t.astype(object).where(t.notna(), None).values.tolist()),
        "",
    ]
    lines += ["Against the paper (generated from the rows above):", "", *findings, ""]
    if pre:
        lines += [
            "Pre-training (shared initialization on the public data, test accuracy on its test split):",
            "",
            markdown_table(
                ["model file", "epochs", "public test accuracy"],
                [[p["file"], p.get("epochs"), p.get("public_test_accuracy")] for p in pre],
            ),
            "",
        ]
    text = "\n".join(lines)
    (folder / "README.md").write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("plan", help="write the job list (needs the project's environment)")
    p.add_argument("--configfile", nargs="*", default=[], help="preset files over config.yaml")
    p.add_argument("--scenario", required=True)
    p.add_argument("--runs", nargs="+", required=True, help="np, nfdp-<sampling>-k<k>")
    p.add_argument("--budget", nargs=3, type=int, metavar=("ROUNDS", "QUERIES", "EPOCHS"))
    p.add_argument("-o", "--output", required=True)
    r = sub.add_parser("run", help="run a job list (needs PyTorch, numpy, pandas, pyarrow)")
    r.add_argument("jobs")
    r.add_argument("--parallel", type=int, default=4, help="processes at a time")
    r.add_argument("--threads", type=int, default=1, help="CPU threads per process")
    r.add_argument("--precision", default="fp32", help="fp32 | bf16 (fedmd.precision)")
    r.add_argument("--logs", default="logs/fedmd_device")
    j = sub.add_parser("job", help="one job of a list (run starts these)")
    j.add_argument("jobs")
    j.add_argument("index", type=int)
    j.add_argument("--threads", type=int, default=1)
    j.add_argument("--precision", default="fp32")
    w = sub.add_parser("report", help="write <folder>/README.md from <folder>/results (project environment)")
    w.add_argument("folder")
    w.add_argument("--dataset", required=True, help="paper 002's Table 2 label of the rows (FEMNIST, CIFAR-10)")
    w.add_argument("--paper-k", default="364:2880", help="our k:the paper's k, comma-separated")
    args = parser.parse_args()
    if args.step == "report":
        args.paper_k = {int(a): int(b) for a, b in (pair.split(":") for pair in args.paper_k.split(",") if pair)}
        print(report(args))
    elif args.step == "plan":
        jobs = plan(args)
        Path(args.output).write_text(json.dumps(jobs, indent=1))
        print(f"{len(jobs)} jobs -> {args.output}")
    elif args.step == "run":
        run(args)
    else:
        execute(json.loads(Path(args.jobs).read_text())[args.index], args.threads, args.precision)


if __name__ == "__main__":
    main()
