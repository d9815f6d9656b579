"""A failed run loses nothing (issue 31): the cheap integrity checks, the pre-flight check, the run record
and its rebuild commands, errors of the operating system that name the path, and size checks of a config
against the data.  The workflow-level reproductions are in tests/test_safe_runs.py."""

import errno
import json
import os
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch

from pipelib import integrity, io, plan
from pipelib.config import load, nfdp_requests, scenarios, validate

REPO = Path(__file__).resolve().parents[1]


def files(tmp_path) -> dict[str, Path]:
    """One good file of every kind the pre-flight check reads."""
    out = {
        "parquet": tmp_path / "t.parquet",
        "json": tmp_path / "r.json",
        "csv": tmp_path / "c.csv",
        "npy": tmp_path / "a.npy",
        "pt": tmp_path / "m.pt",
    }
    io.write_table(pa.table({"x": list(range(500)), "y": [float(i) for i in range(500)]}), out["parquet"])
    io.write_json({"accuracy": 0.5}, out["json"])
    pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).to_csv(out["csv"], index=False)
    np.save(out["npy"], np.arange(1000, dtype=np.float32))
    torch.save({"w": torch.zeros(100)}, out["pt"])
    return out


def test_quick_check_passes_good_files_and_names_every_truncation(tmp_path):
    good = files(tmp_path)
    assert {k: integrity.quick_check(p) for k, p in good.items()} == dict.fromkeys(good)
    for kind, path in good.items():
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        assert integrity.quick_check(path), kind
        path.write_bytes(data)
    good["json"].write_text('{"x')  # the reproduction
    assert "JSONDecodeError" in integrity.quick_check(good["json"])


def test_a_result_json_that_parses_but_is_no_result_row_is_named_before_and_where_it_is_read(tmp_path):
    """``{}`` in a result.json parses: the pre-flight check still stops on it (naming the missing keys), and
    a table job that reads it names the file and the keys instead of failing with KeyError: 'epsilon'."""
    from pipelib.report.tables import result_rows
    from pipelib.schema import REQUIRED

    path = tmp_path / "fedmd/cifar_iid/softmax/np/result.json"
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    assert integrity.quick_check(path) == f"not a result row: it lacks {', '.join(REQUIRED)}"
    assert integrity.preflight([path], tmp_path / "checked.json") == [(str(path), integrity.quick_check(path))]
    with pytest.raises(ValueError, match=rf"{path} is not a result row: it lacks method, scenario"):
        result_rows([path], 1e-5)
    path.write_text(json.dumps(dict.fromkeys(REQUIRED, 0)))
    assert integrity.quick_check(path) is None
    (tmp_path / "other.json").write_text("{}")  # only result.json files are result rows
    assert integrity.quick_check(tmp_path / "other.json") is None


def test_quick_check_compares_a_parquet_footer_with_the_rows_written(tmp_path):
    path = tmp_path / "t.parquet"
    io.write_table(pa.table({"x": [1, 2, 3]}), path)
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata
    pq.write_table(pa.table({"x": [1, 2]}).replace_schema_metadata(meta), path)  # a table rewritten short
    assert integrity.quick_check(path) == "holds 2 rows, written with 3"


def test_preflight_reports_damaged_files_and_skips_unchanged_good_ones(tmp_path, monkeypatch):
    good = files(tmp_path)
    checked = tmp_path / "checked.json"
    assert integrity.preflight([str(p) for p in good.values()] + [str(tmp_path / "absent.json")], checked) == []
    assert set(json.loads(checked.read_text())) == {str(p) for p in good.values()}
    calls = []
    monkeypatch.setattr(integrity, "quick_check", lambda p: calls.append(p))
    integrity.preflight([str(p) for p in good.values()], checked)
    assert calls == []  # unchanged (size, mtime): not read again
    monkeypatch.undo()
    good["json"].write_text('{"x')
    damaged = integrity.preflight([str(p) for p in good.values()], checked)
    assert [p for p, _ in damaged] == [str(good["json"])]
    assert str(good["json"]) not in json.loads(checked.read_text())


def test_unproduced_inputs_are_the_existing_files_the_run_reads_as_they_are():
    jobs = [
        (["results/x/a.parquet", "results/x/b.json"], ["results/x/c.json"]),
        (["results/x/c.json", "/data/raw.gz", "results/y/d.json"], ["results/x/t.csv"]),
    ]
    assert integrity.unproduced_inputs(jobs, "results/x") == {"results/x/a.parquet", "results/x/b.json"}


