"""Every setting of a Plan by the name `hostc plan` gives it, with its reason, how an
artifact line spells it, and where a host shows it.

The spellings are one function per kind of setting: a sysctl key before `=`, a kernel
argument as a whole command-line token, a limit by its pam_limits item or systemd
directive, a workload by its unit's placement directives.  Comment lines never count:
they carry reasons, not values.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from hostc.knowledge.kernel import APPLIED_LIVE
from hostc.plan.kernelargs import kernel_args
from hostc.plan.model import Plan, Reason
from hostc.record import Record
from hostc.settings import SETTINGS, sysctl
from hostc.settings.model import Cmdline, ProcLimit, SysctlKey, Sysfs

#: (artifact path, line) → whether the line carries the setting
Carrier = Callable[[str, str], bool]


@attrs.frozen(repr=False, eq=False)
class CatalogEntry(Record):
    name: str
    value: str
    reason: Reason
    when: str
    carries: Carrier = attrs.field(eq=False, repr=False)
    observe: tuple[str, ...] = ()  # where a host shows it, with the command that reads it


def _token(word: str, before: str = r"^|[\s\"'=}]", after: str = r"[=\s\"',]|$") -> Carrier:
    pattern = re.compile(rf"(?:{before}){re.escape(word)}(?:{after})")
    return lambda _path, line: pattern.search(line) is not None


def _sysctl(key: str) -> Carrier:
    pattern = re.compile(rf"(?:^|[\s\"']){re.escape(key)}\s*=")
    return lambda _path, line: pattern.search(line) is not None


def _any(*carriers: Carrier) -> Carrier:
    return lambda path, line: any(c(path, line) for c in carriers)


#: kernel arguments a host also shows outside /proc/cmdline.  Sources:
#: Documentation/ABI/testing/sysfs-devices-system-cpu (`isolated`, `nohz_full`, the
#: latter with CONFIG_NO_HZ_FULL); Documentation/admin-guide/mm/transhuge.rst (`enabled`).
#: `isolated` is every possible CPU outside housekeeping_cpumask(HK_TYPE_DOMAIN)
#: (drivers/base/cpu.c, print_cpus_isolated): only isolcpus= with the `domain` flag (or
#: no flags, which means domain) fills it, so `isolated_file` decides per host.
ARG_FILES = {
    "nohz_full": "/sys/devices/system/cpu/nohz_full",
    **{  # the table's kernel arguments that a host also shows in a file
        arg.arg: files[0].path
        for s in SETTINGS
        for arg in s.observe
        if isinstance(arg, Cmdline) and (files := [o for o in s.observe if isinstance(o, Sysfs)])
    },
}
#: other spellings of a kernel argument's setting: TuneD's [vm] option (tuned.conf(5))
ARG_ALIASES = {"transparent_hugepage": ("transparent_hugepages",)}
LIMIT_FIELDS = {s.name: o.field for s in SETTINGS for o in s.observe if isinstance(o, ProcLimit)}


ISOLATED_FILE = "/sys/devices/system/cpu/isolated"


def sysctl_path(key: str) -> str:
    """Where a host shows sysctl `key`, from its row."""
    return next(o.path for o in sysctl(key).observe if isinstance(o, SysctlKey))


def isolated_file(plan: Plan) -> str:
    """Where a host shows the isolcpus set, or why it does not (no `domain` flag)."""
    iso = plan.isolation_by("isolcpus")
    if iso is not None and (not iso.flags or "domain" in iso.flags):
        return ISOLATED_FILE
    return f"not {ISOLATED_FILE}: it lists only CPUs isolated with the `domain` flag"


def kernel(plan: Plan) -> list[CatalogEntry]:
    out = []
    for a in kernel_args(plan):
        where = ["/proc/cmdline (cat /proc/cmdline)"]
        if a.key in ARG_FILES:
            where.append(ARG_FILES[a.key])
        if a.key == "isolcpus":
            where.append(isolated_file(plan))
        if a.key == "hugepages":
            where += [
                f"/sys/kernel/mm/hugepages/hugepages-{p.size_kib}kB/nr_hugepages"
                for p in plan.hugepages
                if p.per_node
            ]
        value = "" if a.value is None else a.value
        # with a value, only `key=` is the argument (a bare word may be a list of keys,
        # as the GRUB drop-in's duplicate-key loop has)
        after = r"=" if a.value is not None else r"[\s\"',]|$"
        words = [_token(k, after=after) for k in (a.key, *ARG_ALIASES.get(a.key, ()))]
        if a.key in APPLIED_LIVE:  # its file written live too (hostc-tuning, TuneD's [sysfs])
            words.append(_token(APPLIED_LIVE[a.key], before=r"^|\s", after=r"[=\s]|$"))
        out.append(CatalogEntry(a.key, value, a.reason, "boot", _any(*words), tuple(where)))
    return out


def sysctls(plan: Plan) -> list[CatalogEntry]:
    return [
        CatalogEntry(
            s.key,
            s.value,
            s.reason,
            str(s.when),
            _sysctl(s.key),
            (f"{sysctl_path(s.key)} (sysctl -n {s.key})",),
        )
        for s in plan.sysctls
    ]


def limits(plan: Plan) -> list[CatalogEntry]:
    return [
        CatalogEntry(
            x.item,
            str(x.value),
            x.reason,
            str(x.when),
            _any(_token(x.item, r"\s", r"\s|$"), _token(f"Limit{x.item.upper()}", r"^|Default")),
            (f"/proc/<pid>/limits ({LIMIT_FIELDS.get(x.item, x.item)}) of a session or service",),
        )
        for x in plan.limits
    ]


def workloads(plan: Plan) -> list[CatalogEntry]:
    out = []
    words = ("CPUAffinity=", "NUMAPolicy=", "NUMAMask=", "Environment=")
    for w in plan.workloads:
        unit = w.unit or f"{w.name}.service"

        def carries(path: str, line: str, unit: str = unit) -> bool:
            return f"/{unit}.d/" in path and line.startswith(words)

        out.append(
            CatalogEntry(
                f"workload.{w.name}",
                f"cpus {w.cpus} memory node(s) {','.join(map(str, w.nodes))}",
                w.reason,
                str(w.when),
                carries,
                (
                    f"systemctl show -p CPUAffinity -p NUMAMask {unit}",
                    f"/proc/<MainPID of {unit}>/status (Cpus_allowed_list)",
                ),
            )
        )
    return out


def partition(plan: Plan) -> list[CatalogEntry]:
    p = plan.partition

    def manager(path: str, line: str) -> bool:
        return "/system.conf.d/" in path and line.startswith("CPUAffinity=")

    def slices(path: str, line: str) -> bool:
        """system.slice's and user.slice's cpusets, PID 1 put back by hostc-tuning
        (kernels before 6.2: `Plan.slice_cpusets`)."""
        if path.endswith(".slice.d/90-hostc.conf"):
            return line == f"AllowedCPUs={p.housekeeping}"
        return path.endswith("/hostc-tuning") and line.startswith("elif taskset ")

    return [
        CatalogEntry(
            "housekeeping",
            str(p.housekeeping),
            p.housekeeping_reason,
            "boot",
            _any(manager, slices, _token("irqaffinity")),
            (
                "systemctl show -p CPUAffinity (the service manager's CPUs)",
                "/proc/<MainPID of systemd-journald.service>/status (Cpus_allowed_list)",
            ),
        ),
        CatalogEntry(
            "isolated",
            str(p.isolated),
            p.isolated_reason,
            "boot",
            _any(*(_token(m.mechanism) for m in plan.isolation if m.mechanism != "irqaffinity")),
            (isolated_file(plan), "/sys/devices/system/cpu/nohz_full"),
        ),
    ]
