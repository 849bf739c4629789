"""`hostc bench` as a user runs it: `-- CMD`, `compare A B`, `--ablate` (a dry run by
default, `--yes` to run it), bad input (a message and exit 2, never a traceback, nothing
written), and an ablation interrupted by SIGINT or SIGTERM restoring every value."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from bench_sandbox import BEFORE, SPEC, TUNED, read, sandbox, standin

from conftest import run_hostc

#: `hostc ARGS` with Ctrl-C's default handler installed: a test runner may start its
#: children with SIGINT ignored, which Python would then leave ignored
INTERRUPTIBLE = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'hostc'; runpy.run_module('hostc', run_name='__main__')"
)


def no_traceback(r: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr


def bench_record(tmp_path: Path, name: str, values: list[float], unit: str = "GB/s") -> Path:
    """A record as `hostc bench --record` writes it, with the given runs' figure."""
    runs = [
        {
            "index": i + 1,
            "started": "2026-01-01T00:00:00+00:00",
            "finished": "2026-01-01T00:00:01+00:00",
            "seconds": 1.0,
            "exit_status": 0,
            "figures": {"avg_bus_bandwidth": v},
            "in_effect": {"build": "none", "cmdline": "ro quiet", "settings": []},
        }
        for i, v in enumerate(values)
    ]
    doc = {
        "format": "hostc-bench",
        "version": 1,
        "kind": "bench",
        "hostc": "0.1.0",
        "command": ["all_reduce_perf", "-b", "8", "-e", "8G"],
        "reader": "nccl",
        "figures": {"avg_bus_bandwidth": {"unit": unit, "better": "higher", "headline": True}},
        "runs": runs,
    }
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_bench_runs_the_command_three_times_and_records_what_was_in_effect(
    tmp_path: Path,
) -> None:
    _, root, _ = sandbox(tmp_path)
    out = tmp_path / "records"
    r = run_hostc("bench", "--spec", SPEC, "--root", root, "--record", out, "--", *standin(root))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("avg_bus_bandwidth: median 100 GB/s [100-100, MAD 0] over 3 runs")
    assert [line[:9] for line in r.stderr.splitlines()[:3]] == [
        "run 1/3: ",
        "run 2/3: ",
        "run 3/3: ",
    ]
    (path,) = out.iterdir()
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["version"], doc["kind"], doc["reader"]) == (
        "hostc-bench",
        1,
        "bench",
        "nccl",
    )
    assert doc["command"] == standin(root)
    run = doc["runs"][0]
    assert run["figures"] == {"avg_bus_bandwidth": 100} and run["exit_status"] == 0
    effect = run["in_effect"]
    assert effect["build"] == "none"  # no /var/lib/hostc/manifest in the sandbox
    assert effect["cmdline"] == read(root, "/proc/cmdline")
    seen = {s["setting"]: s["found"] for s in effect["settings"]}
    assert seen["sysctl vm.swappiness"] == TUNED
    assert seen["transparent_hugepage"] == "madvise"


def test_the_applied_builds_identity_is_recorded(tmp_path: Path) -> None:
    _, root, _ = sandbox(tmp_path)
    manifest = root / "var/lib/hostc/manifest"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("# hostc manifest for epyc-train: read by hostc-apply\nfile 00 /x\n")
    r = run_hostc("bench", "-n", "1", "--json", "--root", root, "--", *standin(root))
    assert r.returncode == 0, r.stderr
    build = json.loads(r.stdout)["runs"][0]["in_effect"]["build"]
    assert build["host"] == "epyc-train" and build["manifest"] == "/var/lib/hostc/manifest"
    assert len(build["sha256"]) == 64


