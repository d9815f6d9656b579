"""The distillation stage of teacher-based methods: reverse k-NN's and PATE's (LDP-DL runs its own rules,
ldpdl.smk: its active query sampling loops over iterations, each owner answering only the queries its
plan assigns):

    teacher answers (a party's job, its own data only; PATE: one job for every teacher of a design,
    :func:`pipelib.methods.teachers.teacher_votes`, each teacher its own model only)
      -> privatize: local mechanism inside the party's job (``party_release``), or central mechanism in
         a trusted curator's job over the raw answers (``party_answers`` -> ``curate``; PATE's GNMax)
      -> aggregate (a server job that reads only privatized releases)
      -> labels for the public set (server) -> a student trained on them (server,
         :func:`pipelib.methods.student.distill_student`) -> a result row.

Teachers are looked up by the kind that starts their spec (``rknn-hog-s20-k1``, ``pate-T250-q1000``),
mechanisms by name
in :mod:`pipelib.privacy.registry`.  Every job that privatizes writes its releases' guarantees beside
its output; the aggregate carries the guarantee on to the student's result row.
"""

from __future__ import annotations

import logging

import numpy as np

from ..io import load_npy, read_json, save_npy, write_json, write_table
from ..job import Job
from ..privacy import Draw, Guarantee, read_releases, registry, release_row, write_releases
from ..seeding import release_key, release_rng
from .pate import PateTeacher
from .rknn import RknnTeacher

log = logging.getLogger(__name__)

TEACHERS = {RknnTeacher.kind: RknnTeacher, PateTeacher.kind: PateTeacher}
METHOD_NAMES = {"rknn": "reverse k-NN", "pate": "PATE"}


def teacher(spec: str):
    """The teacher a spec names (``rknn-<encoder>-s<s>-k<k>``)."""
    kind = spec.split("-", 1)[0]
    if kind not in TEACHERS:
        raise ValueError(f"unknown teacher {spec!r}; known kinds: {', '.join(TEACHERS)}")
    return TEACHERS[kind].parse(spec)


def _mechanism(spec: str, locality: str):
    mech = registry.parse(spec)
    if mech.locality != locality:
        names = [n for n, c in registry.MECHANISMS.items() if c.locality == locality]
        raise ValueError(f"{spec!r} is not a {locality} mechanism ({', '.join(names)})")
    return mech


def party_answers(*, teacher_spec: str, party_path, inputs: dict, out_npy) -> None:
    """A party's raw answers (summed votes), for the trusted curator of a central mechanism only."""
    save_npy(teacher(teacher_spec).answers(party_path, **inputs).counts(), out_npy)


def party_release(job: Job) -> None:
    """A party's locally private release: each record's answer randomized on its own, then summed (input
    ``party``: its own table, and its teacher's other inputs; outputs ``release`` and ``guarantee``).  The
    job's wildcards (scenario, teacher, lmech, party) name the release; the randomness is keyed by all of it."""
    release, seed, randomness, rule = job.release_id, job.seed, job.randomness, job.rule
    party_path, out_release = job.input["party"], job.output["release"]
    inputs = {k: v for k, v in job.input.items() if k != "party"}
    t, mech = teacher(release["teacher"]), _mechanism(release["lmech"], "local")
    votes = t.answers(party_path, **inputs)
    s, c = votes.shape
    released = mech.release(votes.items, s * c, release_rng(seed, randomness, rule, release))
    write_json(
        {
            "mechanism": mech.name,
            "epsilon": mech.epsilon,
            "k": votes.k,
            "records": int(len(votes.items)),
            "shape": [s, c],
            "released": released.tolist(),
        },
        out_release,
    )
    write_releases(
        [
            release_row(
                METHOD_NAMES[t.kind],
                release["scenario"],
                str(out_release),
                int(release["party"]),
                mech.name,
                mech.guarantee(votes.k),
                drawn=Draw(randomness, release_key(rule, release)),
                n=int(len(votes.items)),
                k=votes.k,
                seed=seed,
            )
        ],
        job.output["guarantee"],
    )


def curate(job: Job, *, delta: float | None = None) -> None:
    """The trusted curator of a central mechanism: sums the raw answers (input ``answers``) and privatizes
    the sum (GNMax at ``delta``); outputs ``release`` and ``guarantee``.  The server reads only this release.
    The job's wildcards (scenario, teacher, cmech) name the release; its other inputs are what the teacher's
    record of the release reads (PATE: ``teachers_info``, the teachers' summary)."""
    release, seed, randomness, rule = job.release_id, job.seed, job.randomness, job.rule
    answer_paths, out_release = job.input["answers"], job.output["release"]
    t = teacher(release["teacher"])
    mech = _mechanism(release["cmech"], "central").calibrated(t.k, delta)
    total = sum(load_npy(p) for p in answer_paths)
    released = mech.release(total, t.k, release_rng(seed, randomness, rule, release))
    save_npy(released.astype(np.float64), out_release)
    fields = t.release_fields(total, {k: v for k, v in job.input.items() if k != "answers"})
    write_releases(
        [
            release_row(
                METHOD_NAMES[t.kind],
                release["scenario"],
                str(out_release),
                -1,
                mech.name,
                mech.guarantee(t.k),
                drawn=Draw(randomness, release_key(rule, release)),
                k=t.k,
                seed=seed,
                **fields,
                **mech.extras(),
            )
        ],
        job.output["guarantee"],
    )


def aggregate(*, mechanism: str, release_paths: list, guarantee_paths: list, out_counts, out_summary) -> None:
    """The server: the count estimate from privatized releases only (the curator's noisy sum as it is;
    local reports summed and de-biased), and the guarantee the releases carry."""
    mech = registry.parse(mechanism)
    rows = [r for p in guarantee_paths for r in read_releases(p)]
    if mech.locality == "central":
        (path,) = release_paths
        counts = load_npy(path)
    else:
        answers = [read_json(p) for p in release_paths]
        released = sum(np.asarray(a["released"], dtype=np.float64) for a in answers)
        n = sum(a["records"] for a in answers)
        counts = mech.estimate(released, n, answers[0]["k"]).reshape(answers[0]["shape"])
    worst = max(rows, key=lambda r: (r["epsilon"], r["delta"]))
    save_npy(counts, out_counts)
    write_json(
        {
            "mechanism": mechanism,
            "records": int(sum(r["n"] for r in rows)) if mech.locality == "local" else int(rows[0]["n"]),
            "guarantee": Guarantee.from_row(worst).row(),
            "releases": len(rows),
            "randomness": worst["randomness"],
        },
        out_summary,
    )


def label(job: Job) -> None:
    """The server: labels for the public set (output ``labels``) from the aggregated counts (input
    ``counts``) and the teacher's other inputs; PATE's queried rows are a public draw keyed by the
    scenario and the job's seed."""
    t = teacher(job["teacher"])
    inputs = {k: v for k, v in job.input.items() if k != "counts"}
    table = t.labels(load_npy(job.input["counts"]), **inputs, seed=job.seed, scenario=job.scenario)
    write_table(table, job.output["labels"])
