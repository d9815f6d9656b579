"""The context of one workflow job, built once from what Snakemake hands its script: the rule and its
wildcards (the release the job makes: a mechanism's randomness is keyed by them), the seed, the preset, the
device, training precision and CPU threads, where a mechanism's randomness comes from, the file the job
resumes from and the digest of the code it runs, and its input and output files by name.  A mechanism's
randomness is keyed by :attr:`Job.release_id`: the wildcards plus a digest of the preset and the settings the
rule passes (:func:`settings_digest`), so a reduced and a paper-preset release of the same name never share
a noise draw.  Method entry
points take one :class:`Job` (and their settings) instead of a keyword argument for each of these; tests
build one directly."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

# Params that say where or how a job runs, not what it releases: left out of the settings digest (so a GPU
# and a CPU run of one release draw the same noise, and a code change does not re-draw it).
NOT_SETTINGS = frozenset({"code", "device", "precision", "checkpoint", "seed", "randomness"})


def _plain(value):
    """A Snakemake named-list entry as a plain value: a list stays a list, a path a string."""
    return [str(v) for v in value] if isinstance(value, list) else str(value)


def settings_digest(preset: str, params: dict) -> str:
    """16 hex digits of SHA-256 over the preset's name and the job's settings (``params`` less
    :data:`NOT_SETTINGS`): part of every release key."""
    kept = {k: v for k, v in params.items() if k not in NOT_SETTINGS}
    text = json.dumps({"preset": preset, "settings": kept}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Job:
    """One job's context (see the module docstring).  ``release``: the job's wildcards; ``input`` and
    ``output``: the rule's named files (a list where the rule names several)."""

    seed: int = 0
    preset: str = ""
    device: str = "auto"
    precision: str = "fp32"
    threads: int = 1
    randomness: str = "seeded"
    rule: str = ""
    release: dict = field(default_factory=dict)
    checkpoint: str | None = None
    code: str = ""
    input: dict = field(default_factory=dict)
    output: dict = field(default_factory=dict)
    settings: str = ""

    @classmethod
    def of(cls, smk) -> Job:
        """The context of the job a script runs in (``smk``: the ``snakemake`` object Snakemake injects);
        settings the rule does not pass keep their defaults."""
        p = smk.params
        preset = getattr(smk, "config", {}).get("preset", "")
        return cls(
            seed=int(p.seed),
            preset=p.get("preset", preset),
            device=p.get("device", "auto"),
            precision=p.get("precision", "fp32"),
            threads=int(smk.threads),
            randomness=p.get("randomness", "seeded"),
            rule=smk.rule,
            release=dict(smk.wildcards.items()),
            checkpoint=p.get("checkpoint"),
            code=p.get("code", ""),
            input={k: _plain(v) for k, v in smk.input.items()},
            output={k: _plain(v) for k, v in smk.output.items()},
            settings=settings_digest(preset, dict(p.items())),
        )

    def __getitem__(self, wildcard: str) -> Any:
        """A wildcard of the job's release: ``job["scenario"]``."""
        return self.release[wildcard]

    @property
    def release_id(self) -> dict:
        """What keys the job's mechanism randomness: its wildcards and, when known, its settings digest."""
        return {**self.release, "settings": self.settings} if self.settings else dict(self.release)

    @property
    def scenario(self) -> str:
        return self.release["scenario"]
