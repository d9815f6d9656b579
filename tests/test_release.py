"""One version everywhere a reader looks: pyproject.toml, pipelib.__version__ (`pipelib --version`), the
citation file, the changelog's latest entry and the README; the files the workflow catalog expects."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

import pipelib

REPO = Path(__file__).resolve().parents[1]


def test_one_version_everywhere():
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert pipelib.__version__ == version
    assert str(yaml.safe_load((REPO / "CITATION.cff").read_text())["version"]) == version
    assert re.search(r"^## (\S+) ", (REPO / "CHANGELOG.md").read_text(), flags=re.M).group(1) == version
    assert f"version {version}" in (REPO / "README.md").read_text()
    out = subprocess.run([sys.executable, "-m", "pipelib.cli", "--version"], capture_output=True, text=True)
    assert out.stdout.strip() == f"pipelib {version}"


def test_catalog_files_are_there():
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    catalog = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())
    assert catalog["usage"]["software-stack-deployment"]["conda"] is True
    assert (REPO / "workflow" / "schemas" / "config.schema.yaml").is_file()