def record(tmp_path):
    return integrity.run_record(
        REPO / "Snakefile",
        tmp_path,
        "results/tiny",
        [REPO / "presets/tiny.yaml", tmp_path / "mine.yaml"],
        ["data_root=/data/my root"],
        [tmp_path / "results/tiny/table2.csv"],
    )


def test_a_run_record_keeps_paths_inside_the_working_directory_relative(tmp_path):
    r = record(tmp_path)
    assert r["results_dir"] == "results/tiny" and r["expected"] == ["results/tiny/table2.csv"]
    assert r["configfiles"] == [str(REPO / "presets/tiny.yaml"), "mine.yaml"]
    integrity.write_run_record(tmp_path / "results/tiny", r)
    assert integrity.read_run_record(tmp_path / "results/tiny") == r
    assert integrity.read_run_record(tmp_path) is None
    moved = tmp_path / "elsewhere" / "checkout"
    assert integrity.workdir_of(moved / "results/tiny", r) == moved.resolve()


def test_rebuild_commands_put_the_target_first_and_carry_the_runs_config(tmp_path, monkeypatch):
    r = record(tmp_path)
    monkeypatch.chdir(tmp_path)
    cmd = shlex.split(integrity.rebuild_command(Path("results/tiny/table2.csv"), r, tmp_path))
    assert cmd[1:5] == ["results/tiny/table2.csv", "--cores", "2", "--force"]
    assert cmd[cmd.index("--snakefile") + 1] == str(REPO / "Snakefile") and "--directory" not in cmd
    assert cmd[-4:] == ["--configfile", "mine.yaml", "--config", "data_root=/data/my root"]
    monkeypatch.chdir(REPO)  # from elsewhere: --directory, and every path absolute
    cmd = shlex.split(integrity.rebuild_command(tmp_path / "results/tiny/table2.csv", r, tmp_path, force=False))
    assert cmd[1] == "results/tiny/table2.csv" and "--force" not in cmd
    assert cmd[cmd.index("--directory") + 1] == str(tmp_path.resolve())
    assert str(tmp_path.resolve() / "mine.yaml") in cmd
    # the repository's own layout, without a record
    assert integrity.rebuild_command(Path("results/reduced/table2.csv"), None) == (
        ".venv/bin/snakemake results/reduced/table2.csv --cores 2 --force --configfile presets/reduced.yaml"
    )
    monkeypatch.chdir(REPO)  # verify passes resolved paths: the preset is still found, a space still quoted
    assert integrity.rebuild_command([REPO / "results/reduced/table2.csv", REPO / "results/reduced/a b.csv"], None) == (
        ".venv/bin/snakemake results/reduced/table2.csv 'results/reduced/a b.csv' --cores 2 --force "
        "--configfile presets/reduced.yaml"
    )
    # several files: one call, every target before the options
    monkeypatch.chdir(tmp_path)
    both = [Path("results/tiny/table2.csv"), tmp_path / "results/tiny/table3.csv"]
    cmd = shlex.split(integrity.rebuild_command(both, r, tmp_path))
    assert cmd[1:6] == ["results/tiny/table2.csv", "results/tiny/table3.csv", "--cores", "2", "--force"]


def shutil_usage(free: int):
    from collections import namedtuple

    return namedtuple("usage", "total used free")(1 << 30, (1 << 30) - free, free)


def test_a_write_that_the_operating_system_refuses_names_the_output(tmp_path, monkeypatch):
    target = tmp_path / "out" / "result.json"
    with pytest.raises(io.WriteError, match=f"cannot write {target}: No space left on device") as err:
        with io.atomic_path(target):  # a writer's own error, without the path (as a full disk gives)
            raise OSError(errno.ENOSPC, "No space left on device")
    assert err.value.errno == errno.ENOSPC and list(target.parent.iterdir()) == []  # no temporary left
    # numpy's tofile on a full disk raises an OSError without an errno (measured on a 16 KiB tmpfs)
    with pytest.raises(io.WriteError, match=f"cannot write {target}: 100000 requested and 2032 written"):
        with io.atomic_path(target):
            raise OSError("100000 requested and 2032 written")
    assert list(target.parent.iterdir()) == []

    def refuse(src, dst):
        raise PermissionError(errno.EACCES, "Permission denied")

    # torch.save on a full disk raises "RuntimeError: [enforce fail at inline_container.cc:672] unexpected pos"
    # (measured on a 64 KiB tmpfs: now "cannot write <path>: No space left on device", errno 28)
    torch_error = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0")
    with pytest.raises(RuntimeError, match="unexpected pos"):  # a disk with room: the writer's own error stands
        with io.atomic_path(target):
            raise torch_error
    monkeypatch.setattr(io.shutil, "disk_usage", lambda _: shutil_usage(0))
    with pytest.raises(io.WriteError, match=f"cannot write {target}: No space left on device") as err:
        with io.atomic_path(target):
            raise torch_error
    assert err.value.errno == errno.ENOSPC and list(target.parent.iterdir()) == []
    monkeypatch.undo()

    monkeypatch.setattr(io.os, "replace", refuse)  # a folder the job may not write into
    with pytest.raises(io.WriteError, match=f"cannot write {target}: Permission denied"):
        io.write_json({"a": 1}, target)
    assert list(target.parent.iterdir()) == []


