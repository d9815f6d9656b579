"""The benchmark scripts stay runnable (they call pipelib's API, which moves), and the speed report covers
every architecture a preset trains."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_benchmark_scripts_start(script):
    proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("preset", ["tiny", "reduced", "paper"])
def test_the_speed_report_measures_every_trained_architecture(preset):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import speed_report
    finally:
        sys.path.pop(0)
    from pipelib import config as cfgmod

    files = [ROOT / "config.yaml"] + ([] if preset == "paper" else [ROOT / f"presets/{preset}.yaml"])
    config = cfgmod.validate(cfgmod.load(*files))
    listed = {e["arch"] for e in speed_report.trained_architectures(preset)}
    wanted = set(config["fedmd"]["architectures"]) | {config["rknn"]["student"]["arch"]}
    active = cfgmod.scenarios(config)
    wanted |= {config["ldpdl"]["student"]["arch"]}
    wanted |= {d["arch"] for d in config["ldpfl"]["datasets"].values() if d["scenario"] in active}
    wanted |= {e["arch"] for e in config["rknn"]["encoders"].values() if e.get("kind") == "simclr"}
    assert wanted <= listed
