"""A host sandbox for `hostc bench --ablate`: a tree where an example's Plan has fully
taken effect (/proc/sys and /sys as plain files; epyc-1s-training, a small tree), a tree
of the same host before hostc, and the stand-in benchmark (`bench_standin.py`) whose
figure depends on a live setting it reads there."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from audit_host import perfect_host, put

from hostc import api
from hostc.plan.model import Plan

from conftest import ROOT

SPEC = ROOT / "examples" / "epyc-1s-training" / "node.toml"
#: the Plan's vm.swappiness there, which the stand-in's figure depends on
TUNED = "10"
STANDIN = Path(__file__).parent / "bench_standin.py"
GOVERNOR = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"
#: what the host had before hostc, where it differs from the Plan
BEFORE = {
    "/proc/sys/vm/swappiness": "60",
    "/proc/sys/vm/overcommit_memory": "0",
    "/proc/sys/net/ipv4/tcp_rmem": "4096\t131072\t6291456",
}


def plan(spec: Path = SPEC) -> Plan:
    return api.compile_file(spec)[0]


def sandbox(tmp: Path, before: dict[str, str] | None = None) -> tuple[Plan, Path, Path]:
    """(the Plan, the tuned host's root, the same host before hostc)."""
    p = plan()
    root = perfect_host(p, tmp / "root")
    old = tmp / "before"
    shutil.copytree(root, old)
    for path, value in (BEFORE if before is None else before).items():
        put(old, path, value + "\n")
    return p, root, old


def read(root: Path, path: str) -> str:
    return (root / path.lstrip("/")).read_text().strip()


def standin(root: Path, *more: str | Path) -> list[str]:
    """The stand-in benchmark's command line, reading the sandbox under `root`."""
    return [sys.executable, str(STANDIN), str(root), TUNED, *map(str, more)]
