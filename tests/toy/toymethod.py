"""A toy paper method, whole: its run record, its stages, its method function, its table, its page and its
design part, in one module that registers them when imported (its rule file imports it; the table's rule
is made from its registry entry).  Each party releases its labels' counts through randomized response; the
server scores how often the noisy majority is the true one.  tests/test_toy_method.py adds it to a copy of
the workflow and runs it on the tiny preset."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipelib import seeding, stages
from pipelib.design import Part
from pipelib.io import read_json, write_csv, write_json
from pipelib.job import Job
from pipelib.privacy import registry as mechanisms
from pipelib.report import registry
from pipelib.schema import result_row

SCENARIO, EPSILONS = "rknn_mnist", (1.0, 4.0)


@dataclass(frozen=True)
class ToyRun:
    """One toy run: randomized response at ``epsilon`` (folder ``toy-eps<e>``)."""

    epsilon: float
    method = "Toy"
    PATTERN = r"toy-eps[0-9]+\.[0-9]+"

    @classmethod
    def parse(cls, name: str) -> ToyRun:
        if not re.fullmatch(cls.PATTERN, name):
            raise ValueError(f"toy run {name!r}: expected toy-eps<e>")
        return cls(float(name.removeprefix("toy-eps")))

    @property
    def name(self) -> str:
        return f"toy-eps{self.epsilon!r}"


def answer(job: Job) -> None:
    """A party's job: its own labels' counts through randomized response, keyed by its release."""
    run = ToyRun.parse(job["run"])
    labels = pd.read_parquet(job.input["party"], columns=["label"])["label"].to_numpy()
    mechanism = mechanisms.parse(f"rr-eps{run.epsilon!r}")
    gen = seeding.release_rng(job.seed, job.randomness, job.rule, job.release_id)
    np.save(job.output["answers"], mechanism.release(labels[:, None], 10, gen))
    write_json(mechanism.guarantee(1).row(), job.output["guarantee"])


def serve(job: Job) -> None:
    """The server's job: the parties' noisy counts summed; the row scores the noisy majority's share."""
    run = ToyRun.parse(job["run"])
    votes = sum(np.load(p) for p in job.input["answers"])
    guarantee = mechanisms.parse(f"rr-eps{run.epsilon!r}").guarantee(1)
    row = result_row(
        guarantee,
        method=run.method,
        scenario=job.scenario,
        public_dataset="none",
        private_dataset="mnist",
        mechanism=f"rr-eps{run.epsilon!r}",
        accuracy=float(np.max(votes) / max(np.sum(votes), 1e-9)),
        n=len(job.input["answers"]),
        preset=job.preset,
        seed=job.seed,
        wall_seconds=0.0,
        device="cpu",
    )
    write_json(row, job.output["result"])


def table(results: list[str], out: str) -> None:
    """The toy's paper table: one row per run."""
    rows = [read_json(p) for p in results]
    write_csv(pd.DataFrame(rows)[["method", "epsilon", "delta", "adjacency", "accuracy"]], out)


def page(x: registry.PageInputs) -> str:
    t = pd.read_csv(x.tables["table_toy"])
    lines = [f"| {r.epsilon} | {r.accuracy:.3f} |" for r in t.itertuples()]
    return "\n".join(
        ["# Toy", "", f"Command: `{x.commands['table_toy']}`", "", "| epsilon | share |", "|---|---|", *lines]
    )


class ToyDesign(Part):
    """The toy's runs and their files."""

    methods, folders = ("toy",), ("toy",)

    def run_dir(self, run: str) -> str:
        return self.d.res(f"toy/{SCENARIO}/{run}")

    def tables(self):
        return ["table_toy"]

    def result_files(self):
        return [f"{self.run_dir(ToyRun(e).name)}/result.json" for e in EPSILONS]

    def releases(self, result):
        return [f"{Path(result).parent}/party-{i}.guarantee.json" for i in self.d.party_ids(SCENARIO)]


stages.register(
    stages.Method(
        "toy",
        ToyRun,
        (
            stages.Stage("toy_answers", "party", releases=r"/party-[0-9]+\.(npy|guarantee\.json)$"),
            stages.Stage("toy_server", "server"),
            stages.Stage("table_toy", "report"),
        ),
    )
)
registry.register_view(
    registry.View(
        "table_toy",
        "table_toy",
        "toymethod",
        lambda m, i, o, a: table(list(i.results), o.csv),
        lambda d, wc: {"results": d.toy.result_files()},
    )
)
registry.register_page("toy", registry.Page(("table_toy",), page, commands=("table_toy",)))
