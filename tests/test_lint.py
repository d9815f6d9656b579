"""Lint and format: ruff (check and format) on the Python code, snakefmt and snakemake --lint on the workflow."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(*cmd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=REPO)


def test_ruff_check_is_clean():
    proc = run(BIN / "ruff", "check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_is_clean():
    proc = run(BIN / "ruff", "format", "--check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_snakefmt_is_clean():
    proc = run(BIN / "snakefmt", "--check", "Snakefile", "workflow/rules")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_snakemake_lint_is_clean():
    proc = run(sys.executable, "-m", "snakemake", "--lint", "--snakefile", REPO / "Snakefile")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Lints for" not in proc.stdout + proc.stderr
