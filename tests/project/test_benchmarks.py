"""`python benchmarks/run.py --quick` runs and prints every figure (a smoke run, not timed:
it asserts no figure, so it runs beside the VMs and the other tests like any test; run
last and alone, it cost CI ~50 s with one core idle and made nothing it checks truer)."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

#: rows with a goal that --quick measures (pass or FAIL printed), then the rows it prints
#: without a verdict: references, and the costly figures only a full run takes
GOALS = (
    "P1 ",
    "P1d cold build",
    "P1d the same, CPU",
    "P1d start-up apparatus",
    "P3a ",
    "P3b ",
    "P4 ",
    "Fleet 200 hosts",
    "floor ",
    "F4 ",
    "H1 ",
    "H2 ",
    "H3 ",
)
FIGURES = (
    *GOALS,
    "P1d the same, instructions",
    "P1d generated-code cache earns, wall",
    "P1d generated-code cache earns, instructions",
    "P2 ",
    "P2' ",
    "Fleet 10,000 hosts",
    "peer Ansible",
    "peer TuneD",
    "F2 ",
    "F3 ",
    "F5 ",
    "F6 ",
    *(f"K{n} " for n in range(8)),
)


def test_benchmark_quick_prints_every_row() -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    # 1 only says a goal was missed on this machine; timing is not what this test checks
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stdout.splitlines()
    for figure in FIGURES:
        row = [line for line in lines if line.startswith(figure)]
        assert len(row) == 1, (figure, r.stdout, r.stderr[-3000:])
        assert row[0].split()[-1] != "", row
    for line in lines:
        if line.startswith(GOALS):
            assert " pass " in line or " FAIL " in line, line
