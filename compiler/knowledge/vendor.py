"""CPU vendors: hostc's names for what hwloc, lscpu and /proc/cpuinfo report."""

from __future__ import annotations

import enum

from hostc.knowledge.table import Table


class Vendor(enum.StrEnum):
    """A CPU vendor as hostc names it: the x86 vendors whose settings differ (C-state
    driver, P-state driver, IOMMU), the arm64 implementers, and OTHER for a name hostc
    has no row for.  A snapshot spells vendors as an open set (`cpu_vendor` below keeps
    an unknown name as it is); the Plan holds this closed set (`Vendor.of`)."""

    INTEL = "intel"
    AMD = "amd"
    HYGON = "hygon"
    ARM = "arm"
    BROADCOM = "broadcom"
    CAVIUM = "cavium"
    FUJITSU = "fujitsu"
    HISILICON = "hisilicon"
    NVIDIA = "nvidia"
    APM = "apm"
    QUALCOMM = "qualcomm"
    APPLE = "apple"
    MICROSOFT = "microsoft"
    AMPERE = "ampere"
    OTHER = "other"  # a name hostc has no facts for

    @staticmethod
    def of(name: str | None) -> Vendor | None:
        """The member for a snapshot's (normalised) vendor; OTHER for a name hostc does
        not know; None where the snapshot does not say."""
        if name is None:
            return None
        try:
            return Vendor(name)
        except ValueError:
            return Vendor.OTHER


_CPUID = "x86 CPUID leaf 0 vendor string (Intel SDM vol. 2A CPUID; AMD APM vol. 3)"

#: x86 CPUID vendor strings → hostc's names.
X86_VENDORS: Table[str, str] = Table(
    {
        "genuineintel": (Vendor.INTEL.value, _CPUID),
        "authenticamd": (Vendor.AMD.value, _CPUID),
        "hygongenuine": (Vendor.HYGON.value, _CPUID + "; arch/x86/kernel/cpu/hygon.c"),
    }
)

_MIDR = "arm64 MIDR_EL1 implementer codes: arch/arm64/include/asm/cputype.h ARM_CPU_IMP_*"
_LSCPU = "util-linux sys-utils/lscpu-arm.c arm_ids[] implementer names"

#: arm64 MIDR implementer codes, and the names lscpu prints for them → hostc's names.
ARM_IMPLEMENTERS: Table[str, str] = Table(
    {
        **{
            code: (name, _MIDR)
            for code, name in (
                ("0x41", "arm"),
                ("0x42", "broadcom"),
                ("0x43", "cavium"),
                ("0x46", "fujitsu"),
                ("0x48", "hisilicon"),
                ("0x4e", "nvidia"),
                ("0x50", "apm"),
                ("0x51", "qualcomm"),
                ("0x61", "apple"),
                ("0x6d", "microsoft"),
                ("0xc0", "ampere"),
            )
        },
        **{
            name: (name, _LSCPU)
            for name in (
                "arm",
                "ampere",
                "nvidia",
                "cavium",
                "hisilicon",
                "fujitsu",
                "qualcomm",
                "apm",
                "apple",
                "broadcom",
                "microsoft",
            )
        },
    }
)

#: Model-name prefixes that spell out the vendor (some hwloc exports carry CPUModel only).
MODEL_PREFIXES: Table[str, str] = Table(
    {
        **{
            p: (Vendor.INTEL.value, "/proc/cpuinfo `model name` of Intel parts")
            for p in ("Intel", "13th Gen Intel", "12th Gen Intel", "Genuine Intel")
        },
        "AMD ": (Vendor.AMD.value, "/proc/cpuinfo `model name` of AMD parts (AMD EPYC …)"),
        "Hygon ": (Vendor.HYGON.value, "/proc/cpuinfo `model name` of Hygon parts (Hygon C86 …)"),
    }
)


def cpu_vendor(raw: str | None) -> str | None:
    """Normalise a vendor as hwloc, lscpu or /proc/cpuinfo spell it (GenuineIntel → intel)."""
    if raw is None or not raw.strip():
        return None
    key = raw.strip().lower()
    return X86_VENDORS.get(key) or ARM_IMPLEMENTERS.get(key) or key


def vendor_of_model(model: str | None) -> str | None:
    """The vendor a model name spells out (`Intel(R) Xeon(R) …`, `AMD EPYC …`), if it does."""
    if model is None:
        return None
    return next((str(v) for p, v in MODEL_PREFIXES.items() if model.startswith(p)), None)
