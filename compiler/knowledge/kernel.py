"""Kernel knowledge as data: what a setting needs, since when, and what the kernel defaults to.

One row per fact, each citing where it comes from (a kernel commit or the
documentation file, named in place, so a reviewer can check it without this
repo).  Check consults it to warn about sysctls the target kernel does not
have; the preset tests consult it so that no preset lowers a kernel default.
Releases are (major, minor); `None` means "every release hostc supports".
"""

from __future__ import annotations

import attrs

from hostc.knowledge.table import Table
from hostc.record import Record

Release = tuple[int, int]


@attrs.frozen(repr=False, eq=False)
class SysctlFact(Record):
    key: str
    #: default per release range: ((since, value), …) in ascending order; the last
    #: row whose `since` ≤ the release applies.  Multi-value keys hold all values.
    defaults: tuple[tuple[Release, tuple[int, ...]], ...] = ()
    #: True when a larger value only permits more (a limit or a buffer size), so a
    #: preset may raise it but must never lower it.
    limit: bool = True
    added: Release | None = None
    removed: Release | None = None
    source: str = ""

    def default(self, release: Release | None) -> tuple[int, ...] | None:
        """The kernel's default at `release` (the newest row when the release is unknown)."""
        rows = [v for since, v in self.defaults if release is None or since <= release]
        return rows[-1] if rows else None

    def exists(self, release: Release) -> bool:
        if self.added is not None and release < self.added:
            return False
        return self.removed is None or release < self.removed


_ANY: Release = (0, 0)

SYSCTLS: tuple[SysctlFact, ...] = (
    SysctlFact(
        "vm.max_map_count",
        ((_ANY, (65530,)),),
        source="Documentation/admin-guide/sysctl/vm.rst: DEFAULT_MAX_MAP_COUNT 65530",
    ),
    SysctlFact(
        "vm.swappiness",
        ((_ANY, (60,)),),
        limit=False,
        source="Documentation/admin-guide/sysctl/vm.rst: default 60",
    ),
    SysctlFact(
        "vm.overcommit_memory",
        ((_ANY, (0,)),),
        limit=False,
        source="Documentation/mm/overcommit-accounting.rst: 0 heuristic (default)",
    ),
    SysctlFact(
        "kernel.numa_balancing",
        limit=False,
        added=(3, 8),
        source="Documentation/admin-guide/sysctl/kernel.rst (NUMA balancing, Linux 3.8)",
    ),
    SysctlFact(
        "fs.aio-max-nr",
        ((_ANY, (65536,)),),
        source="Documentation/admin-guide/sysctl/fs.rst: aio-max-nr default 65536",
    ),
    SysctlFact(
        "fs.nr_open",
        ((_ANY, (1048576,)),),
        source="Documentation/admin-guide/sysctl/fs.rst: nr_open defaults to 1024*1024",
    ),
    SysctlFact(
        "fs.inotify.max_user_watches",
        # Since Linux 5.11 the default scales with RAM (1 % of it, in watches),
        # capped at 1048576, which hosts with more than about 128 GiB reach.
        ((_ANY, (8192,)), ((5, 11), (1048576,))),
        source="fs/notify/inotify/inotify_user.c (RAM-scaled default since Linux 5.11)",
    ),
    SysctlFact(
        "net.core.rmem_max",
        ((_ANY, (212992,)),),
        source="net/core/sock.c: SK_RMEM_MAX (212992 on 64-bit)",
    ),
    SysctlFact(
        "net.core.wmem_max",
        ((_ANY, (212992,)),),
        source="net/core/sock.c: SK_WMEM_MAX (212992 on 64-bit)",
    ),
    SysctlFact(
        "net.ipv4.tcp_rmem",
        # Linux 4.20 raised the initial receive buffer from 87380 to 131072 bytes
        # ("tcp: up initial rmem to 128KB"); the maximum scales with memory.
        ((_ANY, (4096, 87380, 6291456)), ((4, 20), (4096, 131072, 6291456))),
        source="Documentation/networking/ip-sysctl.rst tcp_rmem: default 131072 bytes",
    ),
    SysctlFact(
        "net.ipv4.tcp_wmem",
        ((_ANY, (4096, 16384, 4194304)),),
        source="Documentation/networking/ip-sysctl.rst tcp_wmem",
    ),
    SysctlFact(
        "net.core.netdev_max_backlog",
        ((_ANY, (1000,)),),
        source="Documentation/admin-guide/sysctl/net.rst: netdev_max_backlog 1000",
    ),
    SysctlFact(
        "net.core.somaxconn",
        ((_ANY, (128,)), ((5, 4), (4096,))),
        source="Documentation/networking/ip-sysctl.rst somaxconn; 4096 since Linux 5.4",
    ),
    # The max of `all` and the interface's value applies (ip-sysctl.rst), so a preset
    # writes `all` and `default`; 0 is each one's default.
    *(
        SysctlFact(
            f"net.ipv4.conf.{scope}.{key}",
            ((_ANY, (0,)),),
            limit=False,
            source=f"Documentation/networking/ip-sysctl.rst {key}: 0 (default)",
        )
        for scope in ("all", "default")
        for key in ("arp_announce", "arp_ignore")
    ),
    # Moved from /proc/sys to debugfs (/sys/kernel/debug/sched/) in Linux 5.13:
    # sysctl --system then logs "cannot stat" for each.
    *(
        SysctlFact(
            f"kernel.{name}",
            limit=False,
            removed=(5, 13),
            source="Linux 5.13 moved the CFS tunables to debugfs (sched/debug)",
        )
        for name in (
            "sched_min_granularity_ns",
            "sched_latency_ns",
            "sched_wakeup_granularity_ns",
            "sched_migration_cost_ns",
            "sched_nr_migrate",
            "sched_tunable_scaling",
        )
    ),
    SysctlFact(
        "net.ipv4.tcp_tw_recycle",
        limit=False,
        removed=(4, 12),
        source="Linux 4.12 removed tcp_tw_recycle (broken behind NAT)",
    ),
)

BY_KEY = {f.key: f for f in SYSCTLS}

#: The first release whose isolcpus= knows the `managed_irq` flag (Linux 5.6).
#: Older kernels reject the whole parameter on an unknown flag: no isolation at all.
MANAGED_IRQ_SINCE: Release = (5, 6)

#: Per-node counts in `hugepages=` (commit b5389086ad7b "hugetlbfs: extend the definition
#: of hugepages parameter to support node allocation", v8 posted 2021-10-05 in
#: lkml 20211005054729.86457-1-yaozhenguo1@gmail.com, merged through Andrew Morton's mm
#: tree for the 5.16 merge window; parser: mm/hugetlb.c hugepages_setup, node form `N:count`).
HUGEPAGES_NODE_FORM_SINCE: Release = (5, 16)

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
