"""Regenerate golden/ from examples/: `python tests/regen_golden.py`; review `git diff golden/`.

Each example's tree is rebuilt from scratch (a target that no longer applies
leaves no stale folder): every applicable file and wrapper target, plan.json and plan.svg.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from hostc import api, plan_view
from hostc.targets import Role

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    for spec in sorted((ROOT / "examples").glob("*/node.toml")):
        out = ROOT / "golden" / spec.parent.name
        plan, _ = api.compile_file(spec)
        wrappers = [n for n, t in api.targets().items() if t.role is Role.WRAPPER]
        arts = api.emit(plan, ["all", *wrappers])
        shutil.rmtree(out, ignore_errors=True)
        api.write(arts, out)
        (out / "plan.json").write_text(plan_view.dumps(plan), encoding="utf-8")
        (out / "plan.svg").write_text(api.render_svg(plan), encoding="utf-8")
        print(out)


if __name__ == "__main__":
    main()
