"""Regenerate golden/ from examples/: `python tests/regen_golden.py`; review `git diff golden/`.

Each example's tree is rebuilt from scratch (a target that no longer applies
leaves no stale folder): every applicable file and wrapper target, plan.json and plan.svg.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from hostc import api, plan_view
from hostc.targets import TargetRole

ROOT = Path(__file__).resolve().parents[1]


def fleet_specs() -> list[tuple[str, Path]]:
    """The example fleet's hosts: (golden folder under golden/, spec)."""
    hosts = sorted((ROOT / "examples" / "fleet" / "hosts").glob("*.toml"))
    return [(f"fleet/{spec.stem}", spec) for spec in hosts]


def specs() -> list[tuple[str, Path]]:
    """Every example host: (golden folder under golden/, spec)."""
    single = [(s.parent.name, s) for s in sorted((ROOT / "examples").glob("*/node.toml"))]
    return single + fleet_specs()


def main() -> None:
    shutil.rmtree(ROOT / "golden" / "fleet", ignore_errors=True)  # a removed host leaves nothing
    for name, spec in specs():
        out = ROOT / "golden" / name
        plan, _ = api.compile_file(spec)
        wrappers = [n for n, t in api.targets().items() if t.role is TargetRole.WRAPPER]
        arts = api.emit(plan, ["all", *wrappers])
        shutil.rmtree(out, ignore_errors=True)
        api.write(arts, out)
        (out / "plan.json").write_text(plan_view.dumps(plan), encoding="utf-8")
        (out / "plan.svg").write_text(api.render_svg(plan), encoding="utf-8")
        print(out)


if __name__ == "__main__":
    main()
