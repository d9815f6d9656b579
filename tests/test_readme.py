"""The README's set-up commands are the ones CI runs."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def readme_commands():
    text = (REPO / "README.md").read_text()
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]


def test_ci_runs_the_readme_install_and_test_commands():
    install, main_job, test = readme_commands()
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert install in ci and test in ci
    assert ci.index(install) < ci.index(test)
    assert main_job.startswith(".venv/bin/snakemake")


def test_readme_headline_is_the_generated_one():
    """Each of the README's results blocks is a copy of a generated page (pipelib sync-readme), never typed."""
    from pipelib.report.pages import README_BLOCKS, readme_markers

    text = (REPO / "README.md").read_text()
    for name in README_BLOCKS:
        begin, end = readme_markers(name)
        assert begin in text and end in text, name
        block = text.split(begin, 1)[1].split(end, 1)[0].strip()
        page = REPO / "docs" / "reproduction" / "reduced" / f"{name}.md"
        if page.exists():
            assert block == page.read_text().strip(), name
        else:
            assert "|" not in block, name  # no table without its generated source
