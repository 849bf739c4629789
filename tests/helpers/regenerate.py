"""Every file the code generates and the repository keeps, and the one command that
rewrites them all: `python -m pytest --regen` (then review `git diff`).

- examples/<name>/topology.toml: the synthetic example machines (example_topologies);
- schemas/<which>.schema.json: `hostc schema <which>`;
- golden/<example>/: every applicable file target in full, plan.json (`hostc plan --json`),
  plan.svg (the partition picture) and wrappers.yaml, the wrapper targets' output decoded
  (wrapper_manifest).  No wrapper's raw output: it repeats the file targets' bodies (a
  binary tar, a 36k-character line of config.ign), and wrappers.yaml pins every byte of it
  already (the bodies by name, the rest by its frame);
- golden/fleet/<host>/: what each host of the example fleet gets, as its plan: in full
  (plan.json) for the first host of each class, as plan-delta.txt (plan_delta) for the
  others.  Its files are not kept again: targets read only the Plan, the single-host
  golden checks the targets, and test_golden builds the fleet once and compares its twin
  of a single-host example (FLEET_TWIN) with that example's golden byte for byte.

The staleness tests compare the same trees, so what they check and what this writes
cannot drift apart.
"""

from __future__ import annotations

import difflib
import functools
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from plan_delta import delta

from hostc import api
from hostc.api import schemas as schema
from hostc.delivery.output import write_bytes
from hostc.report import plan_view
from hostc.topology import snapshot

from conftest import ROOT
from example_topologies import EXAMPLES as TOPOLOGIES
from wrapper_manifest import is_wrapper, manifest

GOLDEN = ROOT / "golden"
#: what a test that finds a generated file stale tells the reader to run: --regen rewrites
#: every generated file before any test runs, so only the golden tests need to run after it
COMMAND = "python -m pytest --regen tests/golden"

#: relative path → (bytes, mode)
Tree = dict[str, tuple[bytes, int]]


def fleet_specs() -> list[tuple[str, Path]]:
    """The example fleet's hosts: (golden folder under golden/, spec)."""
    hosts = sorted((ROOT / "examples" / "fleet" / "hosts").glob("*.toml"))
    return [(f"fleet/{spec.stem}", spec) for spec in hosts]


def class_first(spec: Path) -> Path:
    """The first fleet host (by name) that extends what `spec` extends: its class."""
    extends = tomllib.loads(spec.read_text()).get("extends")
    return next(
        s for _, s in fleet_specs() if tomllib.loads(s.read_text()).get("extends") == extends
    )


@functools.cache
def _plan_json(spec: Path) -> str:
    plan, _ = api.compile_file(spec)
    return plan_view.dumps(plan)


def specs() -> list[tuple[str, Path]]:
    """Every example host: (golden folder under golden/, spec)."""
    single = [(s.parent.name, s) for s in sorted((ROOT / "examples").glob("*/node.toml"))]
    return single + fleet_specs()


#: every wrapper target
WRAPPERS = [n for n in api.targets() if is_wrapper(n)]


def build(spec: Path) -> tuple[api.Plan, list[api.Artifact]]:
    """`all` (every applicable file target) and every wrapper target."""
    plan, _ = api.compile_file(spec)
    return plan, api.emit(plan, ["all", *WRAPPERS])


#: (fleet host, single-host example): the host is the example under another host name
#: (examples/fleet/classes/epyc-training.toml is examples/epyc-1s-training/node.toml)
FLEET_TWIN = ("epyc-t-01", "epyc-1s-training")


def golden_tree(name: str, spec: Path) -> Tree:
    """What golden/<name>/ holds."""
    if name.startswith("fleet/"):
        first = class_first(spec)
        if first == spec:
            return {"plan.json": (_plan_json(spec).encode(), 0o644)}
        text = delta(_plan_json(first), _plan_json(spec), first.stem, spec.stem)
        return {"plan-delta.txt": (text.encode(), 0o644)}
    plan, arts = build(spec)
    tree: Tree = {
        f"{a.target}/{a.relpath}": (a.data, a.mode) for a in arts if not is_wrapper(a.target)
    }
    tree["wrappers.yaml"] = (manifest(arts).encode(), 0o644)
    tree["plan.json"] = (plan_view.dumps(plan).encode(), 0o644)
    tree["plan.svg"] = (api.render_svg(plan).encode(), 0o644)
    tree["disruption.txt"] = (disruption_golden(spec, plan, arts).encode(), 0o644)
    return tree


