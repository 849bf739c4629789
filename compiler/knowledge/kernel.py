"""Kernel knowledge as data: what a setting needs, since when, and what the kernel defaults to.

One row per fact, each citing where it comes from (a kernel commit or the
documentation file, named in place, so a reviewer can check it without this
repo).  A sysctl's own facts (its default per release, when it arrived or left) are
on its row in the settings table (`hostc.settings.table`), where it is declared once.
Releases are (major, minor); `None` means "every release hostc supports".
"""

from __future__ import annotations

from hostc.knowledge.table import Table

Release = tuple[int, int]


#: The first release whose isolcpus= knows the `managed_irq` flag (Linux 5.6).
#: Older kernels reject the whole parameter on an unknown flag: no isolation at all.
MANAGED_IRQ_SINCE: Release = (5, 6)

#: Per-node counts in `hugepages=` (commit b5389086ad7b "hugetlbfs: extend the definition
#: of hugepages parameter to support node allocation", v8 posted 2021-10-05 in
#: lkml 20211005054729.86457-1-yaozhenguo1@gmail.com, merged through Andrew Morton's mm
#: tree for the 5.16 merge window; parser: mm/hugetlb.c hugepages_setup, node form `N:count`).
HUGEPAGES_NODE_FORM_SINCE: Release = (5, 16)

#: A NUMA node's pool of one hugepage size (admin-guide/mm/hugetlbpage.rst, "Per Node
#: Hugepages Attributes"): `nr_hugepages` "returns the total number of huge pages on the
#: specified node.  When this attribute is written, the number of persistent huge pages
#: on the parent node will be adjusted to the specified value, if sufficient resources
#: exist, regardless of the task's mempolicy or cpuset constraints"; `free_hugepages` and
#: `surplus_hugepages` are that node's free and surplus pages.  Reservations are global
#: ("the number of overcommit and reserve pages remain global quantities"), in
#: /sys/kernel/mm/hugepages/hugepages-<kB>kB/resv_hugepages.
NODE_DIR = "/sys/devices/system/node/node{node}"
NODE_HUGEPAGES = NODE_DIR + "/hugepages/hugepages-{kib}kB"
#: Compacting one node (Documentation/ABI/stable/sysfs-devices-node, nodeX/compact: "When
#: this file is written to, all memory within that node will be compacted"); absent
#: without CONFIG_COMPACTION.
NODE_COMPACT = NODE_DIR + "/compact"
GLOBAL_HUGEPAGES = "/sys/kernel/mm/hugepages/hugepages-{kib}kB"

#: mmap flags for one anonymous page of a given hugepage size: MAP_HUGETLB (0x40000 in
#: include/uapi/asm-generic/mman-common.h, which x86's and arm64's uapi asm/mman.h
#: include; alpha, mips, parisc and others define their own) and the size as its log2
#: shifted by MAP_HUGE_SHIFT (include/uapi/linux/mman.h: HUGETLB_FLAG_ENCODE_SHIFT, 26,
#: include/uapi/asm-generic/hugetlb_encode.h).  Machine (`uname -m`) → MAP_HUGETLB.
MAP_HUGETLB: Table[str, int] = Table(
    {
        arch: (0x40000, "include/uapi/asm-generic/mman-common.h: #define MAP_HUGETLB 0x040000")
        for arch in ("x86_64", "aarch64")
    }
)
MAP_HUGE_SHIFT = 26

#: What the kernel logs for a `hugepagesz=` its MMU does not offer (mm/hugetlb.c
#: hugepagesz_setup: `arch_hugetlb_valid_size()` false, "HugeTLB: unsupported
#: hugepagesz=%s", parsed_valid_hugepagesz cleared), and then for the `hugepages=` after
#: it (hugepages_setup: "HugeTLB: hugepages=%s does not follow a valid hugepagesz,
#: ignoring"): that pool is not reserved at all.  Seen in dmesg with `hugepagesz=1Y
#: hugepages=1` (lkml, Peng Liu, "hugetlb: Fix return value of __setup handlers", 2022)
#: and `hugepagesz=1G hugepages=1` on a kernel without gigantic pages (lkml, Sourabh Jain,
#: powerpc fadump, 2025).  So the pool's size, given or the 1G default, is checked
#: against the snapshot's `hugepage_sizes` (hostc.check.memory).
HUGEPAGESZ_REFUSED = "HugeTLB: unsupported hugepagesz="

