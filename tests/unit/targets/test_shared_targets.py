"""Whole file targets a fleet's hosts of one class share (`Target.shared`, the
registry's `_shared`, `hostc.targets._anonymous`): emitted once per anonymous Plan,
re-headed per host.

The proof that sharing is safe for each declared target: for every example host, under
its own name and under probe names, the shared path's artifacts equal a direct emit's,
field for field and byte for byte, without falling back; a probe name occurs in them
only in their header line; and no declared target's code or template reads the host's
name or provenance.  A target that named its host elsewhere, or a cache that gave a
host another's header, fails here."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import attrs
import pytest

from hostc import api
from hostc import targets as registry
from hostc.artifact import Artifact, ArtifactKind
from hostc.plan.model import Plan
from hostc.targets import TARGETS, TargetRole, _anonymous, build, host_files
from hostc.targets._header import Header
from hostc.targets._render import header

from conftest import ROOT

SPECS = sorted((ROOT / "examples").glob("*/node.toml")) + sorted(
    (ROOT / "examples" / "fleet" / "hosts").glob("*.toml")
)
SHARED = tuple(n for n, t in TARGETS.items() if t.shared)
#: host names that stress the header's length and characters
PROBES = ("q", "h" + "0123456789" * 6 + "ab", "node-7.rack_3.example", "Zz_9")
TOKEN = "probezq7token"
TEMPLATES = Path(sys.modules["hostc.targets"].__file__ or "").parent / "templates"


def spec_id(spec: Path) -> str:
    return spec.parent.name if spec.name == "node.toml" else spec.stem


def named(plan: Plan, name: str) -> Plan:
    return attrs.evolve(plan, host=attrs.evolve(plan.host, name=name))


@pytest.fixture(scope="module", params=SPECS, ids=spec_id)
def plan(request: pytest.FixtureRequest) -> Plan:
    return api.compile_file(request.param)[0]


def test_the_declared_targets() -> None:
    """Those whose files name the host elsewhere (TuneD's summary=, the wrappers and
    lifecycle's scripts) are not declared; the big emitters are."""
    assert "tuned" not in SHARED and {"systemd", "sysctl", "kubelet"} <= set(SHARED)
    assert all(TARGETS[n].role is TargetRole.FILE for n in SHARED)


@pytest.mark.parametrize("probe", [None, *PROBES])
def test_shared_artifacts_equal_a_direct_emit(plan: Plan, probe: str | None) -> None:
    host = plan if probe is None else named(plan, probe)
    cached = registry._emitted(_anonymous.anonymous(host), SHARED)
    got = registry._shared(host, SHARED)
    for name, (why, _, splices) in zip(SHARED, cached, strict=True):
        assert why == TARGETS[name].applies(host), name
        if why is None:
            assert splices is not None, f"{name}: re-heading fell back to a direct emit"
            assert got[name] == (None, TARGETS[name].emit(host)), name  # every field, byte
    assert build(host, ["all"]) == [
        a
        for n, t in TARGETS.items()
        if t.role is TargetRole.FILE and t.applies(host) is None
        for a in TARGETS[n].emit(host)
    ]


def test_a_wrapper_gets_the_files_a_direct_emit_gives(plan: Plan) -> None:
    host = named(plan, PROBES[2])
    direct = [
        a
        for t in TARGETS.values()
        if t.role is TargetRole.FILE and t.applies(host) is None
        for a in t.emit(host)
        if a.kind is ArtifactKind.FILE
    ]
    assert host_files(host)[: len(direct)] == direct


def test_the_host_name_is_only_in_the_header_line(plan: Plan) -> None:
    host = named(plan, TOKEN)
    line = header(host).line
    for name in SHARED:
        if TARGETS[name].applies(host) is not None:
            continue
        for a in TARGETS[name].emit(host):
            text = a.data.decode()
            if TOKEN not in text:
                continue
            lines = text.split("\n")
            at = 1 if lines[0] == "#!/bin/sh" else 0
            assert text.count(TOKEN) == 1, (name, a.path)
            assert TOKEN in lines[at] and lines[at] in (line, header(host, role=False).line)


def test_a_misplaced_header_is_emitted_directly() -> None:
    """Fail-safe: an artifact whose anonymous header line is not where a header goes,
    or is there twice, makes its target emitted directly for each host."""
    lines = (Header("", "gpu").line.encode(), Header("", None).line.encode())
    anon = lines[0]

    def found(data: bytes) -> tuple[_anonymous.Splice, ...] | None:
        return _anonymous.splices([Artifact("t", "/p", data)], lines)

    assert found(b"x\n" + anon + b"\n") is None
    assert found(anon + b"\n" + anon + b"\n") is None
    assert found(anon + b"\n" + lines[1] + b"\n") is None
    assert found(b"#!/bin/sh\n" + anon + b"\nx\n") == ((b"#!/bin/sh\n", 0, b"\nx\n"),)
    assert found(b"#!/bin/sh\n" + lines[1] + b"\n") == ((b"#!/bin/sh\n", 1, b"\n"),)
    assert found(b"no header\n") == (None,)


def test_a_target_not_re_headed_is_emitted_directly(
    plan: Plan, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = named(plan, PROBES[1])
    registry._emitted.cache_clear()
    monkeypatch.setattr(_anonymous, "splices", lambda arts, lines: None)
    try:
        got = registry._shared(host, SHARED)
    finally:
        registry._emitted.cache_clear()
    for name in SHARED:
        if TARGETS[name].applies(host) is None:
            assert got[name] == (None, TARGETS[name].emit(host)), name


def _modules(name: str) -> set[str]:
    """The target's module and every hostc.targets module it imports a function from,
    transitively (a constant reads no Plan; the header's own module, `_render`, and the
    registry's excepted)."""
    found: set[str] = set()
    todo = [TARGETS[name].module]
    while todo:
        mod = todo.pop()
        if mod in found or mod in ("_render", "_header", "_anonymous", "__init__"):
            continue
        found.add(mod)
        tree = ast.parse((TEMPLATES.parent / f"{mod}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                constants = all(a.name.isupper() for a in node.names)
                if node.module.startswith("hostc.targets.") and not constants:
                    todo.append(node.module.removeprefix("hostc.targets."))
                elif node.module == "hostc.targets":
                    todo += [a.name for a in node.names]
    return found


def _templates(sources: list[str]) -> set[str]:
    found = {m for s in sources for m in re.findall(r'"([\w.-]+\.j2)"', s)}
    for t in list(found):
        found |= set(re.findall(r'include "([\w.-]+\.j2)"', (TEMPLATES / t).read_text()))
    return found


@pytest.mark.parametrize("name", SHARED)
def test_no_declared_target_reads_the_name(name: str) -> None:
    sources = [(TEMPLATES.parent / f"{m}.py").read_text() for m in _modules(name)]
    for text in sources:
        assert "host.name" not in text and "provenance" not in text.replace("hostc.provenance", "")
    for t in _templates(sources):
        text = (TEMPLATES / t).read_text()
        assert "host.name" not in text and "plan." not in text, t
