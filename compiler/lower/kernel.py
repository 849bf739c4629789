"""Kernel command line: isolation, hugepages, THP, C-states, extra arguments, in one order.

The order is fixed (isolation, hugepages, memory, power, extras) so golden
files stay stable, and `hugepagesz=` always precedes its `hugepages=`.
Parameters with an empty value are never produced (anchors E9).
"""

from __future__ import annotations

from hostc.plan import CpuPartition, HugepagePool, KernelArg, Reason
from hostc.spec import presets
from hostc.spec.model import HostSpec, Mechanism

#: COMMAND_LINE_SIZE per arch (arch/*/include/asm/setup.h); unknown → asm-generic.
COMMAND_LINE_SIZE = {
    "x86_64": 2048,
    "aarch64": 2048,
    "arm64": 2048,
    "ppc64le": 2048,
    "ppc64": 2048,
    "s390x": 4096,
    "riscv64": 1024,
}
GENERIC_COMMAND_LINE_SIZE = 512
#: Bytes left for the bootloader's own BOOT_IMAGE=… root=… ro and the distro's arguments.
BOOTLOADER_RESERVE = 256

#: Keys hostc derives from typed settings; `kernel.extra_args` may not set them.
OWNED = (
    "isolcpus",
    "nohz_full",
    "rcu_nocbs",
    "irqaffinity",
    "hugepagesz",
    "hugepages",
    "default_hugepagesz",
    "transparent_hugepage",
    "intel_idle.max_cstate",
    "processor.max_cstate",
)

MECHANISMS_DEFAULT = (
    Mechanism.ISOLCPUS,
    Mechanism.NOHZ_FULL,
    Mechanism.RCU_NOCBS,
    Mechanism.IRQAFFINITY,
)


def budget(arch: str) -> int:
    return COMMAND_LINE_SIZE.get(arch, GENERIC_COMMAND_LINE_SIZE) - BOOTLOADER_RESERVE


def mechanisms(spec: HostSpec) -> tuple[Mechanism, ...]:
    return tuple(spec.cpu.mechanisms) if spec.cpu.mechanisms is not None else MECHANISMS_DEFAULT


def is_x86(arch: str) -> bool:
    return arch in ("x86_64", "i686", "amd64")


def _overrides(spec: HostSpec) -> list[presets.Override]:
    out = []
    if spec.kernel.transparent_hugepage is not None:
        out.append(
            presets.Override(
                "transparent_hugepage",
                spec.kernel.transparent_hugepage.value,
                "kernel.transparent_hugepage",
            )
        )
    if spec.kernel.limit_cstates is not None:
        value = "1" if spec.kernel.limit_cstates else None
        out += [presets.Override(k, value, "kernel.limit_cstates") for k in presets.CSTATE_KEYS]
    return out


def kernel_args(
    spec: HostSpec, arch: str, part: CpuPartition, pools: list[HugepagePool]
) -> list[KernelArg]:
    out: list[KernelArg] = []
    mech = mechanisms(spec)
    mech_src = "cpu.mechanisms" if spec.cpu.mechanisms is not None else "cpu.isolate"
    if part.isolated:
        iso = str(part.isolated)
        if Mechanism.ISOLCPUS in mech:
            flags = ",".join(f.value for f in spec.cpu.isolcpus_flags)
            out.append(
                KernelArg(
                    "isolcpus",
                    f"{flags},{iso}" if flags else iso,
                    Reason(mech_src, "keep the scheduler's load balancing off the isolated CPUs"),
                )
            )
        if Mechanism.NOHZ_FULL in mech:
            out.append(
                KernelArg(
                    "nohz_full",
                    iso,
                    Reason(mech_src, "no timer tick on an isolated CPU running a single thread"),
                )
            )
        if Mechanism.RCU_NOCBS in mech:
            out.append(
                KernelArg(
                    "rcu_nocbs",
                    iso,
                    Reason(mech_src, "RCU callbacks run on housekeeping CPUs, not isolated ones"),
                )
            )
        if Mechanism.IRQAFFINITY in mech:
            out.append(
                KernelArg(
                    "irqaffinity",
                    str(part.housekeeping),
                    Reason(mech_src, "default IRQ affinity: the housekeeping CPUs"),
                )
            )
    if pools:
        hp = spec.hugepages
        assert hp is not None
        default = (hp.default_size or hp.size).upper()
        src = "hugepages.default_size" if hp.default_size else "hugepages.size"
        out.append(
            KernelArg(
                "default_hugepagesz",
                default,
                Reason(src, "hugetlbfs mounts and MAP_HUGETLB use this size unless told otherwise"),
            )
        )
        for pool in pools:
            if not pool.per_node:
                continue
            out.append(
                KernelArg(
                    "hugepagesz",
                    pool.size,
                    Reason("hugepages.size", "the pool's page size; must precede its hugepages="),
                )
            )
            value = (
                ",".join(f"{n}:{c}" for n, c in pool.per_node)
                if pool.node_form
                else str(pool.total)
            )
            out.append(KernelArg("hugepages", value, pool.reason))
    for r in presets.merge("kernel", spec.host.role.value, _overrides(spec), spec.preset.exclude):
        if r.key in presets.CSTATE_KEYS and not is_x86(arch):
            continue
        out.append(KernelArg(r.key, r.value, r.reason))
    for i, arg in enumerate(spec.kernel.extra_args):
        key, sep, value = arg.partition("=")
        out.append(
            KernelArg(
                key,
                value if sep else None,
                Reason(f"kernel.extra_args[{i}]", "given verbatim by the spec"),
            )
        )
    return out