def test_size_problems_name_k_above_a_partys_records(tmp_path):
    config = validate(load(REPO / "config.yaml", REPO / "presets/tiny.yaml"))
    config["scenarios"]["femnist_iid"]["nfdp"] = {"sampling": ["without_replacement"], "k": [16, 500]}
    runs = {**config, "scenarios": scenarios(config)}
    assert plan.size_problems(runs, tmp_path) == []  # no partition yet: the data cannot tell
    summary = tmp_path / "partitions/femnist_iid/summary.json"
    summary.parent.mkdir(parents=True)
    settings = {k: v for k, v in runs["scenarios"]["femnist_iid"].items() if k not in ("nfdp", "test")}
    dealt = {**settings, "seed": config["seed"], "test": {"n": 100}, "party_n": [420, 410, 405]}
    summary.write_text(json.dumps(dealt))  # as the partition job writes it
    assert plan.size_problems(runs, tmp_path) == [
        "config key scenarios.femnist_iid.nfdp: NFDP sampling without replacement of k = 500 records, but the "
        "smallest party of scenario 'femnist_iid' holds 405 (k <= n is needed; with replacement allows any k)"
    ]
    # a partition dealt with other settings is about to be re-dealt: its sizes say nothing (no refusal)
    summary.write_text(json.dumps({**dealt, "parties": settings["parties"] + 1}))
    assert plan.size_problems(runs, tmp_path) == []
    # a damaged summary is left to the pre-flight check (which names it): no crash at config load
    for damaged in ('{"party_n": [4', "{}", '{"party_n": []}'):
        summary.write_text(damaged)
        assert plan.size_problems(runs, tmp_path) == []
    assert ("scenarios.femnist_iid.nfdp", "femnist_iid", "without_replacement", 500) in nfdp_requests(config)


def test_the_plan_counts_the_budget_ablations_rounds_queries_and_epochs(tmp_path):
    """plan.job_work for the ablation's jobs takes R, |X_p| and the pre-training epochs from the path."""
    config = validate(load(REPO / "config.yaml", REPO / "presets/tiny.yaml"))
    runs = {**config, "scenarios": scenarios(config)}
    wc = {"scenario": "femnist_iid", "answer": "softmax", "run": "np"}
    base = plan.job_work("fedmd", wc, runs, tmp_path)
    f = config["fedmd"]
    same = plan.job_work("fedmd_budget", {**wc, "rounds": f["rounds"], "q": f["public_per_round"]}, runs, tmp_path)
    assert same.passes == base.passes
    more = plan.job_work(
        "fedmd_budget", {**wc, "rounds": 2 * f["rounds"], "q": 3 * f["public_per_round"]}, runs, tmp_path
    )
    digest = next(key for key in base.passes if key[2] == f["digest_batch"])
    assert more.passes[digest] == pytest.approx(6 * base.passes[digest])
    pre = {"public": "mnist", "arch": f["architectures"][0], "n_classes": 16}
    one = plan.job_work("pretrain", pre, runs, tmp_path).total
    assert plan.job_work("pretrain_epochs", {**pre, "epochs": 3 * f["pretrain"]["epochs"]}, runs, tmp_path).total == (
        pytest.approx(3 * one)
    )
    assert ("paper002.budget.k", "femnist_iid", "with_replacement", 16) in nfdp_requests(config)


