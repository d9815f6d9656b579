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
    """The README's results block is a copy of a generated page (pipelib sync-readme), never typed."""
    from pipelib.report.pages import README_BEGIN, README_END

    text = (REPO / "README.md").read_text()
    block = text.split(README_BEGIN, 1)[1].split(README_END, 1)[0].strip()
    headline = REPO / "docs" / "reproduction" / "reduced" / "headline.md"
    if headline.exists():
        assert block == headline.read_text().strip()
    else:
        assert "|" not in block  # no table without its generated source
