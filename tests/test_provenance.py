"""Code provenance: which pipelib modules a workflow script runs, and digests that change with them."""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from pipelib import provenance
from pipelib.train import checkpoint

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def package(tmp_path):
    """A small package laid out like pipelib: a imports b (relative, inside a function), c stands alone."""
    pkg = tmp_path / "pipelib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""pkg."""\n')
    (pkg / "a.py").write_text("import json\n\ndef f():\n    from .b import g\n    return g()\n")
    (pkg / "b.py").write_text('def g():\n    return open("table.json").read()\n')
    (pkg / "c.py").write_text("X = 1\n")
    (pkg / "table.json").write_text("{}")
    (pkg / "other.yaml").write_text("k: v\n")
    script = tmp_path / "script.py"
    script.write_text("import os\nfrom pipelib.a import f\n")
    return pkg, script


def test_imported_modules_reads_every_import_form(package):
    pkg, _ = package
    source = (
        "import pipelib.a\nfrom pipelib import b, not_a_module\nfrom . import c\nimport numpy\n"
        "def h():\n    from pipelib.c import X\n"
    )
    assert provenance.imported_modules(source, pkg) == {"__init__", "a", "b", "c"}
    assert provenance.imported_modules("import numpy\nfrom os import path\n", pkg) == set()


def test_module_closure_follows_imports_transitively(package):
    pkg, script = package
    assert provenance.module_closure(script, pkg) == ["__init__", "a", "b"]


def test_code_digest_changes_with_the_code_a_script_runs_and_only_that(package):
    pkg, script = package
    before = provenance.code_digest(script, pkg)
    assert provenance.code_digest(script, pkg) == before  # deterministic
    (pkg / "c.py").write_text("X = 2\n")  # not imported by the script
    (pkg / "other.yaml").write_text("k: w\n")  # no module of the closure names it
    assert provenance.code_digest(script, pkg) == before
    for path, text in [
        (pkg / "b.py", 'def g():\n    return open("table.json").read()  # edited\n'),
        (pkg / "table.json", '{"x": 1}'),
        (script, "from pipelib.a import f  # edited\n"),
    ]:
        path.write_text(text)
        after = provenance.code_digest(script, pkg)
        assert after != before, path.name
        before = after


def test_a_data_file_mentioned_only_in_a_docstring_or_comment_is_not_an_input(package):
    """A module that names other.yaml in its docstring or a comment does not read it: editing other.yaml
    (as editing the config schema once did) must not re-run every rule whose scripts import the module."""
    pkg, script = package
    (pkg / "b.py").write_text(
        '"""Reads table.json; the keys are listed in ``other.yaml``."""\n\n'
        "def g():\n"
        '    """Not other.yaml either."""\n'
        '    return open("table.json").read()  # other.yaml has the schema\n'
    )
    before = provenance.code_digest(script, pkg)
    (pkg / "other.yaml").write_text("k: edited\n")
    assert provenance.code_digest(script, pkg) == before
    (pkg / "table.json").write_text('{"edited": 1}')  # named in code: an input
    assert provenance.code_digest(script, pkg) != before


@pytest.fixture
def nested(tmp_path):
    """Subpackages: sub.x imports ..c and .y relatively; sub/__init__ imports nothing; a script imports sub.x."""
    pkg = tmp_path / "pipelib"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "c.py").write_text("X = 1\n")
    (pkg / "d.py").write_text("Y = 1\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "x.py").write_text("from .. import c\nfrom .y import f\n")
    (pkg / "sub" / "y.py").write_text("def f():\n    from ..d import Y\n    return Y\n")
    (pkg / "sub" / "data.json").write_text("{}")
    script = tmp_path / "script.py"
    script.write_text("from pipelib.sub import x\n")
    return pkg, script


def test_module_closure_follows_relative_imports_in_subpackages(nested):
    pkg, script = nested
    assert provenance.module_closure(script, pkg) == ["__init__", "c", "d", "sub", "sub.x", "sub.y"]
    before = provenance.code_digest(script, pkg)
    (pkg / "sub" / "y.py").write_text("def f():\n    from ..d import Y\n    return Y  # edited\n")
    assert provenance.code_digest(script, pkg) != before
    provenance.package_digest.cache_clear()
    whole = provenance.package_digest(pkg)
    (pkg / "sub" / "data.json").write_text('{"a": 1}')
    provenance.package_digest.cache_clear()
    assert provenance.package_digest(pkg) != whole


def test_package_digest_covers_every_file(package):
    pkg, _ = package
    before = provenance.package_digest(pkg)
    provenance.package_digest.cache_clear()
    (pkg / "c.py").write_text("X = 3\n")
    assert provenance.package_digest(pkg) != before


def test_resume_fingerprint_is_keyed_by_the_jobs_code_digest(monkeypatch):
    """A checkpoint is resumed by the same job code only: the fingerprint carries the job's params.code,
    and outside a workflow job (no code digest) every pipelib file."""
    base = checkpoint.fingerprint("a" * 16, "fedmd", {"rounds": 2}, 0)
    assert checkpoint.fingerprint("a" * 16, "fedmd", {"rounds": 2}, 0) == base
    assert checkpoint.fingerprint("b" * 16, "fedmd", {"rounds": 2}, 0) != base
    assert checkpoint.fingerprint("a" * 16, "fedmd", {"rounds": 3}, 0) != base
    outside = checkpoint.fingerprint("", "fedmd", {"rounds": 2}, 0)
    monkeypatch.setattr(provenance, "package_digest", lambda: "0" * 16)
    assert checkpoint.fingerprint("", "fedmd", {"rounds": 2}, 0) != outside
    assert checkpoint.fingerprint("a" * 16, "fedmd", {"rounds": 2}, 0) == base  # the job's digest alone counts


def test_a_killed_jobs_checkpoint_survives_an_edit_outside_the_code_it_runs(package, tmp_path):
    """Editing a module the job's script does not run keeps its code digest, so a killed job resumes (as
    Snakemake, on the same digest, does not re-run a finished one); editing one it runs discards the file."""
    from pipelib.job import Job

    pkg, script = package

    class Params(dict):  # Snakemake's params: entries by name and .get
        __getattr__ = dict.__getitem__

    def job():  # the job as its script sees it, with the rule's params.code of now
        params = Params(seed=0, code=provenance.code_digest(script, pkg))
        return Job.of(SimpleNamespace(params=params, threads=1, rule="r", wildcards={}, input={}, output={}))

    first = job()
    assert first.code == provenance.code_digest(script, pkg) != ""
    ckpt = tmp_path / "resume.pt"
    checkpoint.save_checkpoint(ckpt, checkpoint.fingerprint(first.code, "run"), round=3)
    (pkg / "c.py").write_text("X = 2\n")  # a module the script does not run
    assert checkpoint.load_checkpoint(ckpt, checkpoint.fingerprint(job().code, "run"))["round"] == 3
    (pkg / "b.py").write_text("def g():\n    return 2  # edited\n")  # run by the script through a
    assert checkpoint.load_checkpoint(ckpt, checkpoint.fingerprint(job().code, "run")) is None


def test_every_script_rule_passes_its_code_digest():
    """Each rule with a `script:` has params.code = code("<that script>"), so pipelib edits re-run it; the
    table and figure rules (one per registry entry, defined in a loop) add their entry's module."""
    rules = 0
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=\s*rule( \w+)?:)", smk.read_text()):
            script = re.search(r'script:\s*"\.\./scripts/(\w+\.py)"', block or "")
            if script:
                rules += 1
                name = re.search(r"rule( \w+)?:", block).group(1) or "(the view loop)"
                assert f'code=code("{script.group(1)}"' in block, f"rule {name} in {smk.name} lacks params.code"
    assert rules >= 20


