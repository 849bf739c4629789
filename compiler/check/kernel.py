"""Command line, sysctl and limit rules: safe values, no clashes, within the arch limit."""

from __future__ import annotations

from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, at, error, label
from hostc.knowledge.kernel import NR_OPEN_MAX
from hostc.plan.kernelargs import BOOTLOADER_RESERVE, OWNED, cmdline, kernel_args
from hostc.plan.model import Plan, RuntimeOwner
from hostc.provenance import SpecKey
from hostc.resolve import Resolved
from hostc.spec import presets, text

#: `kernelargs.OWNED` as the kernel compares names (dashes are underscores).
OWNED_NAMES = frozenset(text.kernel_param_name(k) for k in OWNED)


def extra_args_safe(r: Resolved) -> Iterator[Diagnostic]:
    """No argument hostc derives, none twice.  Each one's text is the converter's to
    refuse (`spec.text.KernelArgText`)."""
    spec = r.spec
    seen: dict[str, int] = {}
    for i, arg in enumerate(spec.kernel.extra_args):
        path = at("kernel", "extra_args", i)
        key = arg.partition("=")[0]
        name = text.kernel_param_name(key)  # `nohz-full` is `nohz_full` to the kernel
        if name in OWNED_NAMES:
            yield error(
                path,
                f"{key}= is derived by hostc from typed settings"
                + ("" if key == name else f" (the kernel reads it as {name})"),
                hint="use [cpu], [hugepages] or [kernel] keys instead",
            )
        if name in seen:
            yield error(path, f"{key} is given twice (also kernel.extra_args[{seen[name]}])")
        seen.setdefault(name, i)


def sysctls_tuned_writes(r: Resolved) -> Iterator[Diagnostic]:
    """A sysctl whose name has a dot inside a component (`net.ipv4.conf.eth0/1.rp_filter`,
    a VLAN's) is one TuneD cannot write.  Key syntax, values and two spellings of one
    key are the converter's to refuse (`spec.structure._sysctls`); keys arrive dotted."""
    spec = r.spec
    if spec.runtime.owner is not RuntimeOwner.TUNED:
        return
    for key in spec.sysctl:
        if "/" in key:
            yield error(
                at("sysctl", key),
                f"{key} has a dot inside a component, which TuneD cannot write: its sysctl "
                "plugin turns every '.' into '/' (no swap as in sysctl.d)",
                hint='keep runtime.owner = "systemd" for this key, or drop it',
            )


def limits_valid(r: Resolved) -> Iterator[Diagnostic]:
    spec = r.spec
    n = spec.limits.nofile
    if n is not None and n > NR_OPEN_MAX:
        yield error(
            at("limits", "nofile"), f"{n} is too large: fs.nr_open's ceiling is {NR_OPEN_MAX}"
        )
    elif n is not None and n < 1024:
        yield error(
            at("limits", "nofile"), f"{n} is too small: at least 1024 (the kernel's default)"
        )


def preset_excludes_known(r: Resolved) -> Iterator[Diagnostic]:
    spec = r.spec
    known = presets.preset_settings()
    for i, key in enumerate(spec.preset.exclude):
        if key not in known:
            yield error(
                at("preset", "exclude", i),
                f"{text.shown(key)} is not a preset setting",
                hint="preset keys: " + ", ".join(sorted(known)),
            )


def extra_args_not_derived(plan: Plan) -> Iterator[Diagnostic]:
    """No extra argument names (as the kernel compares names) one hostc derived: the
    kernel would take the last one, so the Plan's reason would be false."""
    extra = {a.key for a in plan.extra_args}
    derived = {text.kernel_param_name(a.key) for a in kernel_args(plan) if a.key not in extra}
    for a in plan.extra_args:
        if text.kernel_param_name(a.key) in derived:
            src = a.reason.source
            yield error(
                at(*src.path) if isinstance(src, SpecKey) else label(str(src)),
                f"{a.key} redefines {text.kernel_param_name(a.key)}, which hostc derives",
                hint="use [cpu], [hugepages], [kernel], [cpufreq] or [runtime] keys instead",
            )


def cmdline_fits(plan: Plan) -> Iterator[Diagnostic]:
    size = len(cmdline(plan))
    budget = plan.host.cmdline_budget
    if size > budget:
        limit = budget + BOOTLOADER_RESERVE
        yield error(
            at("kernel"),
            f"the command line is {size} bytes; {plan.host.arch} allows "
            f"{limit} (COMMAND_LINE_SIZE) of which {BOOTLOADER_RESERVE} are kept "
            f"for the bootloader's own arguments, leaving {budget}",
            hint=(
                "the snapshot does not say its arch, so the generic 512-byte limit applies; "
                "re-import with --arch x86_64 (or the right one)"
                if not plan.host.arch.command_line_size_known
                else "shorten kernel.extra_args or use fewer isolation mechanisms"
            ),
        )
