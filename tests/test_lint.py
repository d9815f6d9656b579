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


def test_no_function_takes_more_than_eight_parameters():
    """Issue 30: a job's context is one Job and a method's settings one frozen dataclass, so no function
    needs a keyword argument per knob (self and cls not counted; plotting too is held to it)."""
    import ast

    wide = []
    for path in [*(REPO / "src" / "pipelib").rglob("*.py"), *(REPO / "benchmarks").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                a = node.args
                names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs] + [
                    x.arg for x in (a.vararg, a.kwarg) if x is not None
                ]
                if len([n for n in names if n not in ("self", "cls")]) > 8:
                    wide.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}")
    assert not wide, wide