def test_one_script_per_rule_statement():
    """No dispatcher scripts but view.py: every script belongs to exactly one rule statement.  view.py runs
    every table and figure rule (pipelib.report.registry.VIEWS), each with a code digest of its own entry's
    module (test_a_view_digest_covers_its_module_only)."""
    scripts = []
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        scripts += re.findall(r'script:\s*"\.\./scripts/(\w+\.py)"', smk.read_text())
    assert len(scripts) == len(set(scripts)), sorted(s for s in scripts if scripts.count(s) > 1)
    on_disk = {p.name for p in (REPO / "workflow" / "scripts").glob("*.py")}
    assert on_disk == set(scripts)


def test_a_view_digest_covers_its_module_only():
    """view.py imports the registry, which imports no report module: a table's digest covers the tables
    module and not the figures module, and the reverse; the module named in ``also`` counts."""
    from pipelib.provenance import code_digest, module_closure

    script = REPO / "workflow" / "scripts" / "view.py"
    assert "report.figures" not in module_closure(script) and "report.tables" not in module_closure(script)
    tables = module_closure(script, also=("pipelib.report.tables",))
    figures = module_closure(script, also=("pipelib.report.figures",))
    assert "report.tables" in tables and "report.figures" not in tables
    assert "report.figures" in figures
    assert code_digest(script, also=("pipelib.report.tables",)) != code_digest(script)
    assert code_digest(script, also=("not_pipelib",)) == code_digest(script)


def test_the_disk_cache_serves_a_later_process_the_same_digests_without_parsing(tmp_path, monkeypatch):
    """The workflow keeps the modules' parses on disk (keyed by content): a later start gets identical
    digests without parsing a module again; an edited module is parsed anew."""
    from pipelib import provenance

    script = REPO / "workflow" / "scripts" / "fedmd.py"
    monkeypatch.setattr(provenance, "_DISK", {"path": None, "entries": {}, "dirty": False})
    monkeypatch.setattr(provenance.atexit, "register", lambda f: None)
    provenance._parsed.cache_clear()
    provenance.use_disk_cache(tmp_path / "modules.json")
    first = provenance.code_digest(script)
    provenance._save_disk_cache()
    assert (tmp_path / "modules.json").is_file()
    provenance._parsed.cache_clear()  # a new process: nothing in memory
    provenance.use_disk_cache(tmp_path / "modules.json")
    monkeypatch.setattr(provenance, "code_strings", lambda source: pytest.fail("parsed again"))
    assert provenance.code_digest(script) == first
    provenance._parsed.cache_clear()


def test_a_checkpoint_keeps_the_gpus_random_state_and_restores_it_on_as_many_gpus(tmp_path, monkeypatch):
    """Dropout on a GPU draws from CUDA's generator: a run resumed on a GPU continues its stream.  (No GPU
    here: torch.cuda's state calls are stood in for.)"""
    import torch

    from pipelib.train.checkpoint import load_checkpoint, save_checkpoint

    gpu_state, restored = [torch.arange(4, dtype=torch.uint8)], []
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: gpu_state)
    save_checkpoint(tmp_path / "a.pt", "fp", round=1)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", restored.append)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert load_checkpoint(tmp_path / "a.pt", "fp")["round"] == 1 and restored == []  # other GPUs: left alone
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    load_checkpoint(tmp_path / "a.pt", "fp")
    assert len(restored) == 1 and torch.equal(restored[0][0], gpu_state[0])
