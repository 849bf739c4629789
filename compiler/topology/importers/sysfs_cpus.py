"""The CPUs in sysfs: which exist, which are online, how they group into cores,
dies and packages, what kind each core is, and who made them (/proc/cpuinfo).

Only facts that stay put across reboots of the same hardware are recorded, so
two probes of one host give the same snapshot.
"""

from __future__ import annotations

import re

import attrs

from hostc.diagnostics import HostcError, file_error
from hostc.knowledge.vendor import cpu_vendor
from hostc.topology.importers.sysfs_reader import FILE_LIMIT, Reader, known, numbered
from hostc.topology.model import NO_DRIVER, LogicalCpu, known_cluster

CPU_DIR = "sys/devices/system/cpu"
HYPERVISOR = "hypervisor"
# /proc/cpuinfo lines that name the CPU (x86: vendor_id, model name; arm64: CPU
# implementer; POWER: cpu); the first of each is kept, the rest of the file never is.
_CPUINFO = re.compile(r"^(vendor_id|model name|CPU implementer|cpu)\s*:\s*(.*?)\s*$")


_FLAGS = re.compile(r"^flags\s*:(.*)$")


def _cpuinfo_only(text: str) -> str:
    """The first line of each identifying key; /proc/cpuinfo repeats them per CPU.  Of the
    x86 `flags` line only `hypervisor` is kept (a capture stores no more than probe reads)."""
    seen: set[str] = set()
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        m = _CPUINFO.match(line)
        if m and m.group(1) not in seen:
            seen.add(m.group(1))
            out.append(line)
        elif "flags" not in seen and (f := _FLAGS.match(line)):
            seen.add("flags")
            out.append(
                "flags\t\t: hypervisor\n" if HYPERVISOR in f.group(1).split() else "flags\t\t:\n"
            )
    return "".join(out)


def hypervisor_flag(r: Reader) -> bool | None:
    """Whether the CPU flags carry `hypervisor` (x86: CPUID leaf 1 ECX bit 31, set by
    hypervisors for their guests); None where /proc/cpuinfo has no flags line (arm64)."""
    text = r.text("proc/cpuinfo", keep=_cpuinfo_only, limit=FILE_LIMIT) or ""
    for line in text.splitlines():
        if m := _FLAGS.match(line):
            return HYPERVISOR in m.group(1).split()
    return None


def drivers(r: Reader, *, live: bool) -> tuple[str | None, str | None]:
    """(cpufreq, cpuidle) driver names; `none` where the kernel has none loaded.

    cpufreq: cpu0/cpufreq/scaling_driver exists only with a driver, while the
    cpu/cpufreq directory exists whenever the kernel is built with CONFIG_CPU_FREQ;
    cpuidle: cpu/cpuidle/current_driver itself says `none`.  Where the directories
    are missing too, a live host has neither (its kernel is built without them), and
    a capture of it says so in `hostc/<name>` (a tree without that file may just
    predate these facts, so it says nothing: None)."""
    freq = _driver(r, f"{CPU_DIR}/cpu0/cpufreq/scaling_driver")
    if freq is None and r.is_dir(f"{CPU_DIR}/cpufreq"):
        freq = NO_DRIVER
    idle = _driver(r, f"{CPU_DIR}/cpuidle/current_driver")
    return _absent(r, "cpufreq_driver", freq, live), _absent(r, "cpuidle_driver", idle, live)


def _driver(r: Reader, rel: str) -> str | None:
    text = r.text(rel)
    return text.strip() or None if text is not None else None


def _absent(r: Reader, name: str, found: str | None, live: bool) -> str | None:
    """`found`, or for a live host `none`, kept in the capture as `hostc/<name>`."""
    if found is not None:
        return found
    rel = f"hostc/{name}"
    if live:
        r.files[rel] = f"{NO_DRIVER}\n".encode()
        return NO_DRIVER
    return _driver(r, rel)


