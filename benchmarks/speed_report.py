"""The speed report (issue 32): how fast the workflow's training runs against this machine's limit, and
what a job and a run cost besides training.  Prints markdown tables (docs/benchmarks.md keeps the last
ones, with the machine they were measured on).

Training: for every architecture a preset trains (the method, the input shape and the batch size its jobs
use), images per second through the workflow's own loop (``pipelib.train.loop.fit``: uint8 batches
gathered on the device, Adam) in fp32 and under bf16 autocast (``precision: bf16``), and the GFLOP/s that
is (FLOPs of one forward and backward pass counted by ``torch.utils.flop_counter``) against the GEMM peak
measured in the same run.  Overhead (``--overhead``): the floor of a job that trains nothing (importing
what its script imports, in a fresh interpreter) and of one that does, each preset's dry-run time, the
time until ``snakemake`` prints its plan, and a no-op re-run of the tiny preset's finished results.

    .venv/bin/python benchmarks/speed_report.py --preset reduced --threads 1
    .venv/bin/python benchmarks/speed_report.py --preset paper --write-entries paper.json
    python3 benchmarks/speed_report.py --entries paper.json --device cuda   # on a GPU machine without Snakemake
    .venv/bin/python benchmarks/speed_report.py --overhead --tiny-dir /tmp/tinyrun  # the job and run costs
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from pipelib.train import loop, models

ROOT = Path(__file__).resolve().parents[1]
SHAPES = {1: (1, 28, 28), 3: (3, 32, 32)}


def trained_architectures(preset: str) -> list[dict]:
    """Every (method, arch, input shape, batch) a preset's training jobs use, once each."""
    # here, not at the top: a GPU machine without Snakemake or jsonschema runs this script with --entries
    from pipelib import config as cfgmod
    from pipelib.data import ingest

    files = [ROOT / "config.yaml"] + ([] if preset == "paper" else [ROOT / f"presets/{preset}.yaml"])
    config = cfgmod.validate(cfgmod.load(*files))

    def shape(dataset: str) -> tuple:
        return SHAPES[3 if ingest.dataset(dataset).kind.startswith("cifar") else 1]

    scenarios = cfgmod.scenarios(config)
    out = []

    def add(method, arch, scenario, role, batch, classes=10):
        if scenario not in scenarios:  # a preset without the scenario
            return
        dataset = scenarios[scenario][role]
        entry = {"method": method, "arch": arch, "shape": shape(dataset), "batch": batch, "classes": classes}
        if not any(e["arch"] == arch and e["shape"] == entry["shape"] and e["batch"] == batch for e in out):
            out.append(entry)

    fedmd = config["fedmd"]
    for sc in ("femnist_iid", "cifar_iid"):
        for arch in fedmd["architectures"]:
            add("FedMD parties", arch, sc, "public", fedmd["init_batch"], 16)
    rknn = config["rknn"]
    for sc in ("rknn_mnist", "rknn_cifar10"):
        for enc in rknn["encoders"].values():
            if enc.get("kind") == "simclr":
                add("SimCLR encoder", enc["arch"], sc, "public", enc["batch"], enc["dim"])
        add("reverse k-NN student", rknn["student"]["arch"], sc, "public", rknn["student"]["batch"])
    student = config["ldpdl"]["student"]
    for sc in ("ldpdl_mnist", "ldpdl_cifar10"):
        add("LDP-DL / PATE student", student["arch"], sc, "public", student["batch"])
    ldpfl = config["ldpfl"]
    for spec in ldpfl["datasets"].values():
        add("LDP-FL clients", spec["arch"], spec["scenario"], "private", spec.get("batch", ldpfl["batch"]))
    return out


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def gemm_peak(device: torch.device, dtype: torch.dtype, n: int, seconds: float) -> float:
    """GFLOP/s of an n x n matrix product, the best of repeated timings."""
    a, b = torch.randn(n, n, device=device, dtype=dtype), torch.randn(n, n, device=device, dtype=dtype)
    best, t_end = 0.0, time.perf_counter() + seconds
    torch.mm(a, b)
    while time.perf_counter() < t_end or best == 0.0:
        sync(device)
        t0 = time.perf_counter()
        for _ in range(4):
            torch.mm(a, b)
        sync(device)
        best = max(best, 4 * 2 * n**3 / (time.perf_counter() - t0) / 1e9)
    return best


def flops_per_image(entry: dict, device: torch.device) -> float:
    """FLOPs of one training step (forward and backward) per image."""
    model = loop.prepare(models.build(entry["arch"], entry["shape"], entry["classes"]), device)
    return models.training_flops(model, entry["shape"], entry["batch"])


