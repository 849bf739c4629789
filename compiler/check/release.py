"""Rules that need the target's kernel release: what this kernel has, ignores or rejects.

Facts come from `hostc.knowledge.kernel` (one table, a source per row) and, for a
sysctl, from its row in the settings table.
"""

from __future__ import annotations

from collections.abc import Iterator

from hostc import settings
from hostc.diagnostics import Diagnostic, KeyPath, at, error, warning
from hostc.knowledge import kernel as kernelfacts
from hostc.resolve import Resolved
from hostc.spec.model import HostSpec, IsolateMode


def _fmt(r: kernelfacts.Release) -> str:
    return f"{r[0]}.{r[1]}"


def sysctls_exist(r: Resolved) -> Iterator[Diagnostic]:
    spec, release = r.spec, r.host.kernel
    if release is None:
        return
    for key in spec.sysctl:
        fact = settings.sysctl(key)  # its row: what the kernel says about it
        if fact.exists(release):
            continue
        when = (
            f"left /proc/sys in Linux {_fmt(fact.removed)}"
            if fact.removed is not None and release >= fact.removed
            else f"arrived in Linux {_fmt(fact.added)}"
            if fact.added is not None
            else "is not there"
        )
        yield warning(
            at("sysctl", key),
            f"{key} {when}; on kernel {_fmt(release)} `sysctl --system` logs "
            "'cannot stat' and the setting does nothing",
            hint=fact.source,
        )


def nofile_within_nr_open(r: Resolved) -> Iterator[Diagnostic]:
    spec = r.spec
    n = spec.limits.nofile
    if n is None:
        return
    if n > kernelfacts.NR_OPEN_MAX:
        return  # limits_valid reports the range
    raw = spec.sysctl.get("fs.nr_open")
    if isinstance(raw, int) and raw < n:
        yield error(
            at("sysctl", "fs.nr_open"),
            f"fs.nr_open {raw} is below limits.nofile {n}: setrlimit fails with EPERM and "
            "pam_limits refuses ssh, sudo and login",
            hint=f"raise fs.nr_open to at least {n}, or drop it and hostc raises it",
        )


def isolcpus_flags_sound(r: Resolved) -> Iterator[Diagnostic]:
    spec = r.spec
    if spec.cpu.isolation is IsolateMode.NONE:
        return
    flags = spec.cpu.isolcpus_flags
    if "isolcpus" not in r.mechanisms:
        return
    release = r.host.kernel
    if flags is not None and not flags:
        yield error(
            at("cpu", "isolcpus_flags"),
            "an empty flag list makes a bare isolcpus=, which the kernel reads as `domain`",
            hint='write ["domain"] if that is meant, or leave the key out for managed_irq',
        )
        return
    names = r.isolcpus_flags
    if "domain" in names:
        yield warning(
            at("cpu", "isolcpus_flags"),
            "`domain` removes the isolated CPUs from load balancing: every thread of a "
            "server bound to a range stays on the CPU it was forked on",
            hint="pin every thread to a single CPU, or drop `domain` (cpusets keep "
            "balancing inside the isolated set)",
        )
    if "managed_irq" not in names:
        return
    since = kernelfacts.MANAGED_IRQ_SINCE
    if release is None:
        yield warning(
            at("cpu", "isolcpus_flags") if flags is not None else at("cpu", "isolate"),
            f"isolcpus=managed_irq needs Linux ≥ {_fmt(since)} and the kernel is unknown; "
            "an older kernel ignores the whole parameter",
            hint='set host.kernel = "6.8" (the release the host boots)',
        )
    elif release < since and flags is not None:
        yield error(
            at("cpu", "isolcpus_flags"),
            f"kernel {_fmt(release)} predates isolcpus' managed_irq flag ({_fmt(since)}) and "
            "would ignore the whole isolcpus= parameter",
            hint="drop managed_irq, or boot a newer kernel",
        )
    elif release < since:
        yield warning(
            at("cpu", "isolate"),
            f"kernel {_fmt(release)} predates isolcpus' managed_irq flag ({_fmt(since)}): "
            "isolcpus= is left out (a bare one would mean `domain`); the other isolation "
            "mechanisms still apply",
        )


def _mechanism_path(spec: HostSpec, mech: str) -> KeyPath:
    """The key that asked for a mechanism: nohz_full by default comes from busy_poll."""
    if spec.cpu.mechanisms is not None:
        return at("cpu", "mechanisms")
    if mech == "nohz_full":
        first = next(i for i, w in enumerate(spec.workload) if w.busy_poll)
        return spec.workload_at(first).key("busy_poll")
    return at("cpu", "isolate")


def kernel_built_for_isolation(r: Resolved) -> Iterator[Diagnostic]:
    """A mechanism the kernel was built without is ignored silently at boot: refuse it."""
    spec, topo = r.spec, r.topo
    if spec.cpu.isolation is IsolateMode.NONE or not topo.kernel_config:
        return
    release = topo.kernel or "the snapshot's kernel"
    for mech in r.mechanisms:
        option = kernelfacts.KERNEL_CONFIG.get(str(mech))
        if option is None or option not in topo.kernel_config:
            continue
        if topo.kernel_config[option] != "y":
            yield error(
                _mechanism_path(spec, str(mech)),
                f"{release} is built without {option}, so the kernel ignores {mech}=",
                hint=f"leave {mech} out of cpu.mechanisms, or boot a kernel built with it",
            )
