"""The conda environment every rule names (workflow/envs/pipelib.yaml; `snakemake --lint` asks for a
software definition per rule).  CI has no conda and no conda channel, so this tests what conda would do
with it that CI can do: its pins against pyproject.toml's, and its pip half, installed (dry run) from the
folder where Snakemake deploys the file, which is how `-e ../..` reaches the checkout."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
ENV = REPO / "workflow" / "envs" / "pipelib.yaml"


def pip_lines() -> list[str]:
    deps = yaml.safe_load(ENV.read_text())["dependencies"]
    (pip,) = [d["pip"] for d in deps if isinstance(d, dict)]
    return pip


def test_the_env_pins_what_the_project_pins():
    deps = yaml.safe_load(ENV.read_text())["dependencies"]
    python = next(d for d in deps if isinstance(d, str) and d.startswith("python="))
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert python == f"python={sys.version_info.major}.{sys.version_info.minor}"  # the Python CI runs
    assert project["requires-python"] == ">=3.11" and python == "python=3.11"
    pinned = {re.split("==", d)[0]: d for d in project["dependencies"] if d.startswith(("torch==", "torchvision=="))}
    assert [p for p in pip_lines() if not p.startswith("-e")] == [pinned["torch"], pinned["torchvision"]]


def test_its_pip_half_installs_the_checkout_from_where_snakemake_deploys_it(tmp_path):
    """Snakemake writes the env as <workdir>/.snakemake/conda/<hash>.yaml and conda runs pip there: from
    the repository root (the documented working directory) `-e ../..` is the checkout."""
    deployed = REPO / ".snakemake" / "conda"
    deployed.mkdir(parents=True, exist_ok=True)
    (editable,) = [p for p in pip_lines() if p.startswith("-e")]
    target = editable.split(maxsplit=1)[1]
    assert (deployed / target).resolve() == REPO
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["-e", target],
        cwd=deployed,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert f"Would install pipelib-{version}" in proc.stdout
