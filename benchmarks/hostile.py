"""The hostile-input rows of benchmarks/run.py (issue 32, class 3): shapes built to
multiply hostc's work, each measured against the bound DESIGN.md states ("Limits")."""

from __future__ import annotations

import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DGX = ROOT / "examples" / "dgx-h100-inference" / "node.toml"
#: a row of run.py's table: figure, value, goal, ok (None: no goal), note
Row = tuple[str, str, str, bool | None, str]


def hostile_tree_row(root: Path) -> Row:
    """H1: the bytes and seconds an audit of a tree built to multiply reads costs."""
    from hostc import api
    from hostc.audit.findings import audit
    from hostc.audit.host import HostReader
    from hostc.topology.importers.chroot import TREE_BUDGET

    plan, _ = api.compile_file(DGX)
    conf = root / "etc" / "sysctl.d"
    conf.mkdir(parents=True)
    big = root / "big.conf"
    big.write_text("".join(f"vm.key{i} = {i}\n" for i in range(4 << 20 >> 4))[: 4 << 20])
    for i in range(400):
        os.link(big, conf / f"{i:03d}-x.conf")
    for key in ("vm/swappiness", "kernel/numa_balancing", "vm/stat_interval"):
        (root / "proc/sys" / key).parent.mkdir(parents=True, exist_ok=True)
        (root / "proc/sys" / key).write_text("0\n")
    host = HostReader(root, live=False)
    start = time.process_time()
    audit(plan, host)
    cpu = time.process_time() - start
    mib = host.tree.spent / (1 << 20)
    ok = host.tree.spent <= TREE_BUDGET and cpu <= 2.0
    note = "400 hard links to one 4 MiB sysctl.d file: read once, parsed once"
    return (
        "H1 audit of a hostile tree",
        f"{mib:.1f} MiB, {cpu:.2f} s CPU",
        "≤ 64 MiB, ≤ 2 s",
        ok,
        note,
    )


def extends_diamond_row(root: Path, depth: int = 15) -> Row:
    """H2: a spec whose `extends` reach one base through 2**depth paths (15: the deepest
    nesting layers.DEPTH_LIMIT allows)."""
    import collections

    from hostc.spec import layers

    root.mkdir(parents=True)
    for i in range(depth):
        ext = f'["a{i + 1}.toml", "b{i + 1}.toml"]' if i + 1 < depth else '["base.toml"]'
        for side in "ab":
            (root / f"{side}{i}.toml").write_text(f'extends = {ext}\n[sysctl]\n"vm.k{i}" = 1\n')
    (root / "base.toml").write_text('[sysctl]\n"vm.swappiness" = 1\n')
    (root / "top.toml").write_text('extends = ["a0.toml", "b0.toml"]\n')
    reads: collections.Counter[str] = collections.Counter()

    class Counted(layers.Disk):
        def text(self, path: Path, what: str) -> str:
            reads[self.shown(path)] += 1
            return super().text(path, what)

    start = time.process_time()
    layers.read(root / "top.toml", Counted())
    cpu = time.process_time() - start
    ok = set(reads.values()) == {1} and cpu <= 1.0
    note = f"{2 * depth + 2} files, 2**{depth} paths to the base: each read and merged once"
    return ("H2 extends diamond", f"{cpu:.3f} s CPU", "≤ 1 s, each file once", ok, note)


class _Counted(tuple):  # type: ignore[type-arg]
    """Links that count each one handed out: the row's deterministic half."""

    visits = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        for x in super().__iter__():
            type(self).visits += 1
            yield x


def picture_row(per_node: int = 128) -> Row:
    """H3: `plan --format svg` of the DGX example given a dense GPU-NIC matrix: its CPU
    time, and how often each link is read (1 when linear in links; the scan per GPU and
    per NIC read each one once per device of its node: 512 times here)."""
    import attrs

    from hostc import api
    from hostc.plan.model import DeviceLink
    from hostc.report.svg import render_svg

    plan, _ = api.compile_file(DGX)
    nodes = tuple(
        attrs.evolve(
            n,
            gpus=tuple(f"GPU{n.id}x{i}" for i in range(per_node)),
            nics=tuple(f"nic{n.id}x{i}" for i in range(per_node)),
        )
        for n in plan.nodes
    )
    links = _Counted(
        DeviceLink(g, nic, "NODE" if a.id == b.id else "SYS")
        for a in nodes
        for g in a.gpus
        for b in nodes
        for nic in b.nics
    )
    plan = attrs.evolve(plan, nodes=nodes, hardware=attrs.evolve(plan.hardware, links=links))
    _Counted.visits = 0
    start = time.process_time()
    svg = render_svg(plan)
    cpu = time.process_time() - start
    per_link = _Counted.visits / len(links)
    gpus = sum(len(n.gpus) for n in nodes)
    note = f"{gpus} GPUs × {gpus} NICs, {len(links):,} links, {len(svg) >> 10} KiB of SVG"
    return (
        "H3 picture, dense links",
        f"{cpu:.2f} s CPU, {per_link:.1f} reads a link",
        "≤ 2 s, ≤ 2 reads",
        cpu <= 2.0 and per_link <= 2,
        note,
    )