def test_compare_gives_each_figure_its_spread_and_a_verdict(tmp_path: Path) -> None:
    a = bench_record(tmp_path, "a.json", [84.1, 84.9, 85.2])
    b = bench_record(tmp_path, "b.json", [90.1, 90.6, 89.9])
    r = run_hostc("bench", "compare", a, b)
    assert r.returncode == 0, r.stderr
    assert (
        "avg_bus_bandwidth (GB/s, higher is better): A 84.9 [84.1-85.2, MAD 0.3], "
        "B 90.1 [89.9-90.6, MAD 0.2], +6.1%: better: p = 0.05 <= 0.05 one-sided "
        "(n = 3 vs 3)"
    ) in r.stdout
    assert "n = 3 vs 3: p cannot go below 0.05 one-sided (0.1 two-sided)" in r.stdout
    same = run_hostc("bench", "compare", a, bench_record(tmp_path, "c.json", [85.0, 84.0, 85.3]))
    assert ": within noise: the runs overlap" in same.stdout
    j = run_hostc("bench", "compare", "--json", b, a)
    row = json.loads(j.stdout)["figures"][0]
    assert (row["verdict"], row["p"], row["method"]) == (
        "worse",
        0.05,
        "exact one-sided Wilcoxon-Mann-Whitney rank test",
    )


