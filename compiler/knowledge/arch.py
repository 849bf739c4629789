"""Machine architectures and what hostc knows about each (mkosi's `Architecture`).

A snapshot names its architecture as `uname -m` (or Debian and hwloc) spell it, an open
set: `Arch.from_uname` maps each spelling hostc knows to its member and anything else to
`OTHER`, so a fact about an architecture is one row here, read off the typed value
(`Arch.X86_64.command_line_size`) instead of a string compared in four modules.
"""

from __future__ import annotations

import enum

from hostc.knowledge.table import Table


class Arch(enum.StrEnum):
    """One spelling of a machine architecture; several spellings may be one machine."""

    X86_64 = "x86_64"
    AMD64 = "amd64"  # Debian's and hwloc's name for x86_64
    I686 = "i686"
    I386 = "i386"
    AARCH64 = "aarch64"
    ARM64 = "arm64"  # Debian's and hwloc's name for aarch64
    PPC64LE = "ppc64le"
    PPC64 = "ppc64"
    S390X = "s390x"
    RISCV64 = "riscv64"
    UNKNOWN = "unknown"  # the source does not say
    OTHER = "other"  # a name hostc has no facts for

    @staticmethod
    def from_uname(name: str) -> Arch:
        """The member for a `uname -m` spelling; OTHER for a name hostc does not know."""
        try:
            return Arch(name)
        except ValueError:
            return Arch.OTHER

    @property
    def is_x86(self) -> bool:
        return self in X86_FAMILY

    @property
    def command_line_size(self) -> int:
        """The kernel's COMMAND_LINE_SIZE (asm-generic's 512 where hostc has no row)."""
        return COMMAND_LINE_SIZE.get(self, GENERIC_COMMAND_LINE_SIZE)

    @property
    def command_line_size_known(self) -> bool:
        return self in COMMAND_LINE_SIZE

    @property
    def usual_hugepage_sizes(self) -> tuple[str, ...]:
        """The hugepage sizes the MMU offers with its usual base page (empty: unknown)."""
        return HUGEPAGE_SIZES.get(self, ((), ()))[0]


#: The names an x86 machine goes by (uname, Debian, hwloc).
X86_FAMILY: Table[Arch, bool] = Table.members(
    (Arch.X86_64, Arch.I686, Arch.I386, Arch.AMD64),
    "uname(1) -m on x86 (x86_64, i686, i386); Debian's dpkg architecture and hwloc's "
    "Architecture info (amd64)",
)

_SETUP_H = "arch/{}/include/asm/setup.h: #define COMMAND_LINE_SIZE {}"

#: COMMAND_LINE_SIZE per arch; an arch not listed gets include/uapi/asm-generic/setup.h's.
#: (i686/i386/amd64 keep the generic value: hostc has always budgeted them so.)
COMMAND_LINE_SIZE: Table[Arch, int] = Table(
    {
        Arch.X86_64: (2048, _SETUP_H.format("x86", 2048)),
        Arch.AARCH64: (2048, "arch/arm64/include/uapi/asm/setup.h: COMMAND_LINE_SIZE 2048"),
        Arch.ARM64: (2048, "arch/arm64/include/uapi/asm/setup.h: COMMAND_LINE_SIZE 2048"),
        Arch.PPC64LE: (2048, _SETUP_H.format("powerpc", 2048)),
        Arch.PPC64: (2048, _SETUP_H.format("powerpc", 2048)),
        Arch.S390X: (4096, _SETUP_H.format("s390", 4096)),
        Arch.RISCV64: (1024, "arch/riscv/include/uapi/asm/setup.h: COMMAND_LINE_SIZE 1024"),
    }
)
GENERIC_COMMAND_LINE_SIZE = 512

#: The cpuidle state index of the first halt-like state (C1 on x86, WFI on arm64): a
#: limit of "C-state N" is cpuidle state N - 1 + this.  x86: state 0 is POLL
#: (drivers/cpuidle/poll_state.c; include/linux/cpuidle.h CPUIDLE_DRIVER_STATE_START 1
#: with CONFIG_ARCH_HAS_CPU_RELAX, which intel_idle and acpi_idle start at), state 1 is C1.
#: arm64: state 0 is WFI (ARM_CPUIDLE_WFI_STATE; drivers/cpuidle/dt_idle_states.c fills
#: the states after it), so state 1 is already a retention or power-down state.
_ARM_WFI = "arm64 cpuidle drivers (cpuidle-arm.c, cpuidle-psci.c): state 0 is WFI"
FIRST_HALT_STATE: Table[Arch, int] = Table(
    {
        Arch.X86_64: (1, "x86: cpuidle state 0 is POLL, state 1 is C1 (poll_state.c)"),
        Arch.AMD64: (1, "x86: cpuidle state 0 is POLL, state 1 is C1 (poll_state.c)"),
        Arch.AARCH64: (0, _ARM_WFI),
        Arch.ARM64: (0, _ARM_WFI),
    }
)

_ARM64_HUGE = (
    "Documentation/arch/arm64/hugetlbpage.rst (CONT PTE, PMD, CONT PMD, PUD): 4K granule "
    "64K/2M/32M/1G; 64K granule 2M/512M/16G (2M listed with the 4K sizes), no 1G"
)
_PPC_HUGE = "Documentation/admin-guide/mm/hugetlbpage.rst; powerpc radix MMU 2M/1G, hash 16M/16G"

#: Hugepage sizes per arch: (with the usual base page, with other base pages).
HUGEPAGE_SIZES: Table[Arch, tuple[tuple[str, ...], tuple[str, ...]]] = Table(
    {
        Arch.X86_64: ((("2M", "1G"), ()), "x86 PMD 2M and PUD 1G pages (CPUID pdpe1gb)"),
        Arch.AARCH64: ((("64K", "2M", "32M", "1G"), ("512M", "16G")), _ARM64_HUGE),
        Arch.ARM64: ((("64K", "2M", "32M", "1G"), ("512M", "16G")), _ARM64_HUGE),
        Arch.PPC64LE: ((("2M", "1G", "16M", "16G"), ()), _PPC_HUGE),
        Arch.PPC64: ((("16M", "16G"), ()), _PPC_HUGE + " (big-endian: hash MMU)"),
        Arch.S390X: ((("1M", "2G"), ()), "s390 EDAT-1 1M segments and EDAT-2 2G regions"),
        Arch.RISCV64: ((("2M", "1G"), ()), "RISC-V Sv39/Sv48 megapages 2M and gigapages 1G"),
    }
)

#: s390x's sizes are a hint only: 1M also shows up in POWER hwloc exports where it is
#: no pool (tests/test_import_hwloc.py, coral-ea), and hostc has read no s390x snapshot.
_HINT_ONLY = frozenset({Arch.S390X})
_KNOWN_SIZES = frozenset(
    s
    for arch, (usual, other) in HUGEPAGE_SIZES.items()
    if arch not in _HINT_ONLY
    for s in usual + other
)


def known_hugepage_size(size: str) -> bool:
    """Whether a snapshot may list `size`, whatever its arch and base page."""
    return size in _KNOWN_SIZES
