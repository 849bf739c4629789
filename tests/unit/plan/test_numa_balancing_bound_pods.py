"""NUMA balancing is off where the kubelet binds pods' memory to their nodes (issue 52 F4).

A Static memory manager under a restricted or single-numa-node topology policy gives
each Guaranteed pod the memory of its preferred NUMA node(s) (cpuset.mems); the
kernel's sysctl documentation says to disable automatic NUMA balancing where the
workload is already bound.  On a multi-node inference node that is
`kernel.numa_balancing = 0`, with that reason, in `hostc plan`, the sysctl.d file and
the TuneD profile's [sysctl], under every kubelet flavour and either runtime owner.
Before issue 52 the inference preset set 1 there ("it scans every task, pods a Static
memory manager binds to their nodes included").
"""

from __future__ import annotations

import pytest
from test_runtime import compile_, files, h100

from hostc.plan.model import Plan
from hostc.report.plan_view import render
from hostc.spec import model as m
from hostc.vocab import TopologyPolicy

SYSCTL_FILE = "/etc/sysctl.d/90-hostc.conf"
TUNED = "/etc/tuned/hostc/tuned.conf"
FLAVORS = (m.Flavor.KUBEADM, m.Flavor.RKE2, m.Flavor.K3S)
OWNERS = (m.RuntimeOwner.SYSTEMD, m.RuntimeOwner.TUNED)


def kubelet_node(
    flavor: m.Flavor,
    owner: m.RuntimeOwner,
    policy: TopologyPolicy | None = TopologyPolicy.SINGLE_NUMA_NODE,
    memory: m.MemoryManagerPolicy | None = m.MemoryManagerPolicy.STATIC,
) -> Plan:
    """A 2-node 4×H100 kubelet node (two GPUs per node), pods at most 2 GPUs."""
    reserved = m.KubeletReserved(memory="1Gi")
    return compile_(
        m.HostSpec(
            host=m.Host(name="k", role=m.Role.INFERENCE),
            cpu=m.Cpu(housekeeping_per_node=2, isolate=m.IsolateMode.REST),
            kubelet=m.Kubelet(
                flavor=flavor,
                version="1.33",
                role=None if flavor is m.Flavor.KUBEADM else m.NodeRole.AGENT,
                topology_manager_policy=policy,
                memory_manager_policy=memory,
                kube_reserved=reserved,
                system_reserved=reserved,
                max_gpus_per_pod=2,
            ),
            runtime=m.Runtime(owner),
        )
    )


def numa_balancing(plan: Plan) -> tuple[str, str]:
    s = next(s for s in plan.sysctls if s.key == "kernel.numa_balancing")
    return s.value, s.reason.why


@pytest.mark.parametrize("owner", OWNERS, ids=str)
@pytest.mark.parametrize("flavor", FLAVORS, ids=str)
def test_static_memory_manager_binding_pods_turns_numa_balancing_off(
    flavor: m.Flavor, owner: m.RuntimeOwner
) -> None:
    plan = kubelet_node(flavor, owner)
    value, why = numa_balancing(plan)
    assert value == "0"
    assert "Static memory manager" in why and "already bound" in why and "cost:" in why
    shown = render(plan)
    assert "kernel.numa_balancing = 0" in shown and "Static memory manager" in shown
    if owner is m.RuntimeOwner.SYSTEMD:
        assert "kernel.numa_balancing = 0" in files(plan, "sysctl")[SYSCTL_FILE].splitlines()
    else:
        assert "kernel.numa_balancing=0" in files(plan, "tuned")[TUNED].splitlines()


@pytest.mark.parametrize("policy", [TopologyPolicy.RESTRICTED, TopologyPolicy.SINGLE_NUMA_NODE])
def test_restricted_binds_pods_as_single_numa_node_does(policy: TopologyPolicy) -> None:
    plan = kubelet_node(m.Flavor.KUBEADM, m.RuntimeOwner.SYSTEMD, policy)
    assert numa_balancing(plan)[0] == "0"


@pytest.mark.parametrize(
    ("policy", "memory"),
    [
        (TopologyPolicy.BEST_EFFORT, m.MemoryManagerPolicy.STATIC),
        (TopologyPolicy.SINGLE_NUMA_NODE, m.MemoryManagerPolicy.NONE),
        (TopologyPolicy.SINGLE_NUMA_NODE, None),
    ],
    ids=["best-effort", "memory-None", "no-memory-manager"],
)
def test_pods_free_to_span_nodes_keep_numa_balancing_with_the_reason(
    policy: TopologyPolicy, memory: m.MemoryManagerPolicy | None
) -> None:
    """No binding of pods to their preferred nodes: the preset keeps balancing on and
    says which binding it looked for."""
    plan = kubelet_node(m.Flavor.RKE2, m.RuntimeOwner.SYSTEMD, policy, memory)
    value, why = numa_balancing(plan)
    assert value == "1"
    assert "restricted or single-numa-node" in why


def test_a_one_node_host_gets_no_numa_balancing_either_way() -> None:
    """numa_balancing is a multi-node setting: one node has nothing to balance."""
    reserved = m.KubeletReserved(memory="1Gi")
    plan = compile_(
        m.HostSpec(
            host=m.Host(name="k", role=m.Role.INFERENCE),
            cpu=m.Cpu(housekeeping_per_node=2, isolate=m.IsolateMode.REST),
            kubelet=m.Kubelet(
                flavor=m.Flavor.KUBEADM,
                version="1.33",
                topology_manager_policy=TopologyPolicy.SINGLE_NUMA_NODE,
                memory_manager_policy=m.MemoryManagerPolicy.STATIC,
                kube_reserved=reserved,
                system_reserved=reserved,
            ),
        ),
        h100(packages=1),
    )
    assert all(s.key != "kernel.numa_balancing" for s in plan.sysctls)
