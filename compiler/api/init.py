"""`hostc init`: a commented starting spec for a machine, asking nothing.

Pure: the snapshot, the role and what the probe saw about virtualisation and cpufreq
in, the spec text and the warnings out.  The CLI probes, writes and checks.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import tomli_w

from hostc.diagnostics import HostcError
from hostc.knowledge.machine import CPUFREQ_SETTINGS
from hostc.record import Record
from hostc.topology.importers.chroot import HostTree
from hostc.topology.importers.sysfs_reader import FILE_LIMIT
from hostc.topology.model import NO_DRIVER, Topology
from hostc.vocab import Role

#: fewer online CPUs than this and isolation is left off: with two housekeeping cores
#: (their SMT siblings included) the OS would keep too few CPUs, or the workload none
ISOLATE_MIN_CPUS = 8
#: a host name as node.toml takes it
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


@attrs.frozen(repr=False, eq=False)
class Machine(Record):
    """What the probe of a live root says beyond the snapshot (None: not known, as
    for a snapshot file written before the snapshot recorded them)."""

    virtual: str | None = None  # why it is a VM ("hypervisor CPU flag"), "" if not
    cpufreq: bool | None = None  # whether a cpufreq driver is loaded


def recorded(topo: Topology) -> Machine:
    """What a snapshot records of it (`hostc probe` writes both; older ones neither)."""
    virtual = None
    if topo.hypervisor is not None:
        virtual = "the hypervisor CPU flag" if topo.hypervisor else ""
    cpufreq = None if topo.cpufreq_driver is None else topo.cpufreq_driver != NO_DRIVER
    return Machine(virtual, cpufreq)


def look(root: Path) -> Machine:
    """The hypervisor CPU flag (x86 /proc/cpuinfo, CPUID leaf 1 ECX bit 31),
    /sys/hypervisor/type (Xen) and whether /sys/devices/system/cpu/cpufreq has a policy.

    Read through `HostTree`, as the probe reads the same root: a link resolves inside
    it (an absolute link to a FIFO outside never blocks, a file outside is never read),
    reads are bounded, and what cannot be read counts as absent."""
    tree = HostTree(root)
    try:
        data = tree.read("proc/cpuinfo", limit=FILE_LIMIT, what="/proc/cpuinfo file")
    except (HostcError, OSError):  # unreadable, too large, a FIFO, a loop of links
        data = None
    cpuinfo = (data or b"").decode("utf-8", "replace")
    virtual = ""
    if re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.M):
        virtual = "the hypervisor CPU flag"
    elif _is_file(tree, "sys/hypervisor/type"):
        virtual = "/sys/hypervisor/type"
    try:
        names = tree.names("sys/devices/system/cpu/cpufreq") or []
    except OSError:
        names = []
    return Machine(virtual, any(n.startswith("policy") for n in names))


def _is_file(tree: HostTree, rel: str) -> bool:
    try:
        path = tree.path(rel)
    except OSError:
        return False
    return path is not None and path.is_file()


@attrs.frozen(repr=False, eq=False)
class Started(Record):
    text: str
    warnings: tuple[str, ...]


def host_name(raw: str) -> str:
    """`raw` as a node.toml name: its first label, other characters as `-`."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", raw.split(".")[0]).strip("-._")[:63]
    return name if _NAME.fullmatch(name) else "node"


def _toml(value: str | list[str]) -> str:
    """`value` as a TOML value, spelled by tomli_w: a snapshot's GPU names and the path
    given on the command line may hold `"` or `\\`, which a bare f-string would let
    end the string early and start another key."""
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml, value)) + "]"
    return tomli_w.dumps({"v": value}).removeprefix("v = ").rstrip("\n")


def _gpu_nodes(topo: Topology) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for g in topo.gpus:
        out.setdefault(g.node if g.node is not None else 0, []).append(g.name)
    return out


def start(topo: Topology, topology_ref: str, name: str, role: Role, m: Machine) -> Started:
    """The spec text for `topo` (referred to as `topology_ref`) and what to tell the user."""
    online = sum(1 for c in topo.cpus if c.online)
    warn: list[str] = []
    lines = [
        f"# Starting spec written by `hostc init` for {name}: {online} online CPUs, "
        f"{len(topo.nodes)} NUMA node(s), {len(topo.gpus)} GPU(s).",
        "# `hostc check` validates it, `hostc plan` shows every setting it gives with its",
        "# reason, `hostc explain SPEC NAME` one of them.  Keys: docs/settings.md.",
        "version = 1",
        "",
        "[host]",
        f"name = {_toml(name)}",
        f"role = {_toml(str(role))}  # inference, training or general: the preset it gets",
        f"topology = {_toml(topology_ref)}",
    ]
    gpus = _gpu_nodes(topo)
    small = online < ISOLATE_MIN_CPUS
    for node, names in sorted(gpus.items()):
        lines += [
            "",
            "# one server per NUMA node with GPUs; rename it to your unit (<name>.service)",
            "[[workload]]",
            f'name = "server{node}"',
            f"gpus = {_toml(names)}",
        ]
    if not gpus:
        lines += [
            "",
            "# no GPU in the snapshot: add a [[workload]] with `nodes = [0]` (or gpus) to pin",
            "# a service, e.g.",
            "# [[workload]]",
            '# name = "server"',
            "# nodes = [0]",
        ]
        if role is not Role.GENERAL:
            warn.append(f"role {role} with no GPU in the snapshot")
    lines += ["", "[cpu]"]
    if small:
        lines.append(f"# isolation left off: {online} online CPUs leave too few for the OS")
        warn.append(
            f"{online} online CPUs: too small to isolate anything (needs {ISOLATE_MIN_CPUS}); "
            "isolation is left off"
        )
    elif gpus:
        lines += [
            "housekeeping_per_node = 2  # cores (with SMT siblings) per NUMA node for the OS",
            'isolate = "workload"       # isolate the rest of the servers\' nodes',
        ]
    else:
        lines.append('# isolate = "workload"  # once a workload is declared')
    exclude = _exclusions(m, warn)
    if exclude:
        left = _toml(exclude)
        lines += ["", "[preset]", f"exclude = {left}  # see the warnings of `hostc init`"]
    return Started("\n".join(lines) + "\n", tuple(warn))


def _exclusions(m: Machine, warn: list[str]) -> list[str]:
    out = []
    if m.virtual:
        warn.append(
            f"a virtual machine ({m.virtual}): C-state limits act on virtual CPUs the "
            "hypervisor schedules, so max_cstate is left out; isolation only keeps the "
            "guest's own work off vCPUs the host still shares"
        )
        out.append("max_cstate")
    if m.cpufreq is False:
        warn.append(
            "no cpufreq driver (/sys/devices/system/cpu/cpufreq has no policy): the "
            f"governor, EPP and P-state settings are left out ({', '.join(CPUFREQ_SETTINGS)})"
        )
        return [*CPUFREQ_SETTINGS, *out]
    if m.cpufreq is None:
        warn.append(
            "the snapshot records neither a hypervisor nor a cpufreq driver: check that "
            "the machine is not a VM and has a cpufreq driver, or run `hostc init` on it"
        )
    return out
