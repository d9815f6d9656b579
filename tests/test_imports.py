"""Where imports live: a module imports what it uses at its top, so the import graph a reader sees is the
real one; the modules Snakemake reads and the jobs that do no tensor work stay free of torch by where the
code lives (docs/development.md, "Imports")."""

import ast
import re
from pathlib import Path

from pipelib.provenance import PACKAGE, imported_modules, module_closure, module_file

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "workflow" / "scripts"

# The jobs that train, embed or predict with a model: every other job must not import torch.
TENSOR_JOBS = {
    "audit_distill",
    "audit_dpsgd",
    "audit_fedmd",
    "audit_ldpdl",
    "audit_ldpfl",
    "centralized",
    "distill_student",
    "distill_votes",  # the teachers' encoder (a frozen CNN) gives the queries' features
    "download",
    "dpsgd",
    "embed_party",
    "embed_public",
    "fedmd",
    "ldpdl_encoder",
    "ldpdl_release",  # the teachers' encoder (a frozen CNN) gives the queries' features
    "ldpdl_student",
    "ldpdl_ceiling",
    "ldpdl_teachers",
    "ldpfl",
    "pretrain",
    "train_encoder",
}

# The only imports inside functions, each with its reason (module -> imported names' modules).
LAZY = {
    "cli": "subcommands import what they run: `pipelib verify` reads model files (torch), the others do not",
    "plan": "the run plan times a few training steps (torch); Snakemake reads the rest of the module",
    "privacy": "Guarantee.epsilon_at reads the Gaussian accountant, which imports this package (a cycle)",
    "privacy.audit": "scikit-learn (about 2 s to import) for the AUC, which only the auditor computes",
    "privacy.dpsgd": "dp-accounting and Opacus's accountant (1-4 s), used by one function each",
    "privacy.gaussian": "dp-accounting's analytic-Gaussian calibration (about 2 s): only FedMD-LDP's calibration and"
    " one figure call it, every reader of a Gaussian guarantee imports the module",
    "privacy.rdp": "dp-accounting's RDP accountant (about 1 s): the mechanism registry imports this module in"
    " every light distillation job, only the curator's job computes an epsilon",
}


def modules() -> dict[str, Path]:
    """Every pipelib module by its dotted name (as pipelib.provenance names them)."""
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" not in path.parts:
            parts = path.relative_to(PACKAGE).with_suffix("").parts
            names[".".join(parts[:-1] if parts[-1] == "__init__" else parts) or "__init__"] = path
    return names


TORCH_MODULES = {
    m for m, path in modules().items() if re.search(r"^\s*(import|from) torch(vision)?\b", path.read_text(), re.M)
}


def test_tensor_jobs_list_names_real_scripts():
    assert TENSOR_JOBS <= {p.stem for p in SCRIPTS.glob("*.py")}


def test_jobs_without_tensor_work_do_not_import_torch():
    heavy = {
        p.stem: sorted(set(module_closure(p)) & TORCH_MODULES)
        for p in sorted(SCRIPTS.glob("*.py"))
        if p.stem not in TENSOR_JOBS
    }
    assert {job: mods for job, mods in heavy.items() if mods} == {}
    assert "methods.fedmd" in module_closure(SCRIPTS / "fedmd.py")  # the check sees a tensor job's imports


def test_snakemake_files_do_not_import_torch():
    sources = [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
    top = set()
    for path in sources:  # the files' top-level imports (functions in them may import more, when called)
        for line in path.read_text().splitlines():
            if line.startswith(("from pipelib", "import pipelib")):
                top |= imported_modules(line)
    todo, seen = set(top), set()
    while todo:  # what importing those modules runs: their top-level imports, transitively
        name = todo.pop()
        seen.add(name)
        source = module_file(name).read_text()
        header = [
            ast.get_source_segment(source, n)
            for n in ast.parse(source).body
            if isinstance(n, (ast.Import, ast.ImportFrom))
        ]
        todo |= imported_modules("\n".join(header), PACKAGE, name) - seen
    torch_at_top = {m for m in seen if re.search(r"^(import|from) torch(vision)?\b", module_file(m).read_text(), re.M)}
    assert {"config", "design", "plan"} <= seen and not torch_at_top, sorted(torch_at_top)


def test_imports_sit_at_the_top_of_their_module():
    inside = {}
    for module, path in modules().items():
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(fn)):
                    inside.setdefault(module, set()).add(fn.name)
    assert set(inside) == set(LAZY), {m: sorted(f) for m, f in inside.items() if m not in LAZY}


def test_no_training_job_runs_the_config_or_design_modules():
    """A job's code digest covers every pipelib module it imports (params.code), so a module in a training job's
    closure re-runs that job when it changes.  The config module (its checks and scenario variants) and the
    design, planner and stage modules change with every new knob: no tensor job may import them."""
    snakemake_side = {"config", "design", "work", "stages", "plan"}
    held = {job: sorted(snakemake_side & set(module_closure(SCRIPTS / f"{job}.py"))) for job in sorted(TENSOR_JOBS)}
    assert {job: mods for job, mods in held.items() if mods} == {}
    # FedMD's and LDP-FL's settings are read through pipelib.settings, which imports no pipelib module at all
    assert imported_modules(module_file("settings").read_text(), module="settings") == set()