#: Kernel arguments whose setting is also a runtime file the running kernel takes at once
#: (argument → that file): the word only sets the file's value at the boot's start, so
#: hostc writes the file live too (hostc-tuning, or TuneD's [sysfs]) and a command line
#: that changes in these words alone owes no reboot (`hostc.plan.kernelargs.applied_live`).
APPLIED_LIVE: Table[str, str] = Table(
    {
        "transparent_hugepage": (
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "Documentation/admin-guide/mm/transhuge.rst: 'echo never "
            ">/sys/kernel/mm/transparent_hugepage/enabled' (sysfs, at runtime), and Boot "
            "parameters: 'You can change the sysfs boot time default for the top-level "
            '"enabled" control by passing the parameter transparent_hugepage=always or '
            "transparent_hugepage=madvise or transparent_hugepage=never'",
        ),
    }
)

#: TuneD options that write nothing while the kernel command line carries a word of the
#: same setting (option → that word; TuneD's plugin code, the same in every release, so
#: here rather than with the per-release TuneD tables of `distro`).  hostc puts
#: `transparent_hugepage=` on every command line it makes, so from the first reboot on
#: `[vm] transparent_hugepages` never writes the file, and a changed mode would not reach
#: the running kernel: hostc's profile writes the file under `[sysfs]` instead
#: (targets/tuned.py).
TUNED_SKIPPED_WITH_CMDLINE: Table[str, str] = Table(
    {
        "vm.transparent_hugepages": (
            "transparent_hugepage=",
            "redhat-performance/tuned tuned/plugins/plugin_vm.py _set_transparent_hugepages: "
            '\'if cmdline.find("transparent_hugepage=") > 0: ... log.info("transparent_hugepage '
            'is already set in kernel boot cmdline, ignoring value from profile"); return '
            "None' (every release to the current master)",
        ),
    }
)

#: Build options an isolation mechanism needs: without them the kernel ignores the
#: parameter (nohz_full= needs CONFIG_NO_HZ_FULL; rcu_nocbs= CONFIG_RCU_NOCB_CPU;
#: isolcpus= CONFIG_CPU_ISOLATION), per Documentation/admin-guide/kernel-parameters.txt.
_PARAMS = "Documentation/admin-guide/kernel-parameters.txt: {} [KNL{}]"
KERNEL_CONFIG: Table[str, str] = Table(
    {
        "isolcpus": (
            "CONFIG_CPU_ISOLATION",
            _PARAMS.format("isolcpus=", ", SMP") + "; kernel/sched/isolation.c",
        ),
        "nohz_full": (
            "CONFIG_NO_HZ_FULL",
            _PARAMS.format("nohz_full=", ", BOOT") + " (CONFIG_NO_HZ_FULL=y)",
        ),
        "rcu_nocbs": (
            "CONFIG_RCU_NOCB_CPU",
            _PARAMS.format("rcu_nocbs=", "") + " (CONFIG_RCU_NOCB_CPU=y)",
        ),
    }
)

#: The idle driver behind `intel_idle.max_cstate=`: built in (intel_idle cannot be a
#: module).  A kernel built without it keeps the dotted parameter silently and does
#: nothing (Debian's cloud kernel: `# CONFIG_INTEL_IDLE is not set`, found on a booted
#: Debian 12 guest, review-outputs-2 addendum); cpuidle then runs acpi_idle, which honours
#: `processor.max_cstate=` (drivers/acpi/processor_idle.c max_cstate).
INTEL_IDLE_CONFIG = "CONFIG_INTEL_IDLE"

