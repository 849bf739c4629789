"""Property tests: for every accepted (topology, spec) the partition invariants hold and
the emitted cmdline/GRUB artifacts parse back to exactly the Plan's sets; every
rejected one gets diagnostics, never an exception."""

from __future__ import annotations

import re
import shlex

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.cpuset import CpuSet
from hostc.diagnostics import HostcError, Severity
from hostc.plan import Plan, Reason
from hostc.provenance import SpecKey, SpecKeys
from hostc.spec import model as m
from hostc.topology.model import Topology

from invariants import assert_partition_sound
from plan_walk import reasons
from plan_walk import settings as plan_settings
from topogen import machine


@st.composite
def topologies(draw: st.DrawFn) -> Topology:
    packages = draw(st.integers(1, 8))
    nodes_per_package = draw(st.integers(1, 4))
    cores = draw(st.integers(1, 4))
    smt = draw(st.sampled_from([1, 2, 4]))
    total = packages * nodes_per_package * cores * smt
    offline: frozenset[int] = frozenset()
    if total > 1:
        offline = draw(st.frozensets(st.integers(1, total - 1), max_size=total // 4))
    topo = machine(
        packages=packages,
        nodes_per_package=nodes_per_package,
        cores_per_node=cores,
        smt=smt,
        memory_mib=draw(st.sampled_from([2048, 16384, 65536])),
        cpuless_nodes=draw(st.integers(0, 2)),
        offline=offline,
        gpus_per_node=draw(st.integers(0, 2)),
        kernel=draw(st.sampled_from(["6.8.0", "5.15.0", None])),
    )
    return topo


@st.composite
def cases(draw: st.DrawFn) -> tuple[Topology, m.HostSpec]:
    topo = draw(topologies())
    cpu_ids = sorted(c.id for c in topo.cpus)
    raw = st.frozensets(st.sampled_from(cpu_ids), min_size=1).map(lambda s: str(CpuSet(s)))
    cores = list(topo.cores().values())
    whole = st.frozensets(st.sampled_from(range(len(cores))), min_size=1).map(
        lambda idx: str(CpuSet(set().union(*(cores[i].ids for i in idx))))
    )
    subset = st.one_of(raw, whole, whole)
    others = [c for c in cores if topo.boot_cpu not in c]
    no_boot = (
        st.frozensets(st.sampled_from(range(len(others))), min_size=1).map(
            lambda idx: str(CpuSet(set().union(*(others[i].ids for i in idx))))
        )
        if others
        else raw
    )
    gpus = [g.name for g in topo.gpus]
    workloads = []
    if gpus and draw(st.booleans()):
        chosen = sorted(draw(st.frozensets(st.sampled_from(gpus), min_size=1)))
        workloads = [m.Workload("svc", chosen, busy_poll=draw(st.booleans()))]
    isolate = draw(
        st.one_of(st.sampled_from(["none", "rest", "rest", "workload"]), no_boot, subset)
    )
    hk_explicit = draw(st.one_of(st.none(), st.none(), subset))
    per_node = None if hk_explicit else draw(st.one_of(st.none(), st.integers(0, 3)))
    hp = None
    if draw(st.booleans()):
        if draw(st.booleans()):
            per = draw(
                st.dictionaries(
                    st.sampled_from([n.id for n in topo.nodes]), st.integers(0, 40), max_size=3
                )
            )
            hp = m.Hugepages(size=draw(st.sampled_from(["2M", "1G"])), per_node=per)
        else:
            hp = m.Hugepages(size="1G", total=draw(st.integers(0, 16)))
    spec = m.HostSpec(
        host=m.Host(name="prop", role=draw(st.sampled_from(list(m.Role)))),
        cpu=m.Cpu(
            housekeeping_per_node=per_node,
            housekeeping=hk_explicit,
            isolate=isolate,
            allow_node_without_housekeeping=draw(st.booleans()),
        ),
        workload=workloads,
        hugepages=hp,
    )
    return topo, spec


def _compile(topo: Topology, spec: m.HostSpec) -> tuple[Plan | None, list[str]]:
    try:
        plan, _ = api.compile_plan(spec, topo, spec_file="prop.toml")
    except HostcError as e:
        assert e.errors, "a rejection must carry at least one error"
        for d in e.diagnostics:
            assert d.file == "prop.toml" and d.message
        return None, [d.path for d in e.errors]
    return plan, []


def _args(cmdline: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for tok in cmdline.split():
        key, sep, value = tok.partition("=")
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
    plan, _ = _compile(topo, spec)
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
    plan, _ = _compile(topo, spec)
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
        if plan.hugepages and plan.hugepages[0].per_node:
            pool = plan.hugepages[0]
            value = args["hugepages"] or ""
            if pool.node_form:
                got = {int(a): int(b) for a, b in (x.split(":") for x in value.split(","))}
                assert got == dict(pool.per_node)
            else:
                assert int(value) == pool.total
            assert text.index("hugepagesz=") < text.index("hugepages=")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_every_plan_entry_has_a_reason(case: tuple[Topology, m.HostSpec]) -> None:
    topo, spec = case
    plan, _ = _compile(topo, spec)
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
    a, _ = _compile(topo, spec)
    b, _ = _compile(topo, spec)
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