def test_a_command_named_compare_still_runs_after_the_double_dash(tmp_path: Path) -> None:
    """Only `compare` right after `bench` is the subcommand: after `--` it is the
    benchmark's name (no such program here: exit 2 naming it)."""
    r = run_hostc("bench", "--", "compare", "a", "b")
    assert r.returncode == 2 and "error: compare: cannot run it" in r.stderr
    no_traceback(r)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"STANDIN_SILENT": "1"}, "run 1 printed no figure any built-in reader knows"),
        ({"STANDIN_FAIL": "1"}, "run 1 exited with status 3"),
    ],
)
def test_a_failed_run_is_reported_with_its_last_lines_and_nothing_is_written(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    _, root, _ = sandbox(tmp_path)
    out = tmp_path / "records"
    r = run_hostc("bench", "--record", out, "--", *standin(root), env=env)
    assert r.returncode == 2
    assert message in r.stderr and "  | # " in r.stderr and "nothing recorded" in r.stderr
    no_traceback(r)
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--reader", "nccl-test", "--", "true"), "error: --reader: unknown reader 'nccl-test'"),
        (
            ("--reader", "line:step", "--better", "up", "--", "true"),
            "--better takes higher or lower",
        ),
        (("--ablate", "--", "true"), "--ablate needs --spec SPEC"),
        (("--yes", "--", "true"), "--yes, --before and --revert go with --ablate"),
        (("--", "/nonexistent/bench"), "error: /nonexistent/bench: cannot run it"),
        (("--timeout", "0.2", "--", "sleep", "5"), "run 1 ran past --timeout 0.2 s and was ended"),
        (("--root", "/nonexistent", "--", "true"), "error: /nonexistent: no such directory"),
        (
            ("--ablate", "--spec", str(SPEC), "--before", "/nonexistent", "--", "true"),
            "error: /nonexistent: no such directory or capture archive",
        ),
        (
            ("--ablate", "--spec", str(SPEC), "--revert", "vm.swappiness", "--", "true"),
            "NAME=VALUE",
        ),
    ],
)
def test_bad_input_is_a_message_and_exit_2(args: tuple[str, ...], message: str) -> None:
    r = run_hostc("bench", *args)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    no_traceback(r)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not a bench record: Expecting property name"),
        ('{"format": "other"}', 'format: not a bench record (no "format": "hostc-bench")'),
        ('{"format": "hostc-bench", "version": 9}', "version: version 9; this hostc reads 1"),
        (
            '{"format": "hostc-bench", "version": 1, "figures": {"x": {"unit": "s", '
            '"better": "lower"}}, "runs": [{"figures": {"x": "fast"}}]}',
            "runs[0].figures.x: expected a finite number",
        ),
        (
            '{"format": "hostc-bench", "version": 1, "figures": {"x": {"unit": "s", '
            '"better": "sideways"}}, "runs": []}',
            "figures.x: expected {unit, better: higher|lower}",
        ),
    ],
)
def test_a_bad_record_names_the_file_and_where(tmp_path: Path, text: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    good = bench_record(tmp_path, "good.json", [1.0, 2.0, 3.0])
    r = run_hostc("bench", "compare", good, bad)
    assert r.returncode == 2
    assert f"error: {bad}: {message}" in r.stderr, r.stderr
    no_traceback(r)


def test_compare_refuses_a_figure_neither_record_has(tmp_path: Path) -> None:
    a = bench_record(tmp_path, "a.json", [1.0, 2.0, 3.0])
    r = run_hostc("bench", "compare", "--figure", "busbw", a, a)
    assert r.returncode == 2 and "error: --figure: no figure 'busbw' in either record" in r.stderr


def test_ablate_prints_its_plan_and_by_default_runs_and_writes_nothing(tmp_path: Path) -> None:
    _, root, before = sandbox(tmp_path)
    marker = tmp_path / "ran"
    r = run_hostc(
        "bench", "--ablate", "--spec", SPEC, "--root", root, "--before", before,
        "--", *standin(root, marker),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == [
        "ablation: 3 runs with the Plan's values (the baseline), then 3 runs with each "
        "setting below reverted to its value before hostc and restored right after: 9 runs",
        "revert:",
    ]
    assert lines[2].split() == ["vm.swappiness", "10", "->", "60", "(--before", f"{before})"]
    assert "dry run: nothing was run or written; pass --yes" in r.stderr
    assert not marker.exists() and read(root, "/proc/sys/vm/swappiness") == TUNED


def test_ablate_finds_the_setting_that_earns_its_place_and_restores_all(tmp_path: Path) -> None:
    _, root, before = sandbox(tmp_path)
    plan_values = {p: read(root, p) for p in BEFORE}
    out = tmp_path / "records"
    r = run_hostc(
        "bench", "--ablate", "--yes", "--spec", SPEC, "--root", root, "--before", before,
        "--record", out, "--", *standin(root),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(
        line.startswith(
            "vm.swappiness: earns its place: with 60 instead of 10 avg_bus_bandwidth was "
            "worse (-20.0%)"
        )
        for line in lines
    ), r.stdout
    assert any(line.startswith("vm.overcommit_memory: no measured effect") for line in lines)
    assert {p: read(root, p) for p in BEFORE} == plan_values
    doc = json.loads(next(out.iterdir()).read_text())
    assert doc["kind"] == "ablate" and doc["ablation"]["restored"] is True
    assert [s["setting"] for s in doc["ablation"]["steps"]] == [
        "vm.swappiness",
        "vm.overcommit_memory",
    ]


def interrupted(
    args: list[str], marker: Path, sig: int, while_running: Callable[[], None] | None = None
) -> tuple[int, str]:
    """`hostc ARGS` signalled with `sig` once its benchmark has written `marker` (the
    stand-in's pid, then it sleeps); `while_running` is called first.  (status, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTIBLE, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), proc.communicate(timeout=30)
        if while_running is not None:
            while_running()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    with pytest.raises(ProcessLookupError):
        os.kill(int(marker.read_text()), 0)  # the benchmark did not outlive hostc
    assert "Traceback" not in err
    return proc.returncode, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_ablation_restores_every_value(tmp_path: Path, sig: int) -> None:
    """The stand-in sleeps under the reverted swappiness; the hostc process (not its
    child) gets the signal: the benchmark is ended, the value restored, exit 128+N."""
    _, root, before = sandbox(tmp_path)
    marker = tmp_path / "reverted.pid"

    def reverted() -> None:
        assert read(root, "/proc/sys/vm/swappiness") == "60"  # while it runs

    status, err = interrupted(
        ["bench", "--ablate", "--yes", "-n", "1", "--spec", str(SPEC), "--root", str(root),
         "--before", str(before), "--", *standin(root, marker)],
        marker,
        sig,
        reverted,
    )  # fmt: skip
    assert status == 128 + sig, err
    assert "restored /proc/sys/vm/swappiness = 10" in err
    assert f"interrupted (signal {int(sig)}): every value written was restored" in err
    assert read(root, "/proc/sys/vm/swappiness") == TUNED
    assert read(root, "/proc/sys/vm/overcommit_memory") == "1"


def test_a_bench_ended_by_sigterm_ends_its_benchmark_and_records_nothing(tmp_path: Path) -> None:
    """SIGTERM to hostc alone (a job scheduler's cancel): the running benchmark is ended
    too, exit 143, no record."""
    _, root, _ = sandbox(tmp_path)
    (root / "proc/sys/vm/swappiness").write_text("60\n")  # the stand-in sleeps under it
    marker, out = tmp_path / "running.pid", tmp_path / "records"
    args = ["bench", "--record", str(out), "--", *standin(root, marker)]
    status, err = interrupted(args, marker, signal.SIGTERM)
    assert status == 143, err
    assert "interrupted (signal 15): nothing recorded" in err
    assert not out.exists()