#: `amd_pstate=` modes by the release that added them (the parameter itself: 6.1;
#: active, with EPP: 6.3; guided: 6.4; Documentation/admin-guide/pm/amd-pstate.rst).
#: An older kernel ignores an unknown mode and keeps its default driver.
_AMD_PSTATE = "Documentation/admin-guide/pm/amd-pstate.rst ({}, Linux {})"
AMD_PSTATE_SINCE: Table[str, Release] = Table(
    {
        "passive": ((6, 1), _AMD_PSTATE.format("amd_pstate=passive", "6.1")),
        "disable": ((6, 1), _AMD_PSTATE.format("amd_pstate=disable", "6.1")),
        "active": ((6, 3), _AMD_PSTATE.format("amd_pstate=active, amd-pstate-epp", "6.3")),
        "guided": ((6, 4), _AMD_PSTATE.format("amd_pstate=guided", "6.4")),
    }
)

#: The kernel's default ceiling for RLIMIT_NOFILE (fs.nr_open); a larger nofile
#: needs fs.nr_open raised, or setrlimit fails with EPERM and pam_limits refuses
#: the session.  A systemd >= 240 built with the bump raises it to NR_OPEN_MAX at
#: boot itself; Debian's, Ubuntu's and SUSE's do not (hostc.knowledge.distro.raises_nr_open).
NR_OPEN_DEFAULT = 1048576
#: The largest fs.nr_open the kernel accepts (sysctl_nr_open_max on 64-bit).
NR_OPEN_MAX = 1073741816

#: `pci=disable_acs_redir=<pci_dev>[; ...]` arrived in Linux 4.19 (commit aaca43fda742,
#: "PCI: Add "pci=disable_acs_redir=" parameter for peer-to-peer support").  The
#: `pci:<vendor>:<device>` form with 0 for both matches every device
#: (drivers/pci/pci.c pci_dev_str_match: `!vendor || vendor == dev->vendor`), which is
#: the wildcard NVIDIA's nvidia-acs-disable TuneD profile uses (`pci:0:0`).
ACS_REDIR_OFF_SINCE: Release = (4, 19)
#: The build option that turns the Intel IOMMU on without `intel_iommu=on`
#: (dmar_disabled = !CONFIG_INTEL_IOMMU_DEFAULT_ON, drivers/iommu/intel/iommu.c); with it,
#: detect_intel_iommu() requests ACS (drivers/iommu/intel/dmar.c), `iommu=pt` or not.
INTEL_IOMMU_DEFAULT_ON_CONFIG = "CONFIG_INTEL_IOMMU_DEFAULT_ON"
#: `iommu.passthrough=1` ([ARM64, X86]): "Bypass the IOMMU for DMA" by default, an identity
#: default domain (Documentation/admin-guide/kernel-parameters.txt, iommu.passthrough=).
#: arm-smmu-v3 attaches a PASID to an identity domain only from Linux 6.11 (6.10 made the
#: context-descriptor table allocate on demand, 6.11 added STRTAB_STE_1_S1DSS_BYPASS):
#: before it, under passthrough nvidia_uvm's ATS/SVA bind on Grace fails (-E2BIG) and no
#: CUDA context can be created; NVIDIA's nvidia-tuned sets iommu.passthrough=0 on those
#: arm64 kernels (NVIDIA/nodewright-packages PR #122, merged).
ARM_SMMU_IDENTITY_PASID_SINCE: Release = (6, 11)
ACS_ALL_DEVICES = "pci:0:0"
#: Where a post-boot check reads ACS: the device's extended capability list in its
#: sysfs `config` (from offset 0x100; readable past 64 bytes by root only,
#: drivers/pci/pci-sysfs.c pci_read_config), the ACS capability (PCI_EXT_CAP_ID_ACS 0x0d)
#: and its control register (PCI_ACS_CTRL 0x06), include/uapi/linux/pci_regs.h.  The bits
#: `pci=disable_acs_redir=` clears: drivers/pci/pci.c pci_disable_acs_redir,
#: `ctrl &= ~(PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_EC)` (0x04, 0x08, 0x20), what `lspci -vvv`
#: prints as ACSCtl ReqRedir, CmpltRedir and EgressCtrl (NCCL issue #304 and NCCL's
#: troubleshooting guide read them there).
PCI_EXT_CAP_START = 0x100
PCI_EXT_CAP_ID_ACS = 0x0D
PCI_ACS_CTRL = 0x06
ACS_REDIRECT_BITS = 0x04 | 0x08 | 0x20
#: `/sys/kernel/iommu_groups/<grp>/type`: the group's default domain, `identity` where
#: the IOMMU does not translate its DMA (pass-through), `DMA` or `DMA-FQ` where it does
#: (Documentation/ABI/testing/sysfs-kernel-iommu_groups); no group at all: no IOMMU on.
IOMMU_GROUPS = "/sys/kernel/iommu_groups"
IOMMU_TRANSLATED: Table[str, bool] = Table.members(
    ("DMA", "DMA-FQ"), "Documentation/ABI/testing/sysfs-kernel-iommu_groups (type)"
)

