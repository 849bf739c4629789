"""Read Linux's own description of the machine (sysfs, procfs) into a Topology.

Everything is read relative to a root so that the live host, a capture archive
and a test fixture go through the same code.  Every missing-but-required,
unreadable or malformed file becomes a diagnostic naming that file: a probe that
dies with a traceback on one odd sysfs file is useless on exactly the machines
someone is trying to debug.  Only facts that stay put across reboots of the same
hardware are recorded, so two probes of one host give the same snapshot.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import attrs

from hostc.cpuset import MAX_CPU, CpuListError, CpuSet
from hostc.diagnostics import Diagnostic, HostcError, file_error, with_file
from hostc.inputs import SOURCE_LIMIT, read_bytes_bounded
from hostc.knowledge.vendor import cpu_vendor
from hostc.topology.importers import nvidia_smi
from hostc.topology.importers.archive import extracted
from hostc.topology.importers.chroot import Resolver
from hostc.topology.model import (
    Gpu,
    LogicalCpu,
    Nic,
    NumaNode,
    OsRelease,
    Topology,
    valid_os_id,
)
from hostc.topology.validate import validate
from hostc.units import format_kib

CPU_DIR = "sys/devices/system/cpu"
NODE_DIR = "sys/devices/system/node"
PCI_DIR = "sys/bus/pci/devices"
HUGEPAGE_DIR = "sys/kernel/mm/hugepages"
SMI_FILE = "hostc/nvidia-smi-topo.txt"
SMI_TIMEOUT_S = 20.0

_VENDORS = {0x10DE: "NVIDIA", 0x1002: "AMD", 0x8086: "Intel", 0x15B3: "Mellanox"}
# Display controllers that are never compute GPUs: BMC consoles (ASPEED, Matrox)
# and the emulated adapters of QEMU/Bochs, Cirrus, virtio/QXL, VMware, Hyper-V.
_NOT_GPUS = {0x1A03, 0x102B, 0x1234, 0x1013, 0x1AF4, 0x1B36, 0x15AD, 0x1414}
OS_RELEASE = ("etc/os-release", "usr/lib/os-release")
# ASCII digits only: `\d` and int() accept Arabic-Indic and full-width digits.
_NUMBERED = re.compile(r"^(cpu|node)([0-9]{1,6})$")
_HUGEPAGES = re.compile(r"^hugepages-([0-9]{1,12})kB$")
_MEMTOTAL = re.compile(r"^(?:Node\s+[0-9]+\s+)?MemTotal:\s+([0-9]{1,15})\s+kB\s*$", re.MULTILINE)
_DECIMAL = re.compile(r"-?[0-9]{1,18}")
_HEX = re.compile(r"(?:0x)?[0-9a-fA-F]{1,16}")
_OS_LINE = re.compile(r"^(ID|VERSION_ID|ID_LIKE)=(.*)$")
# /proc/cpuinfo lines that name the CPU (x86: vendor_id, model name; arm64: CPU
# implementer; POWER: cpu); the first of each is kept, the rest of the file never is.
_CPUINFO = re.compile(r"^(vendor_id|model name|CPU implementer|cpu)\s*:\s*(.*?)\s*$")
_PCI_ADDR = re.compile(r"^([0-9a-f]+):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")


def _os_release_only(text: str) -> str:
    """Keep ID, VERSION_ID and ID_LIKE: the rest (URLs, names) is never used."""
    return "".join(
        line
        for line in text.splitlines(keepends=True)
        if line.startswith(("ID=", "VERSION_ID=", "ID_LIKE="))
    )


def _cpuinfo_only(text: str) -> str:
    """The first line of each identifying key; /proc/cpuinfo repeats them per CPU."""
    seen: set[str] = set()
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        m = _CPUINFO.match(line)
        if m and m.group(1) not in seen:
            seen.add(m.group(1))
            out.append(line)
    return "".join(out)


def _memtotal_only(text: str) -> str:
    """Keep meminfo's MemTotal line: the rest changes by the second and is never used."""
    return "".join(line for line in text.splitlines(keepends=True) if "MemTotal:" in line)


