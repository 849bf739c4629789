"""`python benchmarks/run.py --quick` runs and prints every figure (a smoke run, not timed).

Marked `alone`: it runs last, once the VM lane is done (tests/conftest.py), so that its
figures are not taken beside an emulator busy on the other core."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.alone

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
