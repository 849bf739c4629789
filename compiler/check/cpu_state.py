"""Rules for the CPUs' runtime state the spec asks for: CPUs taken offline, the
frequency floor, and real-time threads.  One function per rule."""

from __future__ import annotations

from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, at, error
from hostc.knowledge import cpus as cpufacts
from hostc.knowledge.vendor import Vendor
from hostc.resolve import Resolved, offline
from hostc.spec.model import IsolateMode
from hostc.topology.model import NO_DRIVER
from hostc.vocab import PstateMode


def offline_sound(r: Resolved) -> Iterator[Diagnostic]:
    """`cpu.offline` against the snapshot as captured (`hostc.resolve.offline`)."""
    yield from offline.problems(r.spec, r.snapshot or r.topo)


def min_perf_pct_taken(r: Resolved) -> Iterator[Diagnostic]:
    """A frequency floor only where intel_pstate (active or passive) will show it:
    anything else would be a floor nobody applies."""
    spec, topo = r.spec, r.snapshot or r.topo
    pct = spec.cpufreq.min_perf_pct
    if pct is None:
        return
    path = at("cpufreq", "min_perf_pct")
    if not 1 <= pct <= 100:
        yield error(path, f"{pct} is no percentage of the highest turbo P-state (1 to 100)")
        return
    vendor = r.host.cpu_vendor
    if not r.host.arch.is_x86 or vendor not in (None, Vendor.INTEL):
        yield error(
            path,
            f"min_perf_pct is intel_pstate's, an Intel x86 driver; this host is {topo.arch} "
            f"with CPU vendor {topo.cpu_vendor or 'unknown'}",
            hint="leave cpufreq.min_perf_pct out on this host",
        )
        return
    mode = spec.cpufreq.pstate
    if mode is PstateMode.DISABLE:
        yield error(
            path,
            'cpufreq.pstate = "disable" hands the CPUs to acpi-cpufreq, which has no min_perf_pct',
            hint="drop one of the two",
        )
        return
    if cpufacts.PER_CPU_PERF_LIMITS in spec.kernel.extra_args:
        yield error(
            path,
            f"{cpufacts.PER_CPU_PERF_LIMITS} in kernel.extra_args hides min_perf_pct "
            "(Documentation/admin-guide/pm/intel_pstate.rst)",
            hint="drop one of the two",
        )
        return
    driver = topo.cpufreq_driver
    if driver is None or driver in cpufacts.INTEL_PSTATE_DRIVERS:
        return
    if mode in (PstateMode.ACTIVE, PstateMode.PASSIVE):
        return  # the command line asks for intel_pstate at the next boot
    what = "no cpufreq driver" if driver == NO_DRIVER else f"cpufreq driver {driver}"
    yield error(
        path,
        f"the snapshot's CPUs run {what}, not intel_pstate: /sys/devices/system/cpu/"
        "intel_pstate/min_perf_pct does not exist there, so the floor would apply nowhere",
        hint='set cpufreq.pstate = "active" (or "passive") where the CPU supports '
        "intel_pstate, or leave min_perf_pct out",
    )


def realtime_isolated(r: Resolved) -> Iterator[Diagnostic]:
    """The real-time layer lifts RT throttling; a runaway real-time thread then owns its
    CPU for good, which only an isolated CPU can afford."""
    spec = r.spec
    if spec.cpu.realtime and spec.cpu.isolation is IsolateMode.NONE:
        yield error(
            at("cpu", "realtime"),
            "real-time threads need isolated CPUs: the realtime layer turns RT throttling "
            "off (kernel.sched_rt_runtime_us = -1), and a real-time thread that never "
            "yields would then starve the kernel's own work on a housekeeping CPU",
            hint='isolate the CPUs the real-time threads run on (cpu.isolate = "workload", '
            '"rest" or a cpulist)',
        )