class Reader:
    """Files under a root, read leniently: failures are collected, not raised.

    Collecting lets one probe report every broken file at once, and remembering
    what was read is what makes `capture` store exactly the files probe needs.
    """

    def __init__(self, root: Path, display: str | None = None) -> None:
        self.root = root
        self.display = display  # archive name for messages; None: the real path
        self.resolver = Resolver(root)
        self.errors: list[Diagnostic] = []
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = set()

    def where(self, rel: str) -> str:
        return str(self.root / rel) if self.display is None else f"{self.display}:{rel}"

    def fail(self, rel: str, message: str) -> None:
        self.errors.append(file_error(self.where(rel), message))

    def mark(self, rel: str) -> None:
        """Record a directory whose existence (not content) carries meaning."""
        self.dirs.add(rel)

    def path(self, rel: str) -> Path | None:
        """`rel` under the root, links resolved as if the root were / (`chroot`)."""
        try:
            return self.resolver.path(rel)
        except OSError as e:
            self.fail(rel, f"cannot be resolved: {e.strerror or e}")
            return None

    def text(self, rel: str, keep: Callable[[str], str] | None = None) -> str | None:
        path = self.path(rel)
        if path is None or not path.exists():
            return None
        try:
            data = read_bytes_bounded(path, limit=SOURCE_LIMIT, what=f"{rel} file")
        except HostcError as e:
            self.errors += [attrs.evolve(d, file=self.where(rel)) for d in e.diagnostics]
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.files[rel] = data
            self.fail(rel, "is not text; expected a sysfs or procfs value")
            return None
        if keep is not None:
            text = keep(text)
        self.files[rel] = text.encode("utf-8")
        return text

    def integer(self, rel: str, *, base: int = 10) -> int | None:
        text = self.text(rel)
        if text is None:
            return None
        if (_HEX if base == 16 else _DECIMAL).fullmatch(text.strip()):
            return int(text.strip(), base)
        kind = "a hexadecimal number" if base == 16 else "an integer"
        self.fail(rel, f"expected {kind}, found {text.strip()[:40]!r}")
        return None

    def cpulist(self, rel: str) -> CpuSet | None:
        text = self.text(rel)
        if text is None:
            return None
        try:
            return CpuSet.parse(text)
        except (CpuListError, ValueError) as e:
            self.fail(rel, f"is not a CPU list: {e}")
            return None

    def listdir(self, rel: str) -> list[str]:
        path = self.path(rel)
        if path is None:
            return []
        try:
            names = sorted(p.name for p in path.iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as e:
            self.fail(rel, f"cannot be listed: {e.strerror or e}")
            return []
        self.mark(rel)
        return names

    def is_dir(self, rel: str) -> bool:
        path = self.path(rel)
        found = path is not None and path.is_dir()
        if found:
            self.mark(rel)
        return found


def _known(value: int | None) -> int | None:
    """The kernel writes -1 for ids it does not know (arm64 without PPTT, etc.)."""
    return value if value is not None and value >= 0 else None


def _numbered(r: Reader, rel: str, prefix: str) -> list[int]:
    out = []
    for name in r.listdir(rel):
        m = _NUMBERED.match(name)
        if m and m.group(1) == prefix and int(m.group(2)) <= MAX_CPU:
            out.append(int(m.group(2)))
    return sorted(out)


def _cpus(r: Reader) -> tuple[list[LogicalCpu], list[str]]:
    if not r.is_dir(CPU_DIR):
        hint = "probe the live host, or a directory or archive made by `hostc capture`"
        missing = file_error(r.where(CPU_DIR), "missing: not a Linux root with sysfs", hint=hint)
        raise HostcError([missing])
    lists = {n: r.cpulist(f"{CPU_DIR}/{n}") for n in ("online", "offline", "possible", "present")}
    online_list, offline_list = lists["online"], lists["offline"]
    # `possible` can reach far past the hardware (VMs say 0-239); present and the
    # cpuN directories are the CPUs that exist.
    ids = set(_numbered(r, CPU_DIR, "cpu")) | set(lists["present"] or ()) | set(online_list or ())
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
        package = _known(r.integer(f"{t}/physical_package_id"))
        die = _known(r.integer(f"{t}/die_id"))
        if core_id is not None and core_id >= 0:
            core_ids[cpu] = (package, die, core_id)
        core = min(siblings.ids | {cpu}) if siblings else None
        smt_unknown |= core is None and cpu not in core_ids
        cluster = _known(r.integer(f"{t}/cluster_id"))
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


def _memtotal_mib(r: Reader, rel: str) -> int | None:
    text = r.text(rel, keep=_memtotal_only)
    if text is None:
        return None
    m = _MEMTOTAL.search(text)
    if m is None:
        r.fail(rel, "has no 'MemTotal: N kB' line")
        return None
    return int(m.group(1)) // 1024


def _hugepage_dirs(r: Reader, rel: str) -> dict[int, str]:
    """Size in KiB → directory, for the hugepages-<N>kB entries of `rel`."""
    out: dict[int, str] = {}
    for name in r.listdir(rel):
        if m := _HUGEPAGES.match(name):
            out[int(m.group(1))] = f"{rel}/{name}"
            r.mark(f"{rel}/{name}")
    return dict(sorted(out.items()))


def _hugepages(r: Reader, rel: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for kib, d in _hugepage_dirs(r, rel).items():
        count = r.integer(f"{d}/nr_hugepages")
        if count is not None:
            out[format_kib(kib)] = count
    return out


def _nodes(r: Reader, cpus: list[LogicalCpu]) -> tuple[list[NumaNode], list[LogicalCpu], list[str]]:
    ids = _numbered(r, NODE_DIR, "node")
    if not ids:
        # A kernel without CONFIG_NUMA (or a container hiding it) is one node.
        memory = _memtotal_mib(r, "proc/meminfo")
        node = NumaNode(0, memory, [10], _hugepages(r, HUGEPAGE_DIR))
        cpus = [attrs.evolve(c, node=0) if c.online else c for c in cpus]
        return [node], cpus, ["memory"] if memory is None else []
    nodes: list[NumaNode] = []
    where: dict[int, int] = {}
    unknown: list[str] = []
    for k in ids:
        d = f"{NODE_DIR}/node{k}"
        r.mark(d)
        for cpu in r.cpulist(f"{d}/cpulist") or ():
            if cpu in where:
                r.fail(f"{d}/cpulist", f"CPU {cpu} is also in node{where[cpu]}'s cpulist")
            where[cpu] = k
        memory = _memtotal_mib(r, f"{d}/meminfo")
        if memory is None and "memory" not in unknown:
            unknown.append("memory")
        distances: list[int] = []
        text = r.text(f"{d}/distance")
        if text is not None:
            if all(_DECIMAL.fullmatch(x) for x in text.split()):
                distances = [int(x) for x in text.split()]
            else:
                r.fail(f"{d}/distance", f"expected numbers, found {text.strip()[:40]!r}")
            if distances and len(distances) != len(ids):
                r.fail(f"{d}/distance", f"has {len(distances)} distances for {len(ids)} nodes")
                distances = []
        nodes.append(NumaNode(k, memory, distances, _hugepages(r, f"{d}/hugepages")))
    cpus = [attrs.evolve(c, node=where.get(c.id)) if c.online else c for c in cpus]
    return nodes, cpus, unknown


def _pci_key(addr: str) -> tuple[int, int, int, int, str]:
    m = _PCI_ADDR.match(addr.lower())
    if m is None:
        return (1 << 32, 0, 0, 0, addr)
    dom, bus, dev, fn = (int(g, 16) for g in m.groups())
    return (dom, bus, dev, fn, addr)


def _first_entry(r: Reader, rel: str) -> str | None:
    names = r.listdir(rel)
    if not names:
        return None
    r.mark(f"{rel}/{names[0]}")
    return names[0]


def _devices(r: Reader, sole_node: int | None) -> tuple[list[Gpu], list[Nic]]:
    gpus: list[Gpu] = []
    nics: list[Nic] = []
    for addr in sorted(r.listdir(PCI_DIR), key=_pci_key):
        d = f"{PCI_DIR}/{addr}"
        r.mark(d)
        cls = r.integer(f"{d}/class", base=16)
        if cls is None:
            continue
        base = cls >> 16
        if base not in (0x02, 0x03, 0x12) and cls >> 8 != 0x0C06:
            continue
        vendor_id = r.integer(f"{d}/vendor", base=16)
        if base == 0x03 and vendor_id in _NOT_GPUS:
            continue
        device_id = r.integer(f"{d}/device", base=16)
        node = _known(r.integer(f"{d}/numa_node"))
        if node is None and sole_node is not None:
            # Firmware often leaves numa_node at -1 on one-node machines, where
            # the answer is not in doubt.  On several nodes it stays unknown.
            node = sole_node
        vendor = None if vendor_id is None else _VENDORS.get(vendor_id, f"0x{vendor_id:04x}")
        if base in (0x03, 0x12):
            model = None
            if vendor_id is not None and device_id is not None:
                model = f"{vendor_id:04x}:{device_id:04x}"  # lspci -n form; no pci.ids lookup
            gpus.append(Gpu(f"GPU{len(gpus)}", addr, node, vendor, model))
            continue
        netdev = _first_entry(r, f"{d}/net")
        if netdev is None:  # virtio-net hangs its netdev one level down
            for sub in (s for s in r.listdir(d) if re.fullmatch(r"virtio\d+", s)):
                if netdev := _first_entry(r, f"{d}/{sub}/net"):
                    break
        rdma = _first_entry(r, f"{d}/infiniband")
        nics.append(Nic(rdma or netdev or addr, addr, node, netdev, rdma, vendor))
    return gpus, nics


#: The kernel build options hostc consults (kernelfacts.KERNEL_CONFIG); the rest of
#: /boot/config-* is never kept.
_CONFIG_NAMES = (
    "CONFIG_NO_HZ_FULL|CONFIG_RCU_NOCB_CPU|CONFIG_CPU_ISOLATION|CONFIG_INTEL_IDLE"
    "|CONFIG_INTEL_IOMMU_DEFAULT_ON"
)
_CONFIG_LINE = re.compile(rf"^(?:({_CONFIG_NAMES})=([ymn])|# ({_CONFIG_NAMES}) is not set)$")


def _config_only(text: str) -> str:
    return "".join(
        line for line in text.splitlines(keepends=True) if _CONFIG_LINE.match(line.strip())
    )


def _kernel_config(r: Reader, kernel: str | None) -> dict[str, str]:
    """Build options from /boot/config-<release> (Debian and RHEL install it)."""
    if kernel is None or "/" in kernel:
        return {}
    rel = f"boot/config-{kernel}"
    if not (r.root / rel).exists():
        return {}
    out: dict[str, str] = {}
    for line in (r.text(rel, keep=_config_only) or "").splitlines():
        if m := _CONFIG_LINE.match(line.strip()):
            if m.group(1):
                out[m.group(1)] = m.group(2)
            else:
                out[m.group(3)] = "n"
    return out


def _strip(text: str | None) -> str | None:
    return None if text is None else text.strip() or None


def _os_release(r: Reader) -> OsRelease | None:
    """os-release(5): /etc/os-release, else /usr/lib/os-release; shell-quoted values."""
    rel = next((p for p in OS_RELEASE if (r.root / p).exists()), None)
    if rel is None:
        return None
    text = r.text(rel, keep=_os_release_only)
    if text is None:
        return None
    values: dict[str, str] = {}
    for line in text.splitlines():
        if m := _OS_LINE.match(line.strip()):
            value = m.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            values[m.group(1)] = value
    if "ID" not in values:
        r.fail(rel, "has no ID= line")
        return None
    release = OsRelease(
        id=values["ID"],
        version_id=values.get("VERSION_ID") or None,
        id_like=values.get("ID_LIKE", "").split(),
    )
    bad = [v for v in [release.id, *release.id_like] if not valid_os_id(v)]
    if bad:
        r.fail(rel, f"ID {bad[0][:40]!r} is not an os-release ID (a-z, 0-9, `._-`)")
        return None
    return release


def _cpu_identity(r: Reader, arch: str | None) -> tuple[str | None, str | None]:
    text = r.text("proc/cpuinfo", keep=_cpuinfo_only)
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


def collect(r: Reader, *, live: bool) -> tuple[Topology, str | None]:
    """The unvalidated Topology and any stored nvidia-smi text; problems go to `r.errors`.

    Shared by probe and capture, so the capture holds what this function reads.
    """
    cpus, unknown = _cpus(r)
    nodes, cpus, more = _nodes(r, cpus)
    unknown += more
    sizes = [format_kib(k) for k in _hugepage_dirs(r, HUGEPAGE_DIR)]
    gpus, nics = _devices(r, nodes[0].id if len(nodes) == 1 else None)
    kernel = _strip(r.text("proc/sys/kernel/osrelease"))
    arch = _strip(r.text("proc/sys/kernel/arch"))
    if live:
        kernel = kernel or platform.release() or None
        arch = arch or platform.machine() or None
    vendor, model = _cpu_identity(r, arch)
    topo = Topology(
        arch=arch or "unknown",
        cpus=cpus,
        nodes=nodes,
        source="probe",
        kernel=kernel,
        cmdline=_strip(r.text("proc/cmdline")),
        hugepage_sizes=sizes,
        gpus=gpus,
        nics=nics,
        unknown=unknown,
        cpu_vendor=vendor,
        cpu_model=model,
        os=_os_release(r),
        kernel_config=_kernel_config(r, kernel),
    )
    return topo, r.text(SMI_FILE)


def run_nvidia_smi() -> tuple[str | None, str | None]:
    """(output, note) of `nvidia-smi topo -m`; a wedged driver must not stop a CPU probe."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None, None
    try:
        done = subprocess.run(
            [exe, "topo", "-m"],
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            timeout=SMI_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"nvidia-smi: timed out after {SMI_TIMEOUT_S:g} s"
    except OSError as e:
        return None, f"nvidia-smi: {e.strerror or e}"
    if done.returncode != 0:
        why = (done.stderr.strip() or done.stdout.strip()).splitlines()
        return None, f"nvidia-smi: exit status {done.returncode}" + (f": {why[0]}" if why else "")
    return done.stdout, None


def _is_live(root: Path) -> bool:
    try:
        return root.resolve() == Path("/")
    except OSError:
        return False


def _probe_tree(r: Reader, *, live: bool, smi_text: str | None, run_smi: bool) -> Topology:
    topo, stored = collect(r, live=live)
    if r.errors:
        raise HostcError(r.errors)
    notes: list[str] = []
    text = smi_text if smi_text is not None else stored
    if text is None and live and run_smi:
        text, note = run_nvidia_smi()
        notes += [note] if note else []
    if text is not None:
        topo = nvidia_smi.merge(topo, nvidia_smi.parse(text, "nvidia-smi topo -m"))
    topo = attrs.evolve(topo, source="probe", notes=topo.notes + notes)
    problems = validate(topo)
    if problems:
        raise HostcError(with_file(problems, r.where(NODE_DIR if r.is_dir(NODE_DIR) else CPU_DIR)))
    return topo


def probe(
    root: Path = Path("/"), *, nvidia_smi_topo: str | None = None, run_nvidia_smi: bool = True
) -> Topology:
    """Probe the host under `root` (a directory, or a `.tar.gz` made by capture)."""
    if root.is_file():
        with extracted(root) as tree:
            r = Reader(tree, display=str(root))
            return _probe_tree(r, live=False, smi_text=nvidia_smi_topo, run_smi=False)
    if not root.is_dir():
        raise HostcError([file_error(str(root), "no such directory or capture archive")])
    return _probe_tree(
        Reader(root), live=_is_live(root), smi_text=nvidia_smi_topo, run_smi=run_nvidia_smi
    )
