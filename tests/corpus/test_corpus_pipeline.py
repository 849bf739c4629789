"""The whole pipeline over real machines: every topology in ../shared/topologies is
imported, then compiled with an inference spec that isolates everything but one core
per NUMA node.  Where the source knows SMT siblings this must succeed with a sound
partition; where it does not, hostc must refuse with the siblings diagnostic."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from hostc import api, settings
from hostc.diagnostics import HostcError
from hostc.knowledge import kernel as kernelfacts
from hostc.plan.kernelargs import cmdline
from hostc.plan.model import Plan
from hostc.spec import model as m
from hostc.topology.importers import hwloc, lscpu, numactl
from hostc.topology.model import Topology

from conftest import SHARED_TOPOLOGIES, nonempty, shared
from invariants import assert_partition_sound

PARSERS = {"hwloc": hwloc.parse, "lscpu": lscpu.parse, "numactl": numactl.parse}


def _files() -> list[Path]:
    if not SHARED_TOPOLOGIES.is_dir():
        return []
    return sorted(
        p
        for kind in PARSERS
        for p in (SHARED_TOPOLOGIES / kind).iterdir()
        if p.suffix in (".xml", ".txt")
    )


def _import(path: Path) -> Topology:
    topo = PARSERS[path.parent.name](path.read_text(errors="replace"), str(path))
    if topo.arch == "unknown":  # what `hostc import … --arch` does for text sources
        arch = "ppc64le" if any(s in path.name.lower() for s in ("ppc", "power")) else "x86_64"
        topo = attrs.evolve(topo, arch=arch)
    return topo


def test_corpus_present() -> None:
    shared("topologies")
    assert len(_files()) >= 30


def _name(path: Path) -> str:
    """The file's stem as a host name (names are one word of [A-Za-z0-9._-], at most 63)."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", path.stem)[:63]


@pytest.mark.parametrize(
    "path", nonempty(_files(), f"no corpus under {SHARED_TOPOLOGIES}"), ids=lambda p: p.name
)
def test_isolating_all_but_one_core_per_node(path: Path) -> None:
    topo = _import(path)
    spec = m.HostSpec(
        host=m.Host(name=_name(path), role=m.Role.INFERENCE, kernel="6.8"),
        cpu=m.Cpu(housekeeping_per_node=1, isolate="rest"),
    )
    smt_known = all(c.core is not None for c in topo.cpus if c.online)
    try:
        plan, warnings = api.compile_plan(spec, topo, spec_file="corpus.toml")
    except HostcError as e:
        assert not smt_known, f"{path.name}: {e}"
        assert [str(d.path) for d in e.errors] == ["cpu.isolate"]
        return
    assert smt_known
    assert_partition_sound(topo, plan)
    _right_for_the_host(plan)
    if plan.host.cpu_vendor is None and plan.host.x86 and "intel_idle." in cmdline(plan):
        assert any("does not say the CPU vendor" in w.message for w in warnings)
    arts = api.emit(plan)
    want = {n for n, t in api.targets().items() if t.role == "file" and t.applies(plan) is None}
    assert {a.target for a in arts} == want


def _right_for_the_host(plan: Plan) -> None:
    """The "right on every real host" promises, on real machines."""
    line = cmdline(plan)
    assert "domain" not in line  # the spec did not ask for it
    if plan.host.cpu_vendor not in ("intel", None):  # unknown vendor: both, with a warning
        assert "intel_idle" not in line, plan.host.cpu_vendor
    if not plan.host.x86:
        assert "max_cstate" not in line
    version = plan.host.kernel_version
    for s in plan.sysctls:
        fact = settings.sysctl(s.key)  # its row: what the kernel says about it
        if not fact.limit or fact.kernel_default(version) is None:
            continue
        values = tuple(int(v) for v in s.value.split())
        default = fact.kernel_default(version) or ()
        assert all(v >= d for v, d in zip(values, default, strict=True)), s


@pytest.mark.parametrize(
    "path", nonempty(_files(), f"no corpus under {SHARED_TOPOLOGIES}"), ids=lambda p: p.name
)
def test_nofile_above_the_ceiling_raises_nr_open_on_every_host(path: Path) -> None:
    topo = _import(path)
    spec = m.HostSpec(
        host=m.Host(name=_name(path), role=m.Role.TRAINING, kernel="6.8"),
        limits=m.Limits(nofile=4194304),
    )
    plan, _ = api.compile_plan(spec, topo, spec_file="corpus.toml")
    _right_for_the_host(plan)
    # the corpus names no OS, so its systemd is unknown: the kernel's maximum, which
    # lowers nothing where systemd >= 240 has already raised it
    assert {s.key: s.value for s in plan.sysctls}["fs.nr_open"] == str(kernelfacts.NR_OPEN_MAX)


@pytest.mark.parametrize(
    "path", nonempty(_files(), f"no corpus under {SHARED_TOPOLOGIES}"), ids=lambda p: p.name
)
def test_hugepages_where_memory_is_known(path: Path) -> None:
    topo = _import(path)
    spec = m.HostSpec(
        host=m.Host(name=_name(path), role=m.Role.TRAINING, kernel="6.8"),
        hugepages=m.Hugepages(size="2M", total=512),
    )
    cpu_nodes = [n for n in topo.nodes if topo.node_cpus(n.id)]
    try:
        plan, _ = api.compile_plan(spec, topo, spec_file="corpus.toml")
    except HostcError as e:
        messages = " ".join(d.message for d in e.errors)
        assert any(n.memory_mib is None for n in cpu_nodes) or "2M" in messages, messages
        return
    pool = plan.hugepages[0]
    assert pool.total == 512
    assert {n for n, _ in pool.per_node} <= {n.id for n in cpu_nodes}
