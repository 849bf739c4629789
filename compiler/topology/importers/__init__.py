"""Importers: turn other tools' topology output into hostc's Topology model.

`IMPORTERS` is their registry, as `hostc.targets.TARGETS` is the targets': one row
per `hostc import KIND`, naming the module (imported only when that kind is used,
so a build never loads a parser) and the summary `hostc import --help` shows.
"""

from __future__ import annotations

import importlib

import attrs

from hostc.record import Record
from hostc.topology.model import Topology


@attrs.frozen(repr=False, eq=False)
class Importer(Record):
    """One kind of tool output.  `merges_itself`: the module places its devices on a
    base snapshot itself (nvidia-smi knows GPUs and links, not CPUs); the others are
    completed by `hostc.topology.merge`."""

    module: str
    help: str
    merges_itself: bool = False

    def read(self, text: str, file: str, base: Topology | None, base_file: str) -> Topology:
        mod = importlib.import_module(f"hostc.topology.importers.{self.module}")
        if self.merges_itself:
            topo: Topology = mod.merge(base, mod.parse(text, file))
            return topo
        topo = mod.parse(text, file)
        if base is None:
            return topo
        from hostc.topology.merge import merge

        return merge(base, topo, base_file=base_file, new_file=file)


IMPORTERS: dict[str, Importer] = {
    "hwloc": Importer("hwloc", "Convert `lstopo --of xml` output (hwloc v1 or v2 XML)."),
    "lscpu": Importer(
        "lscpu",
        "Convert `lscpu -p` or `lscpu -e` output (an `lscpu` summary above it adds "
        "the vendor, model and architecture).",
    ),
    "numactl": Importer("numactl", "Convert `numactl --hardware` output."),
    "nvidia-smi": Importer(
        "nvidia_smi",
        "Convert `nvidia-smi topo -m` output, alone or merged onto --base.",
        merges_itself=True,
    ),
}
