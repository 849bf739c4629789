"""CPU partition rules: existence, SMT siblings, boot CPU, per-node housekeeping."""

from __future__ import annotations

from collections.abc import Iterator

from hostc.cpuset import CpuSet
from hostc.diagnostics import Diagnostic, KeyPath, at, error, warning
from hostc.resolve import Resolved
from hostc.spec.model import HostSpec, IsolateMode, Role


def one_housekeeping_form(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    if spec.cpu.housekeeping is not None and spec.cpu.housekeeping_per_node is not None:
        yield error(
            at("cpu", "housekeeping"), "give housekeeping_per_node or housekeeping, not both"
        )
    n = spec.cpu.housekeeping_per_node
    if n is not None and n < 1:
        yield error(at("cpu", "housekeeping_per_node"), f"must be at least 1 core, got {n}")
    if n is not None and n >= 1:
        most = max((len(topo.node_cpus(i)) for i in topo.node_ids()), default=0)
        if n > most:
            yield error(
                at("cpu", "housekeeping_per_node"),
                f"{n} is too large: no NUMA node of this machine has more than {most} CPUs",
            )


def _named(spec: HostSpec) -> Iterator[tuple[KeyPath, CpuSet]]:
    if spec.cpu.housekeeping is not None:
        yield at("cpu", "housekeeping"), spec.cpu.housekeeping
    if isinstance(spec.cpu.isolation, CpuSet):
        yield at("cpu", "isolate"), spec.cpu.isolation


def cpus_exist(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    known = topo.present
    online = topo.online
    for path, cpus in _named(spec):
        missing = cpus - known
        if missing:
            yield error(
                path,
                f"CPU(s) {missing} are not in the topology",
                hint=f"this machine has CPUs {known}",
            )
        offline = (cpus & known) - online
        taken = offline & (spec.cpu.offline or CpuSet())
        if taken:
            yield error(
                path,
                f"CPU(s) {taken} are taken offline by cpu.offline: an offline CPU is in no CPU set",
                hint="drop them from one of the two lists",
            )
        if offline - taken:
            yield error(
                path,
                f"CPU(s) {offline - taken} are offline in the topology",
                hint=f"online CPUs: {online}",
            )


def siblings_together(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    cores = topo.cores()
    for path, cpus in _named(spec):
        cpus = cpus & topo.online
        split = [core for core in cores.values() if core & cpus and not core <= cpus]
        if split:
            shown = "; ".join(f"{c & cpus} without {c - cpus}" for c in split[:4])
            more = f" (and {len(split) - 4} more cores)" if len(split) > 4 else ""
            yield error(
                path,
                f"splits SMT siblings: {shown}{more}",
                hint="a core and its SMT siblings must stay on the same side",
            )


def partition_sound(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    hk, iso = spec.cpu.housekeeping, spec.cpu.isolation
    if not topo.online or iso is IsolateMode.NONE:
        return
    if iso is IsolateMode.WORKLOAD and not spec.workload:
        yield error(
            at("cpu", "isolate"),
            'isolate = "workload" but no [[workload]] is defined',
            hint="add [[workload]] with its gpus, or isolate a cpulist",
        )
        return
    known = topo.present
    if hk is not None and not hk <= known:
        return  # cpus_exist reported it
    part = r.partition
    path = at("cpu", "housekeeping" if hk is not None else "isolate")
    if hk is not None and isinstance(iso, CpuSet):
        both = hk & iso
        if both:
            yield error(at("cpu", "isolate"), f"CPU(s) {both} are both housekeeping and isolated")
        neither = topo.online - hk - iso
        if neither:
            yield error(
                at("cpu", "isolate"),
                f"online CPU(s) {neither} are neither housekeeping nor isolated",
                hint='list them in one of the two, or use isolate = "rest"',
            )
    if not part.housekeeping:
        yield error(
            path,
            "isolates every online CPU: the kernel needs housekeeping CPUs",
            hint="keep at least one core per NUMA node for housekeeping",
        )
        return
    if topo.boot_cpu not in part.housekeeping:
        yield error(
            path,
            f"isolates the boot CPU {topo.boot_cpu}: the kernel keeps it for "
            "timekeeping, and isolating it breaks nohz_full",
            hint=f"keep CPU {topo.boot_cpu} (and its siblings) for housekeeping",
        )
    if not spec.cpu.allow_node_without_housekeeping:
        for node in topo.node_ids():
            cpus = topo.node_cpus(node)
            if cpus and not cpus & part.housekeeping:
                yield error(
                    path,
                    f"NUMA node {node} (CPUs {cpus}) is left without housekeeping",
                    hint="keep a core per node for its IRQs and kernel threads, or set "
                    "cpu.allow_node_without_housekeeping = true",
                )
    if not part.isolated:
        yield warning(
            at("cpu", "isolate"),
            "isolation is on but no CPU ends up isolated; no isolation arguments are emitted",
        )


def isolation_has_users(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    if spec.cpu.isolation is IsolateMode.NONE or not topo.online:
        return
    hk = spec.cpu.housekeeping
    if spec.cpu.isolation is IsolateMode.WORKLOAD and not spec.workload:
        return  # partition_sound reports the missing workload
    if hk is not None and not hk <= topo.present:
        return  # cpus_exist reports it
    if not r.partition.isolated:
        return  # partition_sound says nothing ends up isolated; do not contradict it
    # the kubelet's static CPU manager pins Guaranteed pods to the CPUs outside its reserved set
    kubelet_pins = spec.kubelet is not None and spec.kubelet.cpu_manager_policy != "none"
    if not spec.workload and not kubelet_pins:
        yield warning(
            at("cpu", "isolate"),
            "CPUs are isolated but no [[workload]] is pinned to them; "
            "isolated CPUs with nothing pinned are worse than none",
            hint="add [[workload]] with the GPUs the service uses",
        )
    if spec.host.role is Role.TRAINING:
        yield warning(
            at("cpu", "isolate"),
            "CPU isolation rarely helps training (data loaders need "
            "every core); measure before keeping it",
        )


def siblings_known(r: Resolved) -> Iterator[Diagnostic]:
    """Isolation without SMT facts could split a core; refuse rather than guess."""
    spec, topo = r.spec, r.topo
    if spec.cpu.isolation is IsolateMode.NONE:
        return
    unknown = topo.smt_unknown
    if unknown:
        yield error(
            at("cpu", "isolate"),
            f"the snapshot does not say which CPUs are SMT siblings (CPUs {unknown}, "
            f"source {topo.source or 'unknown'}), so isolation could split a core",
            hint="capture the topology with `hostc probe`, `hostc import hwloc` or "
            "`hostc import lscpu`",
        )


def snapshot_caveats(r: Resolved) -> Iterator[Diagnostic]:
    """CPUs the capture could not see properly change what the partition means; say so."""
    topo = r.topo
    if topo.hidden_cpus:
        yield warning(
            at("host", "topology"),
            f"the snapshot hides online CPUs {topo.hidden_cpus} (a cgroup or "
            "firmware reservation); they are treated as offline and appear in no "
            "kernel argument",
            hint="capture the host with `hostc probe` to see them",
        )
    if topo.disallowed_cpus:
        yield warning(
            at("host", "topology"),
            f"CPUs {topo.disallowed_cpus} were outside the capturing process's "
            "cgroup; they are partitioned like any other CPU",
        )
