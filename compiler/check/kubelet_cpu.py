"""Kubelet CPU-manager rules: the static policy's options, checked against the kubelet
release and its feature gates as the kubelet checks them when it starts on the node."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hostc import vocab
from hostc.diagnostics import Diagnostic, KeyPath, at, error, warning
from hostc.knowledge import kubelet as ko
from hostc.resolve import Resolved
from hostc.spec.model import Kubelet
from hostc.topology.model import Topology


def _smt(topo: Topology) -> bool:
    return any(len(c) > 1 for c in topo.cores().values())


def option_stage(
    where: KeyPath,
    name: str,
    what: str,
    table: Mapping[str, tuple[tuple[ko.KubeVersion, ko.Stage], ...]],
    version: ko.KubeVersion,
) -> Diagnostic | ko.Stage:
    """The option's maturity in this kubelet, or the error for one it does not have."""
    first = ko.first_release(name, table)
    if first is None:
        return error(where, f"unknown {what} option {name!r}", hint="known: " + ", ".join(table))
    st = ko.stage(name, version, table)
    if st is None:
        return error(where, f"{name!r} arrived in kubelet {first}; this node runs {version}")
    return st


def _cpu_option(where: KeyPath, opt: str, k: Kubelet) -> Iterator[Diagnostic]:
    """A CPU-manager option this kubelet has, and the gate it needs where it is alpha."""
    st = option_stage(where, opt, "CPU-manager", ko.CPU_OPTIONS, k.version)
    if isinstance(st, Diagnostic):
        yield st
    elif st is ko.Stage.ALPHA and not k.allow_alpha_options:
        yield error(
            where,
            f"{opt!r} is alpha in kubelet {k.version}; without the {ko.ALPHA_GATE} feature "
            f"gate the kubelet fails with: CPU Manager Policy Alpha-level Options not "
            f'enabled, but option "{opt}" provided',
            hint="set kubelet.allow_alpha_options = true to turn the gate on",
        )


def strict_reservation(r: Resolved) -> Iterator[Diagnostic]:
    """`kubelet.strict_cpu_reservation`: an option of the static policy, from the kubelet
    release that has it, and not contradicted by `cpu_manager_policy_options`."""
    k = r.spec.kubelet
    if k is None or k.strict_cpu_reservation is None:
        return
    where = at("kubelet", "strict_cpu_reservation")
    if k.cpu_manager_policy is vocab.CpuManagerPolicy.NONE:
        yield error(
            where, f"{ko.STRICT_RESERVATION} belongs to the static policy; the policy here is none"
        )
        return
    if not k.strict_cpu_reservation:
        if ko.STRICT_RESERVATION in k.cpu_manager_policy_options:
            yield error(
                where,
                f"is false, but kubelet.cpu_manager_policy_options names {ko.STRICT_RESERVATION}",
                hint="say it in one place",
            )
        return
    if ko.STRICT_RESERVATION in k.cpu_manager_policy_options:
        return  # cpu_manager_options judges the option where it is named
    yield from _cpu_option(where, ko.STRICT_RESERVATION, k)


def cpu_manager_options(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    k = spec.kubelet
    if k is None or not k.cpu_manager_policy_options:
        return
    base = at("kubelet", "cpu_manager_policy_options")
    if k.cpu_manager_policy is vocab.CpuManagerPolicy.NONE:
        yield error(
            base, "CPU-manager options belong to the static policy; the policy here is none"
        )
        return
    opts = k.cpu_manager_policy_options
    for i, opt in enumerate(opts):
        yield from _cpu_option(base.index(i), opt, k)
    for a, b in ko.CPU_OPTION_CONFLICTS:
        if a in opts and b in opts:
            yield error(base, f"the kubelet refuses {a} and {b} together")
    if "align-by-socket" in opts and (
        k.topology_manager_policy is vocab.TopologyPolicy.SINGLE_NUMA_NODE
    ):
        yield error(base, "align-by-socket contradicts topology_manager_policy single-numa-node")
    if "distribute-cpus-across-numa" in opts and (
        k.topology_manager_policy is vocab.TopologyPolicy.SINGLE_NUMA_NODE
    ):
        yield warning(
            base.index(opts.index("distribute-cpus-across-numa")),
            "distribute-cpus-across-numa does nothing under topology_manager_policy "
            "single-numa-node: it spreads only pods that need several NUMA nodes, and "
            "single-numa-node rejects those",
            hint="drop the option, or use topology_manager_policy best-effort or restricted",
        )
    if "full-pcpus-only" in opts and not _smt(topo):
        yield warning(
            base.index(opts.index("full-pcpus-only")),
            "full-pcpus-only has no effect on a host without SMT: every core is one CPU",
        )