#: `init_on_alloc=` arrived in Linux 5.3 (commit 6471384af2a6, "mm: security: introduce
#: init_on_alloc=1 and init_on_free=1 boot options"); its default is the build option
#: CONFIG_INIT_ON_ALLOC_DEFAULT_ON (kernel-parameters.txt).  Older kernels ignore it.
INIT_ON_ALLOC_SINCE: Release = (5, 3)

#: The x86 corrected-error poll.  `check_interval` is one value shared by all CPUs (each
#: machinecheckN shows it); 0 stops the poll timer and nothing else: CMCI and the AMD
#: threshold interrupts still report corrected errors.  `ignore_ce` instead turns off
#: the poll *and* CMCI node-wide, which the kernel documents as not recommended, so
#: hostc never writes it.
MCE_SYSFS = "/sys/devices/system/machinecheck/machinecheck*/{}"
MCE: Table[str, str] = Table(
    {
        "check_interval": (
            "0",
            "Documentation/ABI/testing/sysfs-mce check_interval: '0 means no polling for "
            "corrected machine check errors (but some corrected errors might be still "
            "reported in other ways)'; arch/x86/kernel/cpu/mce/core.c mce_start_timer "
            "returns without arming the timer when the interval is 0",
        ),
        "ignore_ce": (
            "never written",
            "Documentation/arch/x86/x86_64/boot-options.rst mce=ignore_ce: 'Disable "
            "features for corrected errors, e.g. polling timer and CMCI. ... Usually this "
            "disablement is not recommended'; Documentation/ABI/testing/sysfs-mce ignore_ce",
        ),
    }
)

#: Kernel parameters the kernel applies every time they appear, not last-one-wins: a
#: check must look for its exact word, since another word of the same key (NVIDIA's
#: nvidia-h100-performance adds pci=realloc=off beside pci=disable_acs_redir) is no drift.
MULTI_VALUED: Table[str, bool] = Table(
    {
        "pci": (
            True,
            'drivers/pci/pci.c early_param("pci", pci_setup): init/main.c do_early_param '
            "calls it for every pci= word, each setting its own comma-separated options",
        ),
        "hugepagesz": (
            True,
            "Documentation/admin-guide/kernel-parameters.txt hugepagesz=: 'can be specified "
            "multiple times interleaved with hugepages= to reserve huge pages of different "
            "sizes'",
        ),
        "hugepages": (
            True,
            "Documentation/admin-guide/kernel-parameters.txt hugepages=: each follows its "
            "hugepagesz= and sets that size's pool (mm/hugetlb.c hugepages_setup)",
        ),
    }
)
