"""Hugepage pools: several sizes in one spec, and per-node pages reserved at runtime
where the kernel command line cannot say them (issue 52, F2 and the second pool)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from hostc import api
from hostc.artifact import Artifact
from hostc.check import check
from hostc.diagnostics import Severity
from hostc.plan.kernelargs import cmdline
from hostc.plan.kubelet import managers_stamp
from hostc.plan.model import Plan
from hostc.resolve import resolve
from hostc.spec import model as m
from hostc.spec.load import from_data, to_data
from hostc.targets import Emitter, hugepages, systemd
from hostc.topology.model import Topology

from conftest import EXAMPLES
from topogen import machine

#: NTO's worker1-highpower shape on hostc's side: RHEL 9.4's 5.14 kernel, two nodes
RHEL9 = machine(
    packages=2,
    cores_per_node=20,
    smt=2,
    memory_mib=196608,
    gpus_per_node=1,
    kernel="5.14.0-427.59.1.el9_4.x86_64",
)
KUBEADM = m.Kubelet(
    flavor=m.Flavor.KUBEADM,
    version="1.33",  # type: ignore[arg-type]
    topology_manager_policy="single-numa-node",  # type: ignore[arg-type]
    memory_manager_policy=m.MemoryManagerPolicy.STATIC,
    kube_reserved=m.KubeletReserved(memory="1Gi"),  # type: ignore[arg-type]
)


def spec(hp: m.Hugepages, **kw: object) -> m.HostSpec:
    return m.HostSpec(
        host=m.Host(name="w1", role=m.Role.INFERENCE),
        cpu=m.Cpu(housekeeping_per_node=1, isolate="rest"),
        hugepages=hp,
        **kw,  # type: ignore[arg-type]
    )


def compiled(s: m.HostSpec, topo: Topology = RHEL9) -> tuple[Plan, list[str]]:
    plan, warnings = api.compile_plan(s, topo)
    return plan, [f"{w.path}: {w.message}" for w in warnings if str(w.path).startswith("huge")]


def errors(s: m.HostSpec, topo: Topology = RHEL9) -> list[str]:
    resolved, found = resolve(from_data(to_data(s)), topo)
    found += check(resolved)
    return [f"{d.path}: {d.message}" for d in found if d.severity is Severity.ERROR]


def systemd_files(plan: Plan) -> dict[str, Artifact]:
    out = Emitter("systemd")
    systemd.emit(plan, out)
    return {a.path: a for a in out.artifacts}


def test_uneven_per_node_pages_before_5_16_are_reserved_before_the_kubelet() -> None:
    """F2: 1G pages 4 on node 0 and 2 on node 1 on RHEL 9's 5.14, a kubeadm node.  hostc
    refused it ("cannot reserve different counts per NUMA node at boot"); now one unit
    writes each node's count early in boot, before every container runtime and kubelet,
    and the command line carries no count the kernel would spread evenly."""
    hp = m.Hugepages(size="1G", per_node={0: 4, 1: 2})
    plan, warnings = compiled(spec(hp, kubelet=KUBEADM))
    [pool] = plan.hugepages
    assert (pool.when, pool.per_node) == ("runtime", ((0, 4), (1, 2)))
    assert "hugepages=" not in cmdline(plan) and "default_hugepagesz=1G" in cmdline(plan)
    assert warnings == [
        "hugepages.per_node: kernel 5.14.0-427.59.1.el9_4.x86_64 predates per-node counts "
        "at boot (5.16), so hostc-hugepages.service reserves these pages on their nodes early "
        "in boot, before the container runtimes, kubelets and workloads; a node whose memory "
        "is already fragmented can fall short (the unit then fails, naming the node, the size "
        "and the count it got)"
    ]
    files = systemd_files(plan)
    unit = files[hugepages.UNIT_PATH].text.splitlines()
    before = {u for line in unit if line.startswith("Before=") for u in line[7:].split()}
    assert {"kubelet.service", "containerd.service", "crio.service", "rke2-agent.service"} <= before
    assert {"k3s-agent.service", "sysinit.target", "hostc-verify.service"} <= before
    assert "DefaultDependencies=no" in unit and "After=local-fs.target" in unit
    script = files[hugepages.SCRIPT].text.splitlines()
    assert [x for x in script if x.startswith("reserve ")] == [
        "reserve 0 1048576 1G 4",
        "reserve 1 1048576 1G 2",
    ]
    # said so, it warns no more; said boot, the refusal stands, with the way out
    asked = attrs.evolve(hp, allocate=m.HugepageAllocation.RUNTIME)
    assert compiled(spec(asked))[1] == []
    boot = attrs.evolve(hp, allocate=m.HugepageAllocation.BOOT)
    assert errors(spec(boot)) == [
        "hugepages.per_node: kernel 5.14.0-427.59.1.el9_4.x86_64 cannot reserve different "
        "counts per NUMA node at boot (needs Linux ≥ 5.16)"
    ]


def test_boot_stays_the_default_where_the_command_line_can_say_it() -> None:
    newer = attrs.evolve(RHEL9, kernel="6.8.0-45-generic")
    plan, _ = compiled(spec(m.Hugepages(size="1G", per_node={0: 4, 1: 2})), newer)
    assert plan.hugepages[0].when == "boot" and "hugepagesz=1G hugepages=0:4,1:2" in cmdline(plan)
    assert hugepages.UNIT_PATH not in systemd_files(plan)
    # an even split before 5.16 is the kernel's own: still the command line
    plan, _ = compiled(spec(m.Hugepages(size="1G", per_node={0: 3, 1: 3})))
    assert plan.hugepages[0].when == "boot" and "hugepagesz=1G hugepages=6" in cmdline(plan)


def test_two_pools_each_size_before_its_count_largest_first_in_the_unit() -> None:
    """The command line spells each pool as its `hugepagesz=` and then its `hugepages=`
    (the kernel applies a count to the size before it); the runtime unit writes the
    larger pages first, each node of each size, a node without pages of a size at 0."""
    newer = attrs.evolve(RHEL9, kernel="6.8.0-45-generic")
    hp = m.Hugepages(
        size="1G",
        per_node={0: 4},
        pools=(m.HugepagesPool(size="2M", total=128),),  # type: ignore[arg-type]
    )
    plan, _ = compiled(spec(hp), newer)
    assert (
        "default_hugepagesz=1G hugepagesz=1G hugepages=0:4 hugepagesz=2M hugepages=0:64,1:64"
        in (cmdline(plan))
    )
    assert [(p.size_kib, p.per_node) for p in plan.hugepages] == [
        (1048576, ((0, 4),)),
        (2048, ((0, 64), (1, 64))),
    ]
    assert [n.hugepages for n in plan.nodes] == [((1048576, 4), (2048, 64)), ((2048, 64),)]
    small_first = m.Hugepages(
        allocate=m.HugepageAllocation.RUNTIME,
        pools=(
            m.HugepagesPool(size="2M", per_node={1: 8}),  # type: ignore[arg-type]
            m.HugepagesPool(size="1G", per_node={0: 4}),  # type: ignore[arg-type]
        ),
    )
    plan, _ = compiled(spec(small_first), newer)
    assert "hugepages=" not in cmdline(plan) and "default_hugepagesz=2M" in cmdline(plan)
    script = systemd_files(plan)[hugepages.SCRIPT].text.splitlines()
    assert [x for x in script if x.startswith("reserve ")] == [
        "reserve 0 1048576 1G 4",
        "reserve 1 1048576 1G 0",
        "reserve 0 2048 2M 0",
        "reserve 1 2048 2M 8",
    ]


def test_the_single_pool_form_loads_and_lowers_as_before() -> None:
    """`[hugepages]` with size and counts and no pools is one pool, at `hugepages`."""
    s = api.spec_from_data(
        {
            "version": 1,
            "host": {"name": "t", "role": "inference"},
            "hugepages": {"size": "2M", "total": 8},
        }
    )
    assert s.hugepages is not None and s.hugepages.pools == ()
    plan, _ = compiled(s, attrs.evolve(RHEL9, kernel="6.8.0-45-generic"))
    [pool] = plan.hugepages
    assert (str(pool.reason.source), pool.per_node) == ("hugepages.total", ((0, 4), (1, 4)))


@pytest.mark.parametrize(
    ("hp", "want"),
    [
        (
            m.Hugepages(
                size="1G",
                total=2,
                pools=(m.HugepagesPool(size="1G", total=2),),  # type: ignore[arg-type]
            ),
            "hugepages.pools[0].size: a second pool of 1G pages (the first is hugepages): the "
            "kernel takes one hugepagesz= per size, and a node has one count per size",
        ),
        (
            m.Hugepages(pools=(m.HugepagesPool(size="16M", total=2),)),  # type: ignore[arg-type]
            "hugepages.pools[0].size: this CPU does not support 16M pages",
        ),
        (
            m.Hugepages(
                pools=(m.HugepagesPool(size="2M", total=2, per_node={0: 1}),)  # type: ignore[arg-type]
            ),
            "hugepages.pools[0]: give exactly one of per_node or total",
        ),
        (
            m.Hugepages(pools=(m.HugepagesPool(size="2M", per_node={5: 1}),)),  # type: ignore[arg-type]
            "hugepages.pools[0].per_node.5: NUMA node 5 is not in the topology",
        ),
    ],
)
def test_a_pool_error_names_the_pool_s_key_path(hp: m.Hugepages, want: str) -> None:
    assert errors(spec(hp)) == [want]


def test_pools_share_each_node_s_memory_budget() -> None:
    """Each pool fits alone; together they pass the node's memory less headroom."""
    one = m.Hugepages(size="1G", per_node={0: 150})
    two = attrs.evolve(one, pools=(m.HugepagesPool(size="2M", per_node={0: 16384}),))  # type: ignore[arg-type]
    assert errors(spec(one)) == []
    assert errors(spec(two)) == [
        "hugepages.pools[0].per_node.0: 150 × 1G + 16384 × 2M = 186368 MiB does not fit on NUMA "
        "node 0: 196608 MiB minus 19660 MiB headroom leaves 176948 MiB"
    ]


