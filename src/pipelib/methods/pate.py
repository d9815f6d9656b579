"""PATE (Papernot et al., ICLR 2018) as a teacher of the distillation stage, on paper 004's teachers.

The teachers of a design (``T<n>``: n disjoint shards of the scenario's private pool; ``parties``: one per
party), each fitted on its own records by rule ``ldpdl_teachers`` (:mod:`pipelib.methods.teachers`),
vote for one class on each of ``queries`` public samples drawn with public randomness
(:func:`pipelib.methods.teachers.teacher_votes`, rule ``distill_votes``: one job for every teacher, as their
fitting is); the
trusted curator's GNMax (:class:`pipelib.privacy.registry.GNMax`, rule ``distill_curate``) adds Gaussian
noise to the summed votes and releases only each query's argmax; the server labels the queried samples
with it (:meth:`PateTeacher.labels`, rule ``distill_label``) and trains the student
(:func:`pipelib.methods.student.distill_student`).  Light (no torch, no image features): the server's
labeling and the curator import it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..io import read_json, read_rows
from ..runs import PateTeachers
from ..seeding import random_queries, rng


class PateTeacher(PateTeachers):
    """The teacher ``pate-<design>-q<queries>`` (its record: :class:`pipelib.runs.PateTeachers`)."""

    @property
    def k(self) -> int:
        """The most votes one record moves: its teacher's vote on every query."""
        return int(self.queries)

    def query_rows(self, public_n: int, seed: int, scenario: str) -> np.ndarray:
        """The queried public rows (public randomness, keyed by the scenario and the number of queries)."""
        return random_queries(np.arange(public_n), self.queries, rng(seed, "pate-queries", scenario, self.queries))

    def release_fields(self, total: np.ndarray, inputs: dict) -> dict:
        """The curator's record of a release: the pool's records (``n``) and the teachers (``owners``),
        from the teachers' summary (input ``teachers_info``)."""
        info = read_json(inputs["teachers_info"])
        return {"n": int(info["pool_records"]), "owners": int(info["teachers"])}

    def labels(self, counts: np.ndarray, public, *, seed: int, scenario: str) -> pa.Table:
        """The server: the queried public rows, each labelled with its released (noisy-argmax) class;
        ``cluster`` is the query's number."""
        rows = self.query_rows(read_rows(public), seed, scenario)
        return pa.table(
            {
                "row": rows,
                "cluster": np.arange(len(rows)),
                "label": np.asarray(counts).argmax(1).astype(np.int16),
            }
        )
