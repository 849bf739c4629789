"""The target contract, over every registered target (no hand-kept target list)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hostc import api
from hostc.artifact import ArtifactKind
from hostc.targets import TARGETS, TargetRole

from conftest import ROOT

EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/node.toml"))


def _plans() -> list[tuple[str, object]]:
    return [(e.name, api.compile_file(e / "node.toml")[0]) for e in EXAMPLES]


@pytest.mark.parametrize("name", list(TARGETS))
def test_every_target_is_deterministic_and_well_placed(name: str) -> None:
    target = TARGETS[name]
    for example, plan in _plans():
        if target.applies(plan) is not None:  # type: ignore[arg-type]
            continue
        a = api.emit(plan, [name])  # type: ignore[arg-type]
        b = api.emit(plan, [name])  # type: ignore[arg-type]
        assert [(x.path, x.data, x.mode) for x in a] == [(x.path, x.data, x.mode) for x in b]
        assert a, f"{name} made nothing for {example}"
        for art in a:
            assert art.target == name
            if art.kind is ArtifactKind.FILE:
                assert art.path.startswith("/") and ".." not in art.path.split("/"), art.path
                assert art.activation, f"{name}:{art.path} does not say how it takes effect"
            else:
                assert "/" not in art.path and art.path, art.path
            assert 0 <= art.mode <= 0o7777


def test_no_two_targets_write_the_same_path() -> None:
    for example, plan in _plans():
        seen: dict[str, str] = {}
        for name, t in TARGETS.items():
            if t.role is not TargetRole.FILE or t.applies(plan) is not None:  # type: ignore[arg-type]
                continue
            for art in t.emit(plan):  # type: ignore[arg-type]
                if art.kind is ArtifactKind.FILE:
                    assert art.path not in seen, f"{example}: {art.path} by {seen.get(art.path)}"
                    seen[art.path] = name


def test_all_means_every_applicable_file_target() -> None:
    for _, plan in _plans():
        got = {a.target for a in api.emit(plan, ["all"])}  # type: ignore[arg-type]
        want = {
            n
            for n, t in TARGETS.items()
            if t.role is TargetRole.FILE and t.applies(plan) is None  # type: ignore[arg-type]
        }
        assert got == want


def _modules_after(*args: str) -> set[str]:
    code = (
        "import sys, json\n"
        "from hostc.cli.main import main\n"
        f"sys.argv = ['hostc', *{list(args)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('\\nMODULES' + json.dumps(sorted(sys.modules)))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, cwd=ROOT, timeout=60, check=False
    )
    err = r.stderr.decode()
    assert "MODULES" in err, err
    return set(json.loads(err.split("MODULES", 1)[1]))


def test_cmdline_build_imports_neither_jinja2_nor_other_targets() -> None:
    spec = EXAMPLES[0] / "node.toml"
    mods = _modules_after("build", str(spec), "--target", "cmdline")
    assert "hostc.targets.cmdline" in mods  # the check can fail: the target was loaded
    assert "jinja2" not in mods
    others = {f"hostc.targets.{t.module}" for n, t in TARGETS.items() if n != "cmdline"}
    assert not (mods & others), mods & others
