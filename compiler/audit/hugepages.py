"""Whether a hugepage pool is usable on its node: one page of its size mapped there.

A count in nr_hugepages says pages were set aside; NTO's e2e checks that a container
can map them, per size and on the requested node.  Audit does the smallest such thing
a production host allows: one anonymous MAP_HUGETLB page of the pool's size, touched
by a child process pinned to the node's housekeeping CPUs (never its isolated ones), so
the kernel takes the page from that node first (a task's default memory policy is the
local node), then `/proc/self/numa_maps` says which node and page size it came from,
and the child exits, which frees the page back to the pool.

What keeps it from taking a page a workload needs: it runs only where the node has a
free page and the size has a free page nobody reserved (free_hugepages less
resv_hugepages: a mapping reserves its pages when it is made, hugetlbpage.rst), it holds
the page for the child's few milliseconds, and a fault that still finds no page (a
SIGBUS) ends the child, not audit.  Everywhere else the row is skipped with its reason.
Only a live host: a capture or a copied tree cannot map anything.  hostc-verify (sh)
cannot mmap at all, so it checks the counts and leaves this row to audit.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable

from hostc.audit.host import CAPTURED, HostReader
from hostc.audit.observe import Expect, Look
from hostc.audit.seen import Seen, absent
from hostc.cpuset import CpuListError, CpuSet
from hostc.inputs import is_number
from hostc.knowledge import kernel as kf

#: the child: pin to the CPUs, map and touch one page, print the numa_maps line of it
_CHILD = """
import ctypes, mmap, os, sys
size, flags = int(sys.argv[1]), int(sys.argv[2])
os.sched_setaffinity(0, [int(c) for c in sys.argv[3].split(",")])
m = mmap.mmap(-1, size, flags=flags | mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
m[0:1] = b"\\x01"
addr = "%x" % ctypes.addressof(ctypes.c_char.from_buffer(m))
with open("/proc/self/numa_maps") as f:
    print(next((l for l in f if l.split(" ", 1)[0] == addr), "").strip())
"""
_NODE = re.compile(r"\bN([0-9]+)=([0-9]+)\b")
_PAGE = re.compile(r"\bkernelpagesize_kB=([0-9]+)\b")
#: seconds the child may take (Python's start and one fault)
TIMEOUT_S = 30


def _number(host: HostReader, path: str) -> int | None:
    text = (host.text(path) or "").strip()
    return int(text) if is_number(text) else None


def _free(host: HostReader, kib: int, node: int) -> str | None:
    """Why no page may be taken now (None: one may)."""
    here = kf.NODE_HUGEPAGES.format(node=node, kib=kib)
    free = _number(host, f"{here}/free_hugepages")
    if free is None:
        return f"{here} does not exist here"
    if free < 1:
        return f"node {node} has no free page of this size (all in use), none taken"
    pool = kf.GLOBAL_HUGEPAGES.format(kib=kib)
    spare = (_number(host, f"{pool}/free_hugepages") or 0) - (
        _number(host, f"{pool}/resv_hugepages") or 0
    )
    if spare < 1:
        return "every free page of this size is reserved by a mapping, none taken"
    return None


def captured(kib: int, node: int) -> str:
    """Where a capture keeps the mapping's result (`HostReader`: command output)."""
    return f"{CAPTURED}/hugepage-map/{kib}kB-node{node}"


def hugepage_map(host: HostReader, e: Expect) -> Seen:
    """One page of `e.args[0]` KiB mapped from node `e.args[1]`, by a child pinned to
    the node's housekeeping CPUs `e.args[2]`; the result is recorded like command output,
    so an audit of a capture reads what the live host showed."""
    kib, node = int(e.args[0]), int(e.args[1])
    rel = captured(kib, node)
    if host.live:
        result = _map(host, kib, node, e.args[2])
        host.files[rel] = result.encode("utf-8")
    else:
        found = host.text(rel)
        if found is None:
            return absent("mapping a page needs the live host (or a capture of it)")
        result = found.strip()
    kind, _, rest = result.partition(" ")
    if kind == "skipped":
        return absent(rest)
    if kind != "mapped":
        return Seen(f"no page mapped ({rest})", False)
    nodes = [int(n) for n, c in _NODE.findall(rest) if int(c) > 0]
    page = _PAGE.search(rest)
    got = int(page.group(1)) if page else None
    found_text = f"a page on node {','.join(map(str, nodes)) or '?'} ({got or '?'} kB pages)"
    return Seen(found_text, nodes == [node] and got == kib)


def _map(host: HostReader, kib: int, node: int, cpus: str) -> str:
    """`mapped NUMA_MAPS_LINE`, `failed WHAT` or `skipped WHY`."""
    flag = kf.MAP_HUGETLB.get(os.uname().machine)
    if flag is None:
        return f"skipped hostc does not know MAP_HUGETLB on {os.uname().machine}"
    try:
        pin = CpuSet.parse(cpus)
    except (CpuListError, ValueError):
        pin = CpuSet()
    if not pin:
        return f"skipped node {node} has no housekeeping CPU to map from (its isolated CPUs)"
    why = _free(host, kib, node)
    if why is not None:
        return f"skipped {why}"
    flags = flag | ((kib * 1024).bit_length() - 1) << kf.MAP_HUGE_SHIFT
    argv = [sys.executable, "-c", _CHILD, str(kib * 1024), str(flags), pin.expanded(",")]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as err:
        return f"skipped the mapping could not run: {err}"
    line = " ".join(done.stdout.decode("utf-8", "replace").split())
    if done.returncode == 0 and line:
        return f"mapped {line}"
    if done.returncode == -7:  # SIGBUS: the fault found no page after all
        return "failed SIGBUS at the first touch: no page to fault in"
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return f"failed {' '.join(said[-1].split()) if said else f'exit {done.returncode}'}"


OBSERVERS: dict[Look, Callable[[HostReader, Expect], Seen]] = {
    Look.HUGEPAGE_MAP: hugepage_map,
}
