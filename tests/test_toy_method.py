"""A paper method is one folder's worth of change (issue 54): the toy paper method of tests/toy/ (its run
record, stages, method function, table, page and design part in one module; one rule file; one script) is
added to a copy of the workflow with one include line, and its page is made by the real Snakefile on the
tiny preset, through the shared page rule, with the privacy boundary checked on its DAG."""

import filecmp
import os
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import TINY

pytestmark = pytest.mark.workflow

REPO = Path(__file__).resolve().parents[1]
TOY = Path(__file__).resolve().parent / "toy"
COPIED = ("Snakefile", "config.yaml", "workflow", "presets", "profiles")


def add_toy(wf: Path) -> None:
    """The change a paper method makes: its rule file and script, and one include line."""
    shutil.copy(TOY / "toy.smk", wf / "workflow/rules/toy.smk")
    shutil.copy(TOY / "toy_script.py", wf / "workflow/scripts/toy.py")
    snakefile = wf / "Snakefile"
    text = snakefile.read_text()
    anchor = 'include: "workflow/rules/dpsgd.smk"\n'
    snakefile.write_text(text.replace(anchor, anchor + 'include: "workflow/rules/toy.smk"\n'))


def changed_files(wf: Path) -> list[str]:
    """The files of the copy that are new or differ from the repository's."""
    out = []
    for path in sorted(p for p in wf.rglob("*") if p.is_file() and ".snakemake" not in p.parts):
        rel = path.relative_to(wf)
        if rel.parts[0] in ("results", "docs"):
            continue
        if not (REPO / rel).is_file() or not filecmp.cmp(path, REPO / rel, shallow=False):
            out.append(rel.as_posix())
    return out


@pytest.fixture
def toy_workflow(tmp_path):
    wf = tmp_path / "wf"
    wf.mkdir()
    for name in COPIED:
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(REPO / name, wf / name)
    add_toy(wf)
    yield wf
    from pipelib import stages
    from pipelib.report import registry

    if "toymethod" in sys.modules:  # the boundary check imported it here: unregister what it added
        stages.unregister("toy")
        registry.PAGES.pop("toy", None)
        registry.VIEWS.pop("table_toy", None)
        del sys.modules["toymethod"]


def run(wf: Path, *args, data_root):
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TOY), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "snakemake", *args, "--snakefile", str(wf / "Snakefile"), "--directory", str(wf)]
    cmd += ["--cores", "2", "--configfile", str(TINY), "--config", f"data_root={data_root}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return proc


def test_a_toy_paper_method_with_a_table_and_a_page_is_one_module_one_rule_file_one_script(toy_workflow, data_root):
    wf = toy_workflow
    page = "docs/reproduction/tiny/toy.md"
    # the whole change: the Snakefile's include line, the rule file, the script, and the module (outside the copy)
    touched = [*changed_files(wf), "tests/toy/toymethod.py"]
    assert touched == ["Snakefile", "workflow/rules/toy.smk", "workflow/scripts/toy.py", "tests/toy/toymethod.py"]
    assert len(touched) <= 6

    sys.path.insert(0, str(TOY))
    try:
        import toymethod  # noqa: F401  (registers the toy's stages here, as its rule file does in Snakemake)

        from pipelib import boundary
        from pipelib.config import load, scenarios

        dry = run(wf, page, "-n", "--forceall", data_root=data_root)
        jobs = boundary.parse_dry_run(dry.stdout)
        assert {j.rule for j in jobs} >= {"toy_answers", "toy_server", "table_toy", "reproduction_page"}
        assert boundary.check(jobs, scenarios(load(REPO / "config.yaml", TINY))) == []
    finally:
        sys.path.remove(str(TOY))

    run(wf, page, data_root=data_root)
    table = pd.read_csv(wf / "results/tiny/table_toy.csv")
    assert list(table["epsilon"]) == [1.0, 4.0] and (table["delta"] == 0).all()
    assert (table["adjacency"] == "any two inputs of a local randomizer").all()
    text = (wf / page).read_text()
    assert text.startswith("# Toy") and text.count("\n| ") == 3  # the header and one line per run
    assert "snakemake --cores 2 results/tiny/table_toy.csv --configfile presets/tiny.yaml" in text


def test_a_table_registered_after_the_report_rules_is_refused(toy_workflow, data_root):
    """report.smk makes a rule per registered table or figure: a rule file included after it would register a
    table with no rule, which the workflow refuses at load, naming it."""
    import subprocess

    snakefile = toy_workflow / "Snakefile"
    text = snakefile.read_text().replace('include: "workflow/rules/toy.smk"\n', "")
    report = 'include: "workflow/rules/report.smk"\n'
    snakefile.write_text(text.replace(report, report + 'include: "workflow/rules/toy.smk"\n'))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TOY), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "snakemake", "-n", "--snakefile", str(snakefile), "--directory", str(toy_workflow)]
    cmd += ["--cores", "1", "--configfile", str(TINY), "--config", f"data_root={data_root}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert proc.returncode != 0
    assert "registered after workflow/rules/report.smk was read: table_toy" in proc.stdout + proc.stderr