def train_rate(entry: dict, device: torch.device, precision: str, seconds: float, graph: bool = False) -> float:
    """Images per second of ``loop.fit`` on random uint8 images: one warm-up epoch, then whole epochs until
    ``seconds`` have passed (the median epoch's rate); ``graph``: as FedMD's parties call it."""
    loop.set_precision(precision, device)
    torch.manual_seed(0)
    model = loop.prepare(models.build(entry["arch"], entry["shape"], entry["classes"]), device)
    n = entry["batch"] * max(8, 2048 // entry["batch"])
    g = torch.Generator().manual_seed(0)
    x = loop.to_device(
        torch.randint(0, 256, (n, *entry["shape"][1:], entry["shape"][0]), generator=g, dtype=torch.uint8).numpy(),
        device,
    )
    y = torch.randint(0, entry["classes"], (n,), generator=g).to(device)
    opt = models.optimizer(model, 1e-3)
    loop.fit(model, opt, (x, y), loop.CROSS_ENTROPY, 1, entry["batch"], g, graph)  # warm-up: kernels, captures
    rates, t_end = [], time.perf_counter() + seconds
    while time.perf_counter() < t_end or len(rates) < 3:
        sync(device)
        t0 = time.perf_counter()
        loop.fit(model, opt, (x, y), loop.CROSS_ENTROPY, 1, entry["batch"], g, graph)
        sync(device)
        rates.append(n / (time.perf_counter() - t0))
    loop.set_precision("fp32", device)
    return statistics.median(rates)


def graph_rate(entry: dict, device: torch.device, seconds: float) -> float:
    """Images per second of ``loop.fit`` with its steps captured as CUDA graphs (``fit(..., graph=True)``, the
    path FedMD's parties take on a GPU): forward, backward and Adam replayed without Python or per-kernel
    launches, its warm-up steps and captures in the first epoch.  NaN on a CPU (no CUDA graphs)."""
    if device.type != "cuda":
        return float("nan")
    loop.set_graphs("auto", device)
    try:
        return train_rate(entry, device, "fp32", seconds, graph=True)
    finally:
        loop.set_graphs("off", device)


def _or_error(fn, *args) -> tuple[float, str]:
    """(fn(*args), '') or (NaN, the error's first line): one failing arm must not cost the rest of a device call."""
    try:
        return fn(*args), ""
    except Exception as e:  # noqa: BLE001 - reported in the table, the run goes on
        return float("nan"), f"{type(e).__name__}: {str(e).splitlines()[0][:80] if str(e) else ''}"


def training_table(entries: list[dict], preset: str, device: torch.device, seconds: float) -> list[str]:
    n = 8192 if device.type == "cuda" else 2048
    peak32 = gemm_peak(device, torch.float32, n, seconds)
    bf16 = loop.bf16_supported(device)
    peak16 = gemm_peak(device, torch.bfloat16, n, seconds) if bf16 else float("nan")
    lines = [
        f"Device: {loop.hardware(device)}; torch {torch.__version__}; preset {preset}.",
        f"GEMM peak ({n} x {n}): fp32 {peak32:,.0f} GFLOP/s, bf16 {peak16:,.0f} GFLOP/s"
        + ("" if bf16 else " (no native bf16: bf16 rows fall back to fp32)"),
        "",
        "| method | arch | input | batch | MFLOP/img (fwd+bwd) | fp32 img/s | fp32 GFLOP/s | % fp32 peak "
        "| bf16 img/s | bf16 GFLOP/s | % bf16 peak | bf16 / fp32 | CUDA graph img/s | graph / fp32 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    try:
        _rows(lines, entries, device, seconds, peak32, peak16, bf16)
    except KeyboardInterrupt:  # a time limit (timeout -s INT on the device): the rows measured so far
        lines.append(f"\n(interrupted after {len(lines) - 5} of {len(entries)} architectures)")
    return lines


def _rows(lines, entries, device, seconds, peak32, peak16, bf16) -> None:
    for entry in entries:
        f = flops_per_image(entry, device)
        r32 = train_rate(entry, device, "fp32", seconds)
        r16 = train_rate(entry, device, "bf16", seconds) if bf16 else float("nan")
        g32, g16 = r32 * f / 1e9, r16 * f / 1e9
        rg, error = _or_error(graph_rate, entry, device, seconds)
        graphed = error or ("n/a (CUDA only)" if rg != rg else f"{rg:,.0f}")
        shape = "x".join(map(str, entry["shape"]))
        lines.append(
            f"| {entry['method']} | {entry['arch']} | {shape} | {entry['batch']} | {f / 1e6:,.1f} | {r32:,.0f} | "
            f"{g32:,.1f} | {100 * g32 / peak32:.0f} | {r16:,.0f} | {g16:,.1f} | {100 * g16 / peak16:.0f} | "
            f"{r16 / r32:.2f} | {graphed} | {'' if rg != rg else f'{rg / r32:.2f}'} |"
        )
        print(lines[-1], file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------- overhead


def timed(cmd: list[str], repeat: int, **kw) -> tuple[float, str]:
    """Median wall seconds of ``cmd`` over ``repeat`` runs, and its last output."""
    times, out = [], ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
        times.append(time.perf_counter() - t0)
        if proc.returncode:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
        out = proc.stdout + proc.stderr
    return statistics.median(times), out


def until_plan(smk: str, data_root: str) -> float:
    """Seconds from starting the reduced preset's main command in a fresh folder until it prints its plan
    (its throughput measured on the way, as on a first run); the run is stopped there."""
    work = Path("/tmp/speed_report_plan")
    subprocess.run(["rm", "-rf", str(work)], check=True)
    work.mkdir()
    cmd = [smk, "-s", str(ROOT / "Snakefile"), "-d", str(work), "--cores", "2", "--configfile"]
    cmd += [str(ROOT / "presets/reduced.yaml"), "--config", f"data_root={data_root}"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for line in proc.stderr:
            if "planned training of this run" in line:
                return time.perf_counter() - t0
        raise RuntimeError("the main command ended without printing its plan")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        proc.wait()


def overhead_table(data_root: str, tiny_dir: str | None, repeat: int) -> list[str]:
    from pipelib.plan import FLOOR_IMPORTS  # the run plan's own floor (here: a GPU machine lacks jsonschema)

    py, smk = sys.executable, str(Path(sys.executable).with_name("snakemake"))
    light, _ = timed([py, "-c", FLOOR_IMPORTS["light"]], repeat)
    heavy, _ = timed([py, "-c", FLOOR_IMPORTS["training"]], repeat)
    rows = [
        ("a job that trains nothing: its imports in a fresh interpreter", light),
        ("a training job: its imports (torch) in a fresh interpreter", heavy),
    ]
    for preset in ("tiny", "reduced", "paper"):
        extra = [] if preset == "paper" else ["--configfile", str(ROOT / f"presets/{preset}.yaml")]
        work = Path(f"/tmp/speed_report_dry_{preset}")
        work.mkdir(exist_ok=True)
        cmd = [smk, "-s", str(ROOT / "Snakefile"), "-d", str(work), "-n", "--forceall", "--quiet", "rules"]
        seconds, _ = timed(cmd + [*extra, "--config", f"data_root={data_root}"], 1)
        rows.append((f"dry run of every job of the {preset} preset (`snakemake -n --forceall`)", seconds))
    seconds = until_plan(smk, data_root)
    rows.append(("until the reduced preset's `rule all` has printed its plan (fresh folder, CPU)", seconds))
    if tiny_dir:
        cmd = [smk, "-s", str(ROOT / "Snakefile"), "-d", tiny_dir, "--cores", "2"]
        seconds, out = timed(
            cmd + ["--configfile", str(ROOT / "presets/tiny.yaml"), "--config", f"data_root={data_root}"], 1
        )
        if "Nothing to be done" not in out:
            raise RuntimeError(f"{tiny_dir} is not a finished tiny run: the re-run built something")
        rows.append(("no-op re-run of the finished tiny preset (`rule all`)", seconds))
    return ["| what | seconds |", "|---|---|", *[f"| {what} | {s:.1f} |" for what, s in rows]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="reduced", help="tiny | reduced | paper (config.yaml)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: every core the process may use)")
    ap.add_argument("--seconds", type=float, default=3.0, help="timing per measurement")
    ap.add_argument("--overhead", action="store_true", help="the job and run overheads instead of training")
    ap.add_argument("--tiny-dir", help="a finished tiny run's folder, for the no-op re-run")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--write-entries", help="write the preset's architectures to this JSON file and stop")
    ap.add_argument("--entries", help="the architectures from a --write-entries file (no config read)")
    ap.add_argument("--data-root", default=os.environ.get("PIPELIB_DATA_ROOT", str(ROOT.parent / "shared/data")))
    args = ap.parse_args()
    if args.overhead:
        print("\n".join(overhead_table(args.data_root, args.tiny_dir, args.repeat)))
        return
    if args.entries:
        saved = json.loads(Path(args.entries).read_text())
        preset, entries = saved["preset"], saved["entries"]
        for e in entries:
            e["shape"] = tuple(e["shape"])
    else:
        preset, entries = args.preset, trained_architectures(args.preset)
    if args.write_entries:
        Path(args.write_entries).write_text(json.dumps({"preset": preset, "entries": entries}, indent=1))
        return
    loop.set_threads(args.threads or None)
    print("\n".join(training_table(entries, preset, loop.pick_device(args.device), args.seconds)))


if __name__ == "__main__":
    main()
