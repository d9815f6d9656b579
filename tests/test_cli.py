"""The pipelib command line."""

from pathlib import Path

import pytest

from pipelib.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_nfdp_guarantee(capsys):
    assert main(["nfdp", "--n", "300", "--k", "60", "--sampling", "without_replacement"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "without_replacement,300,60,0.222313,0.2,0.0965495,True"


def test_nfdp_max_k(capsys):
    assert main(["nfdp", "--n", "300", "--epsilon", "1", "--delta", "0.2", "--sampling", "without_replacement"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split(",")[4] == "60"


def test_nfdp_bad_input(capsys):
    assert main(["nfdp", "--n", "300", "--k", "400", "--sampling", "without_replacement"]) == 2
    assert "k <= n, got k=400 > n=300" in capsys.readouterr().err


def test_check_config(capsys, tmp_path):
    assert main(["check-config", str(REPO / "config.yaml")]) == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("seed: -1\n")
    assert main(["check-config", str(REPO / "config.yaml"), str(bad)]) == 2
    assert "config key seed" in capsys.readouterr().err


def test_check_config_validates_a_preset_merged_over_config_yaml(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    assert main(["check-config", "presets/tiny.yaml"]) == 0
    assert capsys.readouterr().out.strip() == "ok: config.yaml + presets/tiny.yaml"
    bad = tmp_path / "bad.yaml"
    bad.write_text("fedmd:\n  rounds: [\n")
    assert main(["check-config", str(bad)]) == 2
    assert f"{bad}: YAML syntax error at line" in capsys.readouterr().err


def test_timings_sum_each_rules_jobs(tmp_path, capsys):
    """`pipelib timings`: per rule, the jobs, summed and longest wall time from the benchmark files."""
    bench = tmp_path / "benchmarks"
    for rel, s in [("fedmd/a/x.tsv", 30.0), ("fedmd/b/y.tsv", 90.0), ("table2.tsv", 2.0)]:
        (bench / rel).parent.mkdir(parents=True, exist_ok=True)
        (bench / rel).write_text(f"s\th:m:s\tmax_rss\n{s}\t0:00:00\t{10 * s}\n")
    assert main(["timings", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| `fedmd` | 2 | 2.0 min | 1.5 min | 900 MB |" in out and "| `table2` | 1 | 2 s | 2 s | 20 MB |" in out
    assert "| all | 3 | 2.0 min | | |" in out
    assert main(["timings", str(tmp_path / "nowhere")]) == 2


def test_timings_elapsed_is_the_union_of_job_intervals(tmp_path, capsys):
    """`pipelib timings`: the elapsed time counts overlapping jobs once and leaves out gaps; each job ends at
    its benchmark file's modification time and starts its seconds earlier."""
    import os
    from datetime import datetime, timedelta, timezone

    from pipelib.report.timings import busy_seconds

    assert busy_seconds([(0, 10), (5, 20), (30, 40), (32, 35)]) == 30.0
    assert busy_seconds([(30, 40), (0, 10)]) == 20.0 and busy_seconds([]) == 0.0
    bench = tmp_path / "benchmarks"
    t0 = 1_800_000_000
    # two jobs side by side for 600 s, then an hour's pause, then one of 300 s; another rule's job between
    for rel, s, end in [("a/1.tsv", 600.0, t0 + 600), ("a/2.tsv", 600.0, t0 + 600), ("b/3.tsv", 300.0, t0 + 4500),
                        ("c/4.tsv", 900.0, t0 + 2000)]:  # fmt: skip
        (bench / rel).parent.mkdir(parents=True, exist_ok=True)
        (bench / rel).write_text(f"s\th:m:s\tmax_rss\n{s}\t0:00:00\t1\n")
        os.utime(bench / rel, (end, end))
    assert main(["timings", str(tmp_path), "--rules", "a", "b"]) == 0
    out = capsys.readouterr().out
    assert "Elapsed: 15.0 min with at least one of these jobs running, 75.0 min from the first start" in out
    assert main(["timings", str(tmp_path)]) == 0
    assert "Elapsed: 30.0 min with at least one" in capsys.readouterr().out  # c's 900 s fill part of the pause
    # --since keeps the jobs that started then or later: b's and c's, not a's
    since = datetime.fromtimestamp(t0 + 1100).isoformat()
    assert main(["timings", str(tmp_path), "--since", since]) == 0
    out = capsys.readouterr().out
    assert "| all | 2 | 20.0 min | | |" in out and "Elapsed: 20.0 min with at least one" in out
    # a time that names its zone is read in it: the same moment written at UTC+2
    aware = datetime.fromtimestamp(t0 + 1100, tz=timezone(timedelta(hours=2))).isoformat()
    assert aware.endswith("+02:00") and main(["timings", str(tmp_path), "--since", aware]) == 0
    assert "| all | 2 | 20.0 min | | |" in capsys.readouterr().out
    assert main(["timings", str(tmp_path), "--rules", "a", "--since", since]) == 2
    assert "no benchmark files" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["timings", str(tmp_path), "--since", "yesterday"])
    assert "not an ISO 8601 date and time: 'yesterday'" in capsys.readouterr().err
