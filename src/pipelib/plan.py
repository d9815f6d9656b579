"""The compute a run plans, printed before its first job: image-passes per training stage and the time
they take at this machine's measured training throughput, plus every job's start-up floor; and the reason a
run stops before its first job when, without a GPU, it would take longer than ``max_cpu_hours``.

What each job trains comes from its rule's stage (:mod:`pipelib.stages`, computed in :mod:`pipelib.work`).
Throughput is measured once per (architecture, input shape, batch, threads, hardware) with a few
training steps on random images, and remembered in ``.snakemake/pipelib/throughput.json``.  So is the
start-up floor: the seconds a fresh interpreter takes to import what a job's script imports, measured once
for a training job (torch) and once for a job that trains nothing (pandas, pyarrow; no torch).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import stages
from .config import ConfigError, nfdp_requests
from .work import Sizes, Work

CACHE = Path(".snakemake/pipelib/throughput.json")


def size_problems(config: dict, results_dir: str) -> list[str]:
    """What the data already rule out, before any job: NFDP sampling without replacement of more records
    than a party holds, and a party without records.  Party sizes are those of each scenario's partition
    (its summary.json), so the check covers the scenarios already dealt in ``results_dir``; before that,
    the pool a deal draws from (task classes, held-out test, public rows) is not known, and a sample job
    with k > n stops with the same message.  ``config`` is the merged config with ``scenarios`` as the run
    uses them (variants included)."""
    problems, sizes = [], {}
    for name in config["scenarios"]:
        party_n = _dealt_sizes(config, results_dir, name)
        if party_n:
            sizes[name] = party_n
            if min(sizes[name]) < 1:
                empty = [i for i, n in enumerate(sizes[name]) if n < 1]
                problems.append(f"scenario {name!r}: parties {empty} hold no records ({len(sizes[name])} parties)")
    for key, name, sampling, k in nfdp_requests(config):
        if sampling == "without_replacement" and name in sizes and k > min(sizes[name]):
            problems.append(
                f"config key {key}: NFDP sampling without replacement of k = {k} records, but the smallest "
                f"party of scenario {name!r} holds {min(sizes[name])} (k <= n is needed; with replacement "
                "allows any k)"
            )
    return list(dict.fromkeys(problems))


def _dealt_sizes(config: dict, results_dir: str, name: str) -> list[int] | None:
    """The party sizes of scenario ``name``'s partition in ``results_dir``, if it exists, reads, and was
    dealt with the scenario's current settings (its summary.json records them; ``test`` is overwritten
    there by the test split's statistics).  A partition dealt with other settings is about to be re-dealt,
    and a damaged summary is the pre-flight check's to name: neither says anything about the sizes."""
    summary = Path(results_dir) / "partitions" / name / "summary.json"
    try:
        recorded = json.loads(summary.read_text())
        party_n = [int(n) for n in recorded["party_n"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    settings = {k: v for k, v in config["scenarios"][name].items() if k not in ("nfdp", "test")}
    if recorded.get("seed") != config.get("seed") or any(recorded.get(k) != v for k, v in settings.items()):
        return None
    return party_n or None


def check_sizes(config: dict, results_dir: str) -> None:
    """Raise ConfigError listing :func:`size_problems`, if any (the workflow and check-config call it)."""
    problems = size_problems(config, results_dir)
    if problems:
        raise ConfigError("invalid configuration:\n  - " + "\n  - ".join(problems))


def job_work(rule: str, wc: dict, config: dict, results_dir: str) -> Work | None:
    """The image-passes of one job of a training rule (None for rules that train nothing)."""
    return stages.planned_work(rule, wc, Sizes(config, results_dir))


SMALL, LARGE = 16, 64  # the two batch sizes measured; a step's time is interpolated linearly in the batch


def measure(arch: str, shape, device, batches=(SMALL, LARGE), steps: int = 2, graph: bool = False) -> list[float]:
    """Seconds per training step of ``arch`` at each of ``batches`` on ``device`` (a warm-up step, then
    ``steps`` timed steps on random images); ``graph``: steps as FedMD's parties take them (``fit(...,
    graph=True)``: on a GPU, warm-up steps and the capture first, then replays of the same data)."""
    import torch

    from .train import loop
    from .train.models import build, optimizer

    gen = torch.Generator().manual_seed(0)
    model = loop.prepare(build(arch, shape, 16), device)
    opt = optimizer(model, 1e-3)
    if graph:  # the same data warms up, captures and is timed: the captured steps are kept per data shape
        steps = max(steps, loop.CapturedSteps.WARMUP + 1)
    out = []
    for batch in batches:
        x = torch.randint(0, 255, (batch * (steps + 1), *shape), dtype=torch.uint8, generator=gen)
        x = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).to(device)
        y = torch.randint(0, 16, (len(x),), generator=gen).to(device)
        warm, timed = ((x, y), (x, y)) if graph else ((x[:batch], y[:batch]), (x[batch:], y[batch:]))
        loop.fit(model, opt, warm, loop.CROSS_ENTROPY, 1, batch, gen, graph)  # warm-up
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        loop.fit(model, opt, timed, loop.CROSS_ENTROPY, 1, batch, gen, graph)
        if device.type == "cuda":
            torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) / (len(timed[0]) // batch))
    return out


def measure_group(arch: str, shape, device, batch: int, group: int, steps: int = 2) -> float:
    """Seconds per step of ``group`` models trained together as PATE's own teachers and LDP-FL's clients are
    (:class:`pipelib.train.local_sgd.LocalSGD`, vmap over their stacked weights), each on its own ``batch``
    random images: a warm-up step, then ``steps`` timed steps."""
    import torch

    from .train.local_sgd import Client, LocalSGD
    from .train.models import build

    gen, device = torch.Generator().manual_seed(0), torch.device(device)
    model = build(arch, shape, 16).to(device)
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    sgd = LocalSGD(model, 1e-3, 1, batch, "vmap", group)

    def run(n: int) -> float:
        clients = [
            Client(i, torch.randint(0, 255, (n, *shape), dtype=torch.uint8, generator=gen).to(device),
                   torch.randint(0, 16, (n,), generator=gen).to(device))
            for i in range(group)
        ]  # fmt: skip
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        sgd.train(start, clients, [torch.arange(n) for _ in clients])
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    run(batch)  # warm-up
    return run(batch * steps) / steps


# What a job's script imports before its first line of work: a training job, and one that trains nothing.
FLOOR_IMPORTS = {
    "training": "import pipelib.methods.fedmd, pipelib.train.supervised",
    "light": "import pipelib.methods.ldpdl, pipelib.privacy.registry, pipelib.io",
}


def measure_floor(kind: str, repeat: int = 1) -> float:
    """Seconds a fresh interpreter takes to start and import a ``kind`` job's modules (the best of ``repeat``)."""
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", FLOOR_IMPORTS[kind]], check=True, capture_output=True)
        best = min(best, time.perf_counter() - t0)
    return best


class Throughput:
    """Measured training throughput, remembered per (hardware, torch, threads, arch, shape, batch)."""

    def __init__(self, device, threads: int, cache: Path | None = CACHE, graph: bool = False):
        """``graph``: the steps of a stage that replays CUDA graphs on a GPU (``Stage.captured``)."""
        import torch

        from .train import loop

        self.device, self.threads, self.cache, self.graph = device, threads, cache, graph
        loop.set_threads(threads)
        graphed = f"|graphs {loop.set_graphs(os.environ.get('PIPELIB_CUDA_GRAPHS', 'auto'), device)}" if graph else ""
        self.prefix = f"{loop.hardware(device)}|torch {torch.__version__}|{threads}{graphed}"
        self.known = json.loads(cache.read_text()) if cache and cache.is_file() else {}

    def step_seconds(self, arch: str, shape) -> list[float]:
        key = f"{self.prefix}|{arch}|{'x'.join(map(str, shape))}|{SMALL},{LARGE}"
        if key not in self.known:
            from .train import loop

            loop.set_threads(self.threads)  # another Throughput may have set other threads since this one's start
            self.known[key] = measure(arch, shape, self.device, graph=self.graph)
            self._save()
        return self.known[key]

    def group_step_seconds(self, arch: str, shape, batch: int, group: int) -> float:
        """Seconds per step of ``group`` models stepped together (:func:`measure_group`)."""
        key = f"{self.prefix}|{arch}|{'x'.join(map(str, shape))}|{batch}|group {group}"
        if key not in self.known:
            from .train import loop

            loop.set_threads(self.threads)
            self.known[key] = measure_group(arch, shape, self.device, batch, group)
            self._save()
        return self.known[key]

    def floor(self, kind: str) -> float:
        """A ``kind`` job's start-up seconds (:func:`measure_floor`), measured once per machine."""
        key = f"{self.prefix}|floor|{kind}"
        if key not in self.known:
            self.known[key] = measure_floor(kind)
            self._save()
        return self.known[key]

    def _save(self) -> None:
        if self.cache:
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            self.cache.write_text(json.dumps(self.known, indent=0, sort_keys=True))

    def __call__(self, arch: str, shape, batch: int, group: int = 1) -> float:
        """Training images per second at ``batch``: a step's time a + c * batch from two measured batch
        sizes (beyond the larger one, images per second stay as they are there); ``group`` > 1: of that many
        models stepped together, measured at this batch (:meth:`group_step_seconds`)."""
        if group > 1:
            return group * batch / self.group_step_seconds(arch, shape, batch, group)
        t1, t2 = self.step_seconds(arch, shape)
        c = max(t2 - t1, 0.0) / (LARGE - SMALL)
        a = max(t1 - c * SMALL, 0.0)
        b = min(batch, LARGE)
        return b / (a + c * b)


@dataclass
class Plan:
    stages: dict  # rule -> [jobs, image-passes, job-seconds, estimated, device type, threads per job]
    device: str  # the default device (FedMD's): the hardware line names it
    hardware: str
    cores: int
    threads: int
    floor: tuple[int, float] = (0, 0.0)  # (jobs, their summed start-up seconds), every job of the run

    @property
    def job_seconds(self) -> float:
        return sum(s[2] for s in self.stages.values()) + self.floor[1]

    def _wall(self, on: str | None = None) -> float:
        """Job time spread over the cores, each stage at its own threads per job (an estimate: the DAG's
        order may leave cores idle); ``on``: only the stages on that device type (and the start-ups where the
        default device is that type)."""
        slots = lambda threads: max(1, self.cores // max(1, threads))  # noqa: E731
        stages = [s for s in self.stages.values() if on is None or s[4] == on]
        floor = self.floor[1] if on in (None, self.device) else 0.0
        return sum(s[2] / slots(s[5]) for s in stages) + floor / slots(self.threads)

    @property
    def wall_seconds(self) -> float:
        return self._wall()

    @property
    def cpu_wall_seconds(self) -> float:
        """The wall time of the stages that train on the CPU (what the CPU stop weighs)."""
        return self._wall("cpu")

    def table(self) -> str:
        lines = [f"  {'stage':<18}{'jobs':>6}{'image-passes':>16}{'est. job time':>16}"]
        for rule, (jobs, passes, seconds, estimated, *_) in self.stages.items():
            mark = " (party sizes estimated)" if estimated else ""
            lines.append(f"  {rule:<18}{jobs:>6}{passes:>16,.0f}{duration(seconds):>16}{mark}")
        if self.floor[0]:
            jobs, seconds = self.floor
            lines.append(f"  {'start-up (all)':<18}{jobs:>6}{'':>16}{duration(seconds):>16}")
        lines.append(
            f"  {'total':<18}{'':>6}{sum(s[1] for s in self.stages.values()):>16,.0f}"
            f"{duration(self.job_seconds):>16}; about {duration(self.wall_seconds)} on {self.cores} cores"
        )
        return "\n".join(lines)


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def make_plan(jobs: list[tuple], config: dict, results_dir: str, cores: int, throughput=None) -> Plan:
    """The plan of the training jobs among ``jobs`` ((rule, wildcards) or (rule, wildcards, threads) of every
    job that will run): each stage's work timed on its own method's device (pipelib.stages, ``settings``) at
    its jobs' threads (else its section's); ``throughput`` (one for every stage) replaces the measurement."""
    from .train import loop

    device, threads = loop.pick_device(config["fedmd"]["device"]), config["fedmd"]["threads"]
    default = throughput or Throughput(device, threads)
    measured: dict = {}

    def speed(rule: str, wc: dict, job_threads: int | None):
        section = config[stages.settings_section(rule, wc) or "fedmd"]
        dev, n = loop.pick_device(section["device"]), int(job_threads or section.get("threads", 1))
        graph = dev.type == "cuda" and stages.captured(rule) and os.environ.get("PIPELIB_CUDA_GRAPHS") != "off"
        if throughput is not None or (dev, n, graph) == (device, threads, False):
            return default, dev.type, n
        if (dev.type, n, graph) not in measured:
            measured[dev.type, n, graph] = Throughput(dev, n, graph=graph)
        return measured[dev.type, n, graph], dev.type, n

    per_rule: dict = {}
    floor = 0.0
    for rule, wc, *job_threads in jobs:
        work = job_work(rule, wc, config, results_dir)
        floor += default.floor("light" if work is None or not work.passes else "training")
        if work is None or not work.passes:
            continue
        rate, dev_type, n = speed(rule, wc, job_threads[0] if job_threads else None)
        seconds = sum(k / rate(*key) for key, k in work.passes.items())  # (arch, shape, batch[, group])
        entry = per_rule.setdefault(rule, [0, 0.0, 0.0, False, dev_type, n])
        entry[0] += 1
        entry[1] += work.total
        entry[2] += seconds
        entry[3] |= work.estimated
    if measured:  # the default's thread setting again, for whatever this process trains next
        loop.set_threads(threads)
    return Plan(per_rule, device.type, loop.hardware(device), cores, threads, (len(jobs), floor))


def cpu_too_long(plan: Plan, max_cpu_hours: float) -> bool:
    """Whether a CPU run exceeds the limit (0: no limit)."""
    return max_cpu_hours > 0 and plan.cpu_wall_seconds > max_cpu_hours * 3600


def stop_message(plan: Plan, config: dict) -> str:
    """Why a run stops before its first job, and what to run instead."""
    return (
        f"pipelib: stopping before the first job: preset {config['preset']!r} plans "
        f"{sum(s[1] for s in plan.stages.values()):,.0f} training image-passes, about "
        f"{duration(plan.wall_seconds)} on this machine ({plan.hardware}; no CUDA GPU), more than "
        f"max_cpu_hours = {config['max_cpu_hours']:g}. Nothing was started.\n"
        f"Run the CPU-sized preset instead (outputs in results/reduced/):\n"
        f"  .venv/bin/snakemake --cores {plan.cores} results/reduced/table2.csv --configfile presets/reduced.yaml\n"
        f"  .venv/bin/snakemake --cores {plan.cores} results/reduced/table_rknn.csv --configfile presets/reduced.yaml\n"
        f"or run this preset on the CPU anyway: add --config max_cpu_hours=0 (or a larger limit)."
    )
