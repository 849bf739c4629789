"""Hypothesis strategies shared by the property tests: generated topologies and
(topology, spec) cases, and the compile that turns a case into a Plan or its errors."""

from __future__ import annotations

import attrs
from hypothesis import strategies as st

from hostc import api
from hostc.cpuset import CpuSet
from hostc.diagnostics import HostcError
from hostc.plan.model import Plan
from hostc.spec import model as m
from hostc.topology.model import Topology

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
        if draw(st.booleans()):  # a second pool, of the other size (or the same: refused)
            size = draw(st.sampled_from(["2M", "2M", "1G"]))
            hp = attrs.evolve(hp, pools=(m.HugepagesPool(size, total=draw(st.integers(0, 64))),))
        allocate = draw(st.sampled_from([None, None, *m.HugepageAllocation]))
        hp = attrs.evolve(hp, allocate=allocate)
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


def compile_case(topo: Topology, spec: m.HostSpec) -> tuple[Plan | None, list[str]]:
    try:
        plan, _ = api.compile_plan(spec, topo, spec_file="prop.toml")
    except HostcError as e:
        assert e.errors, "a rejection must carry at least one error"
        for d in e.diagnostics:
            assert d.file == "prop.toml" and d.message
        return None, [str(d.path) for d in e.errors]
    return plan, []