#: the representative change whose cost each example's golden states: a tuning tweak
#: (one sysctl) and a retired workload (the last one, where another remains), the change
#: a running fleet sees most; it touches sysctl.d, the retired unit's drop-in, the IRQ
#: placement and, on a TuneD host, the profile
REPRESENTATIVE = "vm.swappiness set to 7, and the last of two or more workloads removed"


def disruption_golden(spec: Path, plan: api.Plan, arts: list[api.Artifact]) -> str:
    """disruption.txt: what `hostc diff` says the representative change costs a host."""
    import json
    import tomllib

    from hostc.delivery import disruption

    data = tomllib.loads(spec.read_text())
    data.setdefault("sysctl", {})["vm.swappiness"] = 7
    if len(data.get("workload", [])) > 1:
        data["workload"] = data["workload"][:-1]
    new = compile_data(spec, data)
    cost = disruption.compute(
        disruption.state(plan, arts),
        disruption.state(new, api.emit(new)),
    )
    doc = json.dumps({"disruption": cost.to_json()}, indent=2)
    return f"# {REPRESENTATIVE}\n{cost.line()}\n{doc}\n"


def compile_data(spec: Path, data: dict[str, Any]) -> api.Plan:
    """The plan of `spec` as if its file held `data` (a changed copy of its TOML)."""
    topo = api.read_topology(spec.parent / data["host"]["topology"])
    plan, _ = api.compile_plan(api.spec_from_data(data, str(spec)), topo, spec_file=str(spec))
    return plan


def generated() -> dict[Path, tuple[bytes, int]]:
    """Every generated file, by absolute path; the snapshots first (golden reads them)."""
    files: dict[Path, tuple[bytes, int]] = {}
    for name, topo in TOPOLOGIES.items():
        files[ROOT / "examples" / name / "topology.toml"] = (snapshot.dumps(topo).encode(), 0o644)
    for which in schema.SCHEMAS:
        files[ROOT / "schemas" / f"{which}.schema.json"] = (schema.dumps(which).encode(), 0o644)
    from hostc.report import settings_page as docs

    files[ROOT / "docs" / "settings.md"] = (docs.render().encode(), 0o644)
    return files


def read_tree(root: Path) -> Tree:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _differs(want: tuple[bytes, int], path: Path) -> bool:
    if not path.is_file():
        return True
    executable = bool(path.stat().st_mode & 0o111)
    return path.read_bytes() != want[0] or executable != bool(want[1] & 0o111)


def _write(files: Mapping[Path, tuple[bytes, int]]) -> list[Path]:
    changed = [path for path, want in files.items() if _differs(want, path)]
    for path in changed:
        data, mode = files[path]
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(path, data, mode)  # hostc's writer: atomic, never over a device or FIFO
    return changed


def _prune(root: Path, keep: Iterable[Path]) -> list[Path]:
    """Remove what `root` holds beyond `keep` (a removed host or target leaves nothing)."""
    kept = set(keep)
    stale = [p for p in root.rglob("*") if p.is_file() and p not in kept]
    for path in stale:
        path.unlink()
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    return stale


def regenerate() -> list[Path]:
    """Rewrite every generated file that differs; the paths changed or removed."""
    changed = _write(generated())
    golden: dict[Path, tuple[bytes, int]] = {}
    for name, spec in specs():
        for rel, content in golden_tree(name, spec).items():
            golden[GOLDEN / name / rel] = content
    return changed + _write(golden) + _prune(GOLDEN, golden)


def _text_diff(rel: str, want: bytes, have: bytes) -> list[str]:
    try:
        a, b = have.decode().splitlines(), want.decode().splitlines()
    except UnicodeDecodeError:
        return [f"binary {rel} differs ({len(have)} bytes checked in, {len(want)} built)"]
    return list(difflib.unified_diff(a, b, f"a/{rel}", f"b/{rel}", lineterm="", n=2))


def tree_diff(want: Tree, have: Tree, limit: int = 120) -> str:
    """'' when equal; else a unified diff from the checked-in tree to the built one."""
    lines: list[str] = []
    for rel in sorted(want.keys() | have.keys()):
        if rel not in have:
            lines.append(f"missing: {rel}")
        elif rel not in want:
            lines.append(f"not built (stale): {rel}")
        elif want[rel][0] != have[rel][0]:
            lines += _text_diff(rel, want[rel][0], have[rel][0])
        elif bool(want[rel][1] & 0o111) != bool(have[rel][1] & 0o111):
            lines.append(f"mode: {rel} is {have[rel][1]:04o}, built {want[rel][1]:04o}")
    if len(lines) > limit:
        lines = [*lines[:limit], f"… {len(lines) - limit} more lines"]
    return "\n".join(lines)