def test_kubelet_capacity_takes_every_pool_and_reserved_memory_stays_memory() -> None:
    """Pods' memory per node is the node less every pool and reservedMemory; each pool
    is pod-allocatable on its node; reservedMemory is the memory sum alone (no system
    reserves hugepages), and the Static memory manager's stamp holds the pools (its
    checkpoint records each node's pages per size: another count needs a reset)."""
    newer = attrs.evolve(RHEL9, kernel="6.8.0-45-generic")
    hp = m.Hugepages(
        size="1G", per_node={0: 4, 1: 2}, pools=(m.HugepagesPool(size="2M", total=128),)
    )  # type: ignore[arg-type]
    plan, _ = compiled(spec(hp, kubelet=KUBEADM), newer)
    k = plan.kubelet
    assert k is not None
    one, _ = compiled(spec(m.Hugepages(size="1G", per_node={0: 4, 1: 2}), kubelet=KUBEADM), newer)
    assert one.kubelet is not None and k.reserved_memory == one.kubelet.reserved_memory
    assert sum(r.memory.bytes for r in k.reserved_memory) == k.memory_total.bytes
    for c, r in zip(k.capacity, k.reserved_memory, strict=True):
        huge = sum(size * 1024 * n for size, n in c.hugepages)
        assert c.memory is not None and c.memory.bytes == 196608 * 2**20 - huge - r.memory.bytes
    assert [c.hugepages for c in k.capacity] == [
        ((1048576, 4), (2048, 64)),
        ((1048576, 2), (2048, 64)),
    ]
    assert managers_stamp(k).endswith(" hugepages=0:4x1G+64x2M,1:2x1G+64x2M")
    assert " hugepages=" not in managers_stamp(
        compiled(spec(m.Hugepages(size="1G", total=0), kubelet=KUBEADM), newer)[0].kubelet  # type: ignore[arg-type]
    )


#: a spec on examples/epyc-rhel9-inference's snapshot (RHEL 9.4, 5.14) with a bad pool
BAD_POOL = """version = 1

[host]
name = "w1"
role = "inference"
topology = "topology.toml"

[hugepages]
size = "1G"
per_node = { 0 = 4, 1 = 2 }

[[hugepages.pools]]
size = "2M"
total = 64

[[hugepages.pools]]
size = "2M"
per_node = { 1 = 8 }
"""


def test_a_bad_pool_exits_2_naming_file_and_key_and_writes_nothing(tmp_path: Path) -> None:
    """From the command line: the second 2M pool is one error naming the file, its line
    and the key path, exit 2, and the output directory is not even made."""
    shutil.copy(EXAMPLES / "epyc-rhel9-inference/topology.toml", tmp_path / "topology.toml")
    (tmp_path / "node.toml").write_text(BAD_POOL)
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "hostc", "build", tmp_path / "node.toml", "--target", "all",
         "--out", out],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: {tmp_path / 'node.toml'}:17: hugepages.pools[1].size: a second pool of 2M "
        "pages (the first is hugepages.pools[0]): the kernel takes one hugepagesz= per size, "
        "and a node has one count per size"
    ]
    assert not out.exists()
