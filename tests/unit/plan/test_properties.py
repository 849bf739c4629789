"""Property tests: for every accepted (topology, spec) the partition invariants hold and
the emitted cmdline/GRUB artifacts parse back to exactly the Plan's sets; every
rejected one gets diagnostics, never an exception."""

from __future__ import annotations

import re
import shlex

import attrs
from hypothesis import HealthCheck, given, settings

from hostc import api
from hostc.cpuset import CpuSet
from hostc.diagnostics import Severity
from hostc.knowledge.kernel import MULTI_VALUED
from hostc.plan.model import Reason
from hostc.provenance import SpecKey, SpecKeys
from hostc.spec import model as m
from hostc.topology.model import Topology
from hostc.units import size_kib

from invariants import assert_partition_sound
from plan_walk import reasons
from plan_walk import settings as plan_settings
from strategies import cases, compile_case


def _args(cmdline: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for tok in cmdline.split():
        key, sep, value = tok.partition("=")
        if key in MULTI_VALUED:  # one hugepagesz=/hugepages= pair per pool (_pools)
            continue
        assert key not in out, f"{key} emitted twice"
        assert not sep or value, f"{key}= emitted with an empty value"
        out[key] = value if sep else None
    return out


def _grub_args(text: str) -> str:
    """Evaluate the drop-in's appends the way sh would (independent of the emitter)."""
    line = 'GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT:+$GRUB_CMDLINE_LINUX_DEFAULT }'
    value = ""
    for raw in text.splitlines():
        if not raw.startswith("GRUB_"):  # comments and the duplicate-key notice
            continue
        assert raw.startswith(line) and raw.endswith('"'), raw
        value = (value + " " if value else "") + raw[len(line) : -1]
    return value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_partition_invariants(case: tuple[Topology, m.HostSpec]) -> None:
    topo, spec = case
    plan, _ = compile_case(topo, spec)
    if plan is None:
        return
    assert_partition_sound(
        topo, plan, every_node_keeps=not spec.cpu.allow_node_without_housekeeping
    )
    for n in plan.nodes:
        if n.memory_mib is not None and n.memory_left_mib is not None:
            assert n.memory_left_mib >= 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_artifacts_parse_back_to_the_plan(case: tuple[Topology, m.HostSpec]) -> None:
    topo, spec = case
    plan, _ = compile_case(topo, spec)
    if plan is None:
        return
    arts = {a.target: a for a in api.emit(plan, ["cmdline", "grub"])}
    line = arts["cmdline"].text
    assert line.endswith("\n") and line.count("\n") == 1
    for text in (line.strip(), _grub_args(arts["grub"].text)):
        args = _args(text)
        iso = plan.partition.isolated
        if iso:
            flags_and_cpus = args["isolcpus"]
            assert flags_and_cpus is not None
            cpus = re.sub(r"^([a-z_]+,)*", "", flags_and_cpus)
            assert CpuSet.parse(cpus) == iso
            nohz = plan.isolation_by("nohz_full")
            if nohz is None:
                assert "nohz_full" not in args
            else:
                want = iso if nohz.cpus is None else nohz.cpus
                assert CpuSet.parse(args["nohz_full"] or "") == want <= iso
            assert CpuSet.parse(args["rcu_nocbs"] or "") == iso
            assert CpuSet.parse(args["irqaffinity"] or "") == plan.partition.housekeeping
        else:
            assert not {"isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"} & set(args)
        assert _pools(text) == [
            (p.size_kib, dict(p.per_node) if p.node_form else p.total)
            for p in plan.hugepages
            if p.per_node and p.when == "boot"  # a runtime pool: hostc-hugepages
        ]


def _pools(text: str) -> list[tuple[int, dict[int, int] | int]]:
    """(size, per-node counts or total) per `hugepagesz=` `hugepages=` pair, each
    `hugepages=` right after its size (the kernel applies it to the size before it)."""
    words = [w.partition("=") for w in text.split() if w.startswith(("hugepagesz=", "hugepages="))]
    assert [k for k, _, _ in words] == ["hugepagesz", "hugepages"] * (len(words) // 2)
    out: list[tuple[int, dict[int, int] | int]] = []
    for (_, _, size), (_, _, value) in zip(words[::2], words[1::2], strict=True):
        counts = (
            {int(a): int(b) for a, b in (x.split(":") for x in value.split(","))}
            if ":" in value
            else int(value)
        )
        out.append((size_kib(size), counts))
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_every_plan_entry_has_a_reason(case: tuple[Topology, m.HostSpec]) -> None:
    topo, spec = case
    plan, _ = compile_case(topo, spec)
    if plan is None:
        return
    top_keys = {f.name for f in attrs.fields(m.HostSpec)}
    for path, s in plan_settings(plan):
        assert isinstance(getattr(s, "reason", None), Reason), path
    for _, r in reasons(plan):
        assert r.source and r.why
        keys = [r.source] if isinstance(r.source, SpecKey) else ()
        keys = r.source.keys if isinstance(r.source, SpecKeys) else keys
        for k in keys:
            assert k.path[0] in top_keys, str(r.source)


@settings(max_examples=60, deadline=None)
@given(cases())
def test_deterministic(case: tuple[Topology, m.HostSpec]) -> None:
    topo, spec = case
    a, _ = compile_case(topo, spec)
    b, _ = compile_case(topo, spec)
    if a is None:
        assert b is None
        return
    assert b is not None
    assert [x.text for x in api.emit(a)] == [x.text for x in api.emit(b)]


def test_grub_reader_is_independent() -> None:
    line = 'GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT:+$GRUB_CMDLINE_LINUX_DEFAULT }'
    text = f'# c\n{line}a=1"\n{line}b"\n'
    assert _grub_args(text) == "a=1 b"
    assert shlex.split("a=1 b") == ["a=1", "b"]
    assert Severity.ERROR.value == "error"