def read_cpus(r: Reader) -> tuple[list[LogicalCpu], list[str]]:
    """The CPUs, and ["smt"] when some online CPU names neither its siblings nor its core."""
    if not r.is_dir(CPU_DIR):
        hint = "probe the live host, or a directory or archive made by `hostc capture`"
        missing = file_error(r.where(CPU_DIR), "missing: not a Linux root with sysfs", hint=hint)
        raise HostcError([missing])
    lists = {n: r.cpulist(f"{CPU_DIR}/{n}") for n in ("online", "offline", "possible", "present")}
    online_list, offline_list = lists["online"], lists["offline"]
    # `possible` can reach far past the hardware (VMs say 0-239); present and the
    # cpuN directories are the CPUs that exist.
    ids = set(numbered(r, CPU_DIR, "cpu")) | set(lists["present"] or ()) | set(online_list or ())
    if not ids:
        raise HostcError([file_error(r.where(CPU_DIR), "lists no CPUs (no cpuN directories)")])
    kinds = _core_kinds(r, sorted(ids))
    cpus: list[LogicalCpu] = []
    core_ids: dict[int, tuple[int | None, int | None, int]] = {}
    smt_unknown = False
    for cpu in sorted(ids):
        d = f"{CPU_DIR}/cpu{cpu}"
        r.is_dir(d)  # marks it, so a capture keeps an offline CPU with no files
        flag = r.integer(f"{d}/online")
        if flag is not None and flag not in (0, 1):
            r.fail(f"{d}/online", f"expected 0 or 1, found {flag}")
        if flag is not None:
            online = flag == 1
        elif online_list is not None:
            online = cpu in online_list  # cpu0 usually has no online file
        else:
            online = offline_list is None or cpu not in offline_list
        if not online:
            cpus.append(LogicalCpu(cpu, online=False))
            continue
        t = f"{d}/topology"
        siblings = r.cpulist(f"{t}/thread_siblings_list")
        if siblings is None:
            siblings = r.cpulist(f"{t}/core_cpus_list")
        core_id = r.integer(f"{t}/core_id")
        package = known(r.integer(f"{t}/physical_package_id"))
        die = known(r.integer(f"{t}/die_id"))
        if core_id is not None and core_id >= 0:
            core_ids[cpu] = (package, die, core_id)
        core = min(siblings.ids | {cpu}) if siblings else None
        smt_unknown |= core is None and cpu not in core_ids
        cluster = known_cluster(r.integer(f"{t}/cluster_id"))
        kind = kinds.get(cpu)
        cpus.append(
            LogicalCpu(cpu, core=core, package=package, die=die, cluster=cluster, kind=kind)
        )
    # Without sibling lists (old kernels), threads that share a core id in one
    # package and die are one core; name it by its lowest thread, as sysfs would.
    lowest: dict[tuple[int | None, int | None, int], int] = {}
    for cpu, key in sorted(core_ids.items()):
        lowest.setdefault(key, cpu)
    cpus = [
        attrs.evolve(c, core=lowest[core_ids[c.id]])
        if c.online and c.core is None and c.id in core_ids
        else c
        for c in cpus
    ]
    return _global_dies(cpus), ["smt"] if smt_unknown else []


def _global_dies(cpus: list[LogicalCpu]) -> list[LogicalCpu]:
    """sysfs die_id counts within a package (die 0 of package 1 is not die 0 of package
    0); the snapshot's dies are machine-wide, so each (package, die) pair is numbered
    in order: two packages of one die each are dies 0 and 1."""
    pairs = sorted({(c.package if c.package is not None else -1, c.die) for c in cpus
                    if c.die is not None})  # fmt: skip
    number = {pair: i for i, pair in enumerate(pairs)}
    return [
        c
        if c.die is None
        else attrs.evolve(c, die=number[(c.package if c.package is not None else -1, c.die)])
        for c in cpus
    ]


def _core_kinds(r: Reader, ids: list[int]) -> dict[int, str]:
    """Core kinds matter to isolation: E-cores or little cores make poor housekeeping twins."""
    kinds: dict[int, str] = {}
    for pmu, kind in (("cpu_core", "IntelCore"), ("cpu_atom", "IntelAtom")):
        cpus = r.cpulist(f"sys/devices/{pmu}/cpus")
        kinds.update((c, kind) for c in cpus or ())
    if kinds:
        return kinds
    capacity = {c: v for c in ids if (v := r.integer(f"{CPU_DIR}/cpu{c}/cpu_capacity")) is not None}
    if len(set(capacity.values())) > 1:  # one value means a symmetric machine: no kinds
        kinds = {c: f"capacity-{v}" for c, v in capacity.items()}
    return kinds


def cpu_identity(r: Reader, arch: str | None) -> tuple[str | None, str | None]:
    """(vendor, model) from /proc/cpuinfo: the tuning knowledge is keyed on them."""
    text = r.text("proc/cpuinfo", keep=_cpuinfo_only, limit=FILE_LIMIT)
    found: dict[str, str] = {}
    for line in (text or "").splitlines():
        if m := _CPUINFO.match(line):
            found.setdefault(m.group(1), m.group(2))
    vendor = cpu_vendor(found.get("vendor_id")) or cpu_vendor(found.get("CPU implementer"))
    model = found.get("model name") or None
    if arch is not None and arch.startswith("ppc64"):
        vendor = vendor or "ibm"
        model = model or found.get("cpu") or None
    return vendor, model
