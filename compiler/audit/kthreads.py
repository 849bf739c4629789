"""Observers of RCU's offload kthreads (issue 52, NTO e2e test 34358): whether the
offload took effect on the CPUs the Plan gives `rcu_nocbs=` (each has its `rcuop/N`
or `rcuos/N` kthread), and whether those kthreads run on housekeeping CPUs only
(Documentation/admin-guide/kernel-per-CPU-kthreads.rst: "force these kthreads to
execute on some other CPU").  They read /proc/<pid>/comm and status only: /proc is
listed by name (`HostTree.names`), never entry by entry through `HostReader.listdir`,
which would read every file of /proc (kmsg blocks)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from hostc.audit.host import HostReader
from hostc.audit.observe import Expect, Look
from hostc.audit.seen import Seen, absent
from hostc.cpuset import CpuListError, CpuSet
from hostc.diagnostics import HostcError
from hostc.knowledge.cpus import RCU_OFFLOAD_KTHREADS
from hostc.topology.importers.chroot import TreeTooLarge


def _cpus(text: str) -> CpuSet | None:
    try:
        return CpuSet.parse(text)
    except (CpuListError, ValueError):
        return None


def _rcu_kthreads(host: HostReader) -> Iterator[tuple[str, str]]:
    """(pid, comm) of every RCU offload kthread, by PID.  Every process's name is read
    past the record (a capture would otherwise hold one file per process); the
    kthreads' own files are recorded, so a capture lists exactly them."""
    try:
        names = host.tree.names("proc") or []
    except OSError:
        return
    for pid in sorted((n for n in names if n.isdigit()), key=int):
        try:
            raw = host.tree.read(f"proc/{pid}/comm", limit=256, what="a process name")
        except TreeTooLarge:
            raise
        except (HostcError, OSError):
            continue  # the process ended
        comm = (raw or b"").decode("utf-8", "replace").strip()
        if comm.startswith(tuple(RCU_OFFLOAD_KTHREADS)) and host.text(f"/proc/{pid}/comm"):
            yield pid, comm


def rcu_offloaded(host: HostReader, e: Expect) -> Seen:
    """Every CPU the Plan offloads has its callback kthread (rcuop/N or rcuos/N);
    kernels that make them for every CPU show more, which is not judged."""
    found = CpuSet(
        int(comm.split("/", 1)[1])
        for _, comm in _rcu_kthreads(host)
        if comm.startswith(("rcuop/", "rcuos/")) and comm.split("/", 1)[1].isdigit()
    )
    if not found:
        return absent(
            "no rcuop/N or rcuos/N kthread here (no rcu_nocbs= in effect, or /proc unread)"
        )
    want = _cpus(e.expected) or CpuSet()
    missing = want - found
    return Seen(f"kthreads for CPUs {found}", not missing, f"none for {missing}" if missing else "")


def rcu_kthread_cpus(host: HostReader, e: Expect) -> Seen:
    """Every RCU offload kthread's affinity within the housekeeping CPUs."""
    allowed = _cpus(e.expected) or CpuSet()
    seen, off = 0, []
    for pid, comm in _rcu_kthreads(host):
        for line in (host.text(f"/proc/{pid}/status") or "").splitlines():
            name, _, value = line.partition(":")
            if name == "Cpus_allowed_list":
                cpus = _cpus(value.strip())
                seen += 1
                if cpus is None or not cpus <= allowed:
                    off.append(f"{comm} on {value.strip()}")
    if not seen:
        return absent("no RCU offload kthread here (rcu_nocbs= not in effect)")
    shown = "; ".join(off[:3]) + (f" and {len(off) - 3} more" if len(off) > 3 else "")
    return Seen(shown if off else f"{seen} kthreads on {e.expected}", not off)


OBSERVERS: dict[Look, Callable[[HostReader, Expect], Seen]] = {
    Look.RCU_OFFLOADED: rcu_offloaded,
    Look.RCU_KTHREAD_CPUS: rcu_kthread_cpus,
}
