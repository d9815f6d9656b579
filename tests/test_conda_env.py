"""The conda environment every rule names (workflow/envs/pipelib.yaml; `snakemake --lint` asks for a
software definition per rule).  CI has no conda and no conda channel, so this tests what CI can: its pins
against pyproject.toml's, its pip lines as requirements, and that `-e ../..`, read from the folder where
Snakemake deploys the file, reaches the checkout.  Creating the env is not tested."""

import re
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


def test_its_pip_half_is_valid_and_reaches_the_checkout_from_where_snakemake_deploys_it():
    """Snakemake writes the env as <workdir>/.snakemake/conda/<hash>.yaml and conda runs pip there: from
    the repository root (the documented working directory) `-e ../..` is this checkout, and every other pip
    line is a valid requirement.  (CI's fresh venv has no setuptools >= 68 to build the checkout offline, so
    pip itself is not run here.)"""
    from packaging.requirements import Requirement

    deployed = REPO / ".snakemake" / "conda"
    (editable,) = [p for p in pip_lines() if p.startswith("-e")]
    target = (deployed / editable.split(maxsplit=1)[1]).resolve()
    assert target == REPO
    assert tomllib.loads((target / "pyproject.toml").read_text())["project"]["name"] == "pipelib"
    for line in pip_lines():
        if not line.startswith("-e"):
            assert str(Requirement(line).specifier).startswith("==")
