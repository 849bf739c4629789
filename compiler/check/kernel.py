"""Command line, sysctl and limit rules: safe values, no clashes, within the arch limit."""

from __future__ import annotations

import re
from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, error
from hostc.kernelargs import cmdline
from hostc.lower import kernel as lkernel
from hostc.plan import Plan
from hostc.spec import presets
from hostc.spec.model import HostSpec
from hostc.topology.model import Topology

# Characters that break the GRUB drop-in (sh) or get pasted unescaped into grub.cfg.
_UNSAFE = re.compile(r"[\"'$`\\\s;&|<>]")
_SYSCTL_KEY = re.compile(r"^[a-zA-Z0-9_\-]+([./][a-zA-Z0-9_\-*]+)+$")
NR_OPEN_MAX = 1073741816


def extra_args_safe(spec: HostSpec, topo: Topology) -> Iterator[Diagnostic]:
    seen: dict[str, int] = {}
    for i, arg in enumerate(spec.kernel.extra_args):
        path = f"kernel.extra_args[{i}]"
        key, sep, value = arg.partition("=")
        if not key or (sep and not value):
            yield error(path, f"{arg!r} has an empty key or value")
            continue
        if _UNSAFE.search(arg):
            yield error(
                path,
                f"{arg!r} contains a quote, space, $, backslash or shell character",
                hint="GRUB pastes arguments into grub.cfg unescaped; write them plainly",
            )
        if key in lkernel.OWNED:
            yield error(
                path,
                f"{key}= is derived by hostc from typed settings",
                hint="use [cpu], [hugepages] or [kernel] keys instead",
            )
        if key in seen:
            yield error(path, f"{key} is given twice (also kernel.extra_args[{seen[key]}])")
        seen.setdefault(key, i)


def sysctls_valid(spec: HostSpec, topo: Topology) -> Iterator[Diagnostic]:
    for key, value in spec.sysctl.items():
        path = f'sysctl."{key}"'
        if not _SYSCTL_KEY.match(key):
            yield error(path, f"{key!r} is not a sysctl name", hint="e.g. vm.swappiness")
        if isinstance(value, str) and (not value.strip() or "\n" in value or "#" in value):
            yield error(path, f"value {value!r} is empty or has a newline or #")


def limits_valid(spec: HostSpec, topo: Topology) -> Iterator[Diagnostic]:
    n = spec.limits.nofile
    if n is not None and not 1024 <= n <= NR_OPEN_MAX:
        yield error("limits.nofile", f"{n} is outside 1024..{NR_OPEN_MAX} (fs.nr_open's ceiling)")


def preset_excludes_known(spec: HostSpec, topo: Topology) -> Iterator[Diagnostic]:
    known = presets.preset_settings()
    for i, key in enumerate(spec.preset.exclude):
        if key not in known:
            yield error(
                f"preset.exclude[{i}]",
                f"{key!r} is not a preset setting",
                hint="preset keys: " + ", ".join(sorted(known)),
            )


def cmdline_fits(plan: Plan) -> Iterator[Diagnostic]:
    size = len(cmdline(plan))
    budget = plan.host.cmdline_budget
    if size > budget:
        limit = budget + lkernel.BOOTLOADER_RESERVE
        yield error(
            "kernel",
            f"the command line is {size} bytes; {plan.host.arch} allows "
            f"{limit} (COMMAND_LINE_SIZE) of which {lkernel.BOOTLOADER_RESERVE} are kept "
            f"for the bootloader's own arguments, leaving {budget}",
            hint=(
                "the snapshot does not say its arch, so the generic 512-byte limit applies; "
                "re-import with --arch x86_64 (or the right one)"
                if plan.host.arch not in lkernel.COMMAND_LINE_SIZE
                else "shorten kernel.extra_args or use fewer isolation mechanisms"
            ),
        )