def test_verify_gives_one_command_for_every_damaged_output_and_removes_a_damaged_checkpoint(tmp_path, monkeypatch):
    """pipelib verify: each problem's own command, and with several files one `all at once:` call; a round
    checkpoint (a job's parameter, built by no rule) is to be removed, never a Snakemake target."""
    from pipelib import verify

    root = tmp_path / "results/tiny"
    for folder in ("data", "partitions", "fedmd/x/np", "tables"):
        (root / folder).mkdir(parents=True)
    (root / "fedmd/x/np/result.json").write_text('{"x')
    (root / "fedmd/x/np/resume.pt").write_bytes(b"not a checkpoint")
    (root / "tables/t.csv").write_bytes(b'a,b\n"1,2\n')
    monkeypatch.chdir(tmp_path)
    text, status = verify.report("results/tiny")
    assert status == 1, text
    assert "    remove: rm results/tiny/fedmd/x/np/resume.pt" in text
    together = [line for line in text.splitlines() if line.startswith("  all at once: ")]
    assert len(together) == 1 and "resume.pt" not in together[0]
    cmd = shlex.split(together[0].split(": ", 1)[1])
    assert cmd[1:3] == ["results/tiny/fedmd/x/np/result.json", "results/tiny/tables/t.csv"] and "--force" in cmd


def test_one_run_per_results_folder_whatever_ends_the_holder(tmp_path):
    """A second process cannot take a held folder's lock and is told who holds it; the holder's death, even
    by kill -9, frees it (the kernel drops an flock with its process), and the same process may ask again."""
    import signal

    from helpers import hold_folder

    from pipelib import runlock

    first = hold_folder(tmp_path, "first run")
    try:
        with pytest.raises(runlock.FolderInUse, match=rf"another run is using the results folder .*pid {first.pid} on"):
            runlock.hold(tmp_path)
        assert "first run" in (tmp_path / runlock.LOCK_NAME).read_text()  # the refused run wrote nothing
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    path = runlock.hold(tmp_path)  # stale-safe: nothing to clean up after a killed holder
    assert runlock.hold(tmp_path) == path and f"pid {os.getpid()}" in path.read_text()
    runlock.release(tmp_path)


def test_outputs_under_a_results_folder_record_their_content_hash(tmp_path):
    """A file written by pipelib's writers under a results folder (one with a run record) records its
    SHA-256; damage that keeps the file readable (zeroed bytes inside a Parquet page, a same-size rewrite
    with its mtime restored) is then named by the pre-flight check: at once when the stamp changed, and
    under a forced re-run (rehash) when it did not.  Parquet pages carry checksums that the reader verifies."""
    res = tmp_path / "results"
    integrity.write_run_record(res, {"outputs": []})
    path = res / "partitions/s/test.parquet"
    io.write_table(pa.table({"x": list(range(50_000))}), path)
    assert io.recorded_hash(path) == io.content_hash(path)
    assert io.hash_file(path) == res / ".pipelib/hashes/partitions/s/test.parquet.sha256"
    checked = tmp_path / "checked.json"
    assert integrity.preflight([path], checked) == []
    stat, data = path.stat(), bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 4096] = bytes(4096)
    with path.open("r+b") as f:  # in place: same inode and size, and the old mtime put back
        f.write(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert integrity.quick_check(path) is None  # the footer is intact
    assert integrity.preflight([path], checked) == []  # same stamp: not read again...
    ((named, why),) = integrity.preflight([path], checked, rehash=True)  # ...but a forced re-run re-hashes
    assert named == str(path) and why.startswith("its content differs from what its job wrote")
    with pytest.raises(io.DamagedFileError, match=rf"cannot read {path}: .*CRC checksum verification failed"):
        io.read_table(path)
    elsewhere = tmp_path / "scratch/t.parquet"  # outside a results folder: nothing recorded
    io.write_table(pa.table({"x": [1]}), elsewhere)
    assert io.recorded_hash(elsewhere) is None and integrity.preflight([elsewhere], checked) == []


def test_a_torch_file_damaged_inside_a_tensor_is_named_not_loaded(tmp_path):
    """torch.load checks no CRC: 256 bytes of 0xFF inside a tensor loaded as wrong weights.  The zip CRC
    of every member is checked first, by the loader and by the pre-flight check."""
    import zipfile

    from pipelib.train.checkpoint import load_torch

    path = tmp_path / "model.pt"
    torch.save({"w": torch.arange(1000.0)}, path)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        member = next(i for i in z.infolist() if "/data/" in i.filename)
    at = member.header_offset
    start = (
        at + 30 + int.from_bytes(data[at + 26 : at + 28], "little") + int.from_bytes(data[at + 28 : at + 30], "little")
    )
    data[start : start + 256] = b"\xff" * 256
    path.write_bytes(data)
    assert integrity.quick_check(path) == f"member {member.filename} fails its CRC check"
    with pytest.raises(io.DamagedFileError, match=rf"cannot read {path}: ValueError: member .* fails its CRC check"):
        load_torch(path)
