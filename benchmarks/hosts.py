"""What the benchmarks' modules share (`run.py`, `fleet.py`, `keys.py`): the repository,
the DGX example and the distinct hosts made from it.  Imported by each, importing none of
them: no module of the benchmarks imports another that imports it back."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DGX = ROOT / "examples" / "dgx-h100-inference" / "node.toml"


#: distinct hosts a P2 worker cycles through: more than hostc keeps parsed specs (64) and
#: snapshots (8) of, so no build finds its own inputs already read
DISTINCT = 100


def distinct_hosts(work: Path, shared: bool) -> list[Path]:
    """DISTINCT copies of the DGX example, each its own host (its own name, so its own
    spec text).  shared: all name one snapshot, as a fleet's hosts share their class's
    hardware snapshot (read once); else each has its own copy of it (nothing shared)."""
    spec = DGX.read_text()
    topo = DGX.parent / "topology.toml"
    paths = []
    for i in range(DISTINCT):
        snap = topo
        if not shared:
            snap = work / f"topology-{i}.toml"
            snap.write_text(topo.read_text() + f"# host {i}\n")
        path = work / f"node-{i}.toml"
        body, named = re.subn(r'(?m)^name = "[^"]*"', f'name = "dgx-{i:03d}"', spec, count=1)
        body, pointed = re.subn(r'(?m)^topology = "[^"]*"', f'topology = "{snap}"', body, count=1)
        if not (named and pointed):
            raise SystemExit(f"{DGX}: no [host] name or topology line to vary")
        path.write_text(body)
        paths.append(path)
    return paths


def hostc_command() -> list[str]:
    """The console script users run; `python -m hostc` only where it is not installed."""
    script = Path(sys.executable).parent / "hostc"
    if script.exists():
        return [str(script)]
    found = shutil.which("hostc")
    return [found] if found else [sys.executable, "-m", "hostc"]
