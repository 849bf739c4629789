"""Getting a machine into hostc: probe, capture, import, and the snapshot text.

The API that provisioning systems embed instead of shelling out to
`hostc probe` / `hostc import`; the CLI commands call only these functions.

    topo = import_source("lscpu", read_source(Path("lscpu.txt")), file="lscpu.txt")
    topo = import_source("numactl", read_source(Path("numa.txt")), file="numa.txt", base=topo)
    Path("topology.toml").write_text(dumps_snapshot(topo))

Every input problem raises HostcError carrying all Diagnostics.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hostc.diagnostics import HostcError, error
from hostc.patharg import as_path
from hostc.topology.model import Topology
from hostc.topology.readfile import SOURCE_LIMIT, read_text_bounded

__all__ = [
    "IMPORT_KINDS",
    "capture",
    "dumps_snapshot",
    "import_source",
    "probe",
    "read_snapshot",
    "read_source",
]

#: What `import_source` reads, and the one-line summary `hostc import --help` shows.
IMPORT_KINDS: dict[str, str] = {
    "hwloc": "Convert `lstopo --of xml` output (hwloc v1 or v2 XML).",
    "lscpu": "Convert `lscpu -p` or `lscpu -e` output (an `lscpu` summary above it adds "
    "the vendor, model and architecture).",
    "numactl": "Convert `numactl --hardware` output.",
    "nvidia-smi": "Convert `nvidia-smi topo -m` output, alone or merged onto --base.",
}


def read_source(path: Path | str) -> str:
    """An import source's text: a regular UTF-8 file of at most 16 MiB."""
    path = as_path(path, "path")
    return read_text_bounded(path, limit=SOURCE_LIMIT, what=f"import source ({path.name})")


def read_snapshot(path: Path | str) -> Topology:
    """A snapshot file (version 1 or 2), read bounded and validated."""
    path = as_path(path, "path")
    from hostc.topology import snapshot

    return snapshot.read(path)


def _parser(kind: str) -> Callable[[str, str], Topology]:
    if kind == "hwloc":
        from hostc.topology.importers import hwloc

        return hwloc.parse
    if kind == "lscpu":
        from hostc.topology.importers import lscpu

        return lscpu.parse
    if kind == "numactl":
        from hostc.topology.importers import numactl

        return numactl.parse
    raise HostcError([error("kind", f"unknown import kind {kind!r}", hint=", ".join(IMPORT_KINDS))])


def import_source(
    kind: str,
    text: str,
    *,
    file: str,
    base: Topology | None = None,
    arch: str | None = None,
    base_file: str = "the base snapshot",
) -> Topology:
    """Convert a tool's output (`kind`: hwloc, lscpu, numactl, nvidia-smi) into a Topology.

    With `base`, the result is `base` completed by what the file says (see
    `hostc.topology.merge`); `arch` fills in an architecture the sources lack.
    """
    from hostc.topology.importers.common import finish, with_arch

    if not isinstance(text, str):
        raise HostcError([error("text", f"expected the file's text, got {type(text).__name__}")])
    if not isinstance(kind, str) or not isinstance(file, str):
        raise HostcError([error("kind", "kind and file are strings")])
    if arch is not None and not isinstance(arch, str):
        raise HostcError([error("arch", f"expected a string, got {type(arch).__name__}")])
    if base is not None and not isinstance(base, Topology):
        raise HostcError([error("base", f"expected a Topology, got {type(base).__name__}")])
    if kind == "nvidia-smi":
        from hostc.topology.importers import nvidia_smi

        topo = nvidia_smi.merge(base, nvidia_smi.parse(text, file))
    else:
        topo = _parser(kind)(text, file)
        if base is not None:
            from hostc.topology.merge import merge

            topo = merge(base, topo, base_file=base_file, new_file=file)
    return finish(with_arch(topo, arch, file), file)


def probe(
    root: Path | str = Path("/"),
    nvidia_smi_topo: str | None = None,
    *,
    run_nvidia_smi: bool = True,
) -> Topology:
    """Read the host under `root` (a directory, or an archive made by `capture`)."""
    from hostc.topology.importers import sysfs

    root = as_path(root, "root")
    if nvidia_smi_topo is not None and not isinstance(nvidia_smi_topo, str):
        raise HostcError([error("nvidia_smi_topo", "expected the saved output as a string")])
    return sysfs.probe(root, nvidia_smi_topo=nvidia_smi_topo, run_nvidia_smi=run_nvidia_smi)


def capture(
    archive: Path | str,
    root: Path | str = Path("/"),
    extra: tuple[dict[str, bytes], set[str]] | None = None,
) -> list[str]:
    """Write an archive of exactly the files `probe` reads (plus `extra`: the files
    `hostc audit` reads, from `hostc.audit.run.audit_state`); returns its member names."""
    from hostc.topology.importers import capture as cap

    archive, root = as_path(archive, "archive"), as_path(root, "root")
    return cap.capture(archive, root, extra)


def dumps_snapshot(topo: Topology) -> str:
    """The snapshot file's text (version 2), deterministic."""
    from hostc.topology import snapshot

    if not isinstance(topo, Topology):
        raise HostcError([error("topo", f"expected a Topology, got {type(topo).__name__}")])
    return snapshot.dumps(topo)
