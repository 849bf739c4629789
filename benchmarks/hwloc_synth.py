"""hwloc v2 XML for a synthetic machine, the shape `lstopo --if synthetic` writes.

Used by run.py when lstopo is not installed.  Only what the importer reads
and what lstopo writes for `pack:P numa:N(memory=M) core:C pu:T`: Machine >
Package > [Group per NUMA node when a package has several] > (NUMANode
first, then Cores > PUs), masks as hwloc bitmaps
(comma-separated 32-bit words, most significant first), PUs numbered
sequentially, gp_index unique.

    python benchmarks/hwloc_synth.py 16 2 128 2 > big.xml
"""

from __future__ import annotations

import sys
from collections.abc import Iterable


def bitmap(bits: Iterable[int]) -> str:
    """hwloc's mask text: `0x00000003,,0xffffffff`, most significant word first."""
    value = 0
    for b in bits:
        value |= 1 << b
    words = []
    while True:
        words.append(value & 0xFFFFFFFF)
        value >>= 32
        if not value:
            break
    if len(words) == 1:
        return f"0x{words[0]:08x}"
    # lstopo writes a zero word as an empty one (`0x00000001,,0x00000001`), the lowest as 0x0
    low = f"0x{words[0]:08x}" if words[0] else "0x0"
    return ",".join([*(f"0x{w:08x}" if w else "" for w in reversed(words[1:])), low])


def generate(
    packages: int,
    numa_per_package: int,
    cores_per_numa: int,
    pus_per_core: int,
    memory_bytes: int = 64_000_000_000,
) -> str:
    gp = iter(range(1, 1 << 30))
    out: list[str] = []
    add = out.append
    pus_per_numa = cores_per_numa * pus_per_core
    all_pus = range(packages * numa_per_package * pus_per_numa)
    all_nodes = range(packages * numa_per_package)

    def masks(cpus: Iterable[int], nodes: Iterable[int]) -> str:
        c, n = bitmap(cpus), bitmap(nodes)
        return f'cpuset="{c}" complete_cpuset="{c}" nodeset="{n}" complete_nodeset="{n}"'

    add('<?xml version="1.0" encoding="UTF-8"?>')
    add('<!DOCTYPE topology SYSTEM "hwloc2.dtd">')
    add('<topology version="2.0">')
    c, n = bitmap(all_pus), bitmap(all_nodes)
    add(
        f'  <object type="Machine" os_index="0" {masks(all_pus, all_nodes)} '
        f'allowed_cpuset="{c}" allowed_nodeset="{n}" gp_index="{next(gp)}">'
    )
    add('    <info name="Backend" value="Synthetic"/>')
    desc = f"pack:{packages} numa:{numa_per_package} core:{cores_per_numa} pu:{pus_per_core}"
    add(f'    <info name="SyntheticDescription" value="{desc}"/>')
    pu = core = 0
    for p in range(packages):
        nodes = range(p * numa_per_package, (p + 1) * numa_per_package)
        cpus = range(nodes[0] * pus_per_numa, (nodes[-1] + 1) * pus_per_numa)
        add(
            f'    <object type="Package" os_index="{p}" {masks(cpus, nodes)} gp_index="{next(gp)}">'
        )
        grouped = numa_per_package > 1  # lstopo puts each NUMA node's cores in a Group
        for node in nodes:
            ncpus = range(node * pus_per_numa, (node + 1) * pus_per_numa)
            ind = "  " if grouped else ""
            if grouped:
                add(
                    f'      <object type="Group" {masks(ncpus, [node])} gp_index="{next(gp)}" '
                    'kind="1001" subkind="0">'
                )
            add(
                f'      {ind}<object type="NUMANode" os_index="{node}" {masks(ncpus, [node])} '
                f'gp_index="{next(gp)}" local_memory="{memory_bytes}">'
            )
            add(f'        {ind}<page_type size="4096" count="{memory_bytes // 4096}"/>')
            add(f"      {ind}</object>")
            for _ in range(cores_per_numa):
                threads = range(pu, pu + pus_per_core)
                add(
                    f'      {ind}<object type="Core" os_index="{core}" {masks(threads, [node])} '
                    f'gp_index="{next(gp)}">'
                )
                for t in threads:
                    add(
                        f'        {ind}<object type="PU" os_index="{t}" {masks([t], [node])} '
                        f'gp_index="{next(gp)}"/>'
                    )
                add(f"      {ind}</object>")
                pu += pus_per_core
                core += 1
            if grouped:
                add("      </object>")
        add("    </object>")
    add("  </object>")
    add("</topology>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(generate(*(int(a) for a in sys.argv[1:5])))
