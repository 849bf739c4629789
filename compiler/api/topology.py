"""The API's topology half: probe, capture, import, and the snapshot text.

What provisioning systems embed instead of shelling out to `hostc probe` /
`hostc import`; `hostc.api` re-exports it, and the CLI calls only the API.

    topo = import_source("lscpu", read_source(Path("lscpu.txt")), file="lscpu.txt")
    topo = import_source("numactl", read_source(Path("numa.txt")), file="numa.txt", base=topo)
    Path("topology.toml").write_text(dumps_snapshot(topo))

Every input problem raises HostcError carrying all Diagnostics.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from hostc.delivery.output import check_file as _check_file
from hostc.delivery.output import write_bytes, write_text
from hostc.diagnostics import HostcError, at, error, file_error, kind_of
from hostc.inputs import SNAPSHOT_LIMIT, SOURCE_LIMIT, read_text_bounded
from hostc.patharg import as_path
from hostc.topology.importers import IMPORTERS
from hostc.topology.model import Topology
from hostc.vocab import Role

__all__ = [
    "IMPORT_KINDS",
    "capture",
    "capture_bytes",
    "check_file",
    "dumps_snapshot",
    "import_source",
    "probe",
    "read_snapshot",
    "read_source",
    "write_file",
    "write_snapshot",
]

#: What `import_source` reads, and the one-line summary `hostc import --help` shows.
IMPORT_KINDS: dict[str, str] = {name: i.help for name, i in IMPORTERS.items()}


def read_source(path: Path | str) -> str:
    """An import source's text: a regular UTF-8 file of at most 16 MiB."""
    path = as_path(path, "path")
    return read_text_bounded(path, limit=SOURCE_LIMIT, what=f"import source ({path.name})")


def read_snapshot(path: Path | str) -> Topology:
    """A snapshot file (version 1 or 2), read bounded and validated."""
    path = as_path(path, "path")
    from hostc.topology import snapshot

    return snapshot.read(path)


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
        raise HostcError([error(at("text"), f"expected the file's text, got {kind_of(text)}")])
    if not isinstance(kind, str) or not isinstance(file, str):
        raise HostcError([error(at("kind"), "kind and file are strings")])
    if arch is not None and not isinstance(arch, str):
        raise HostcError([error(at("arch"), f"expected a string, got {kind_of(arch)}")])
    if base is not None and not isinstance(base, Topology):
        raise HostcError([error(at("base"), f"expected a Topology, got {kind_of(base)}")])
    importer = IMPORTERS.get(kind)
    if importer is None:
        raise HostcError(
            [error(at("kind"), f"unknown import kind {kind!r}", hint=", ".join(IMPORTERS))]
        )
    topo = importer.read(text, file, base, base_file)
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
        raise HostcError([error(at("nvidia_smi_topo"), "expected the saved output as a string")])
    return sysfs.probe(root, nvidia_smi_topo=nvidia_smi_topo, run_nvidia_smi=run_nvidia_smi)


def capture(
    archive: Path | str,
    root: Path | str = Path("/"),
    extra: tuple[dict[str, bytes], set[str]] | None = None,
) -> list[str]:
    """Write an archive of exactly the files `probe` reads (plus `extra`: the files
    `hostc audit` reads, from `hostc.audit.run.audit_state`); returns its member names.
    A device node, FIFO or socket at `archive` is refused, not replaced."""
    from hostc.topology.importers import capture as cap

    archive, root = as_path(archive, "archive"), as_path(root, "root")
    data = cap.capture(archive, root, extra)
    try:
        # Atomic, so a failed capture never leaves half an archive.
        write_bytes(archive, data, mode=0o644)
    except OSError as e:
        raise HostcError(
            [file_error(str(archive), f"cannot write the capture: {e.strerror or e}")]
        ) from None
    return cap.members(data)


def capture_bytes(
    root: Path | str = Path("/"), extra: tuple[dict[str, bytes], set[str]] | None = None
) -> bytes:
    """The archive `capture` writes, as bytes (`hostc probe --capture -`: standard output)."""
    from hostc.topology.importers import capture as cap

    return cap.capture(None, as_path(root, "root"), extra)


def dumps_snapshot(topo: Topology, source: str = "<snapshot>") -> str:
    """The snapshot file's text (version 2), deterministic, and only one hostc's own
    reader takes: the text is read back through `snapshot.loads` (the loader's string
    rules: no control, bidi or zero-width characters; its validation) and held to
    SNAPSHOT_LIMIT before anything is written, so an importer cannot write a snapshot
    that `check` or `build` would then refuse.  `source`: the imported file, named in
    the diagnostics."""
    from hostc.topology import snapshot

    if not isinstance(topo, Topology):
        raise HostcError([error(at("topo"), f"expected a Topology, got {kind_of(topo)}")])
    text = snapshot.dumps(topo)
    size = len(text.encode())
    if size > SNAPSHOT_LIMIT:
        raise HostcError(
            [file_error(source, f"the snapshot would be {size} bytes, over {SNAPSHOT_LIMIT}")]
        )
    try:
        snapshot.loads(text, source)
    except HostcError as e:
        hint = "the input holds a value hostc's snapshot reader refuses; nothing was written"
        # the line numbers are the snapshot text's, not the input's: dropped
        found = [attrs.evolve(d, line=None, hint=d.hint or hint) for d in e.diagnostics]
        raise HostcError(found) from None
    return text


def write_snapshot(text: str, path: str | os.PathLike[str]) -> None:
    """Write a snapshot's text to `path` atomically (`write_file`)."""
    write_text(as_path(path, "path"), text)


def write_file(path: str | os.PathLike[str], data: str | bytes, *, parents: bool = False) -> None:
    """Write one named output file (`-o FILE`) the one safe way: staged beside it and
    renamed over it (readers see the old file or the new one).  OSError, with nothing
    written, for a name that is a symbolic link (never followed nor replaced), a device,
    FIFO or socket, a directory, an input of this command, or one whose folder lies under
    /dev, /proc or /sys; and as the file system says.  `parents`: make missing folders."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if not isinstance(raw, bytes):
        raise HostcError([error(at("data"), f"expected str or bytes, got {kind_of(data)}")])
    write_bytes(as_path(path, "path"), raw, parents=parents)


def check_file(path: str | os.PathLike[str]) -> None:
    """Raise the OSError `write_file` would raise for `path` for what is there now, writing
    nothing: a command with several outputs asks for each before it writes any."""
    _check_file(as_path(path, "path"))


def start_spec(
    topo: Topology, topology_ref: str, name: str, role: str, root: Path | str | None = None
) -> tuple[str, tuple[str, ...]]:
    """`hostc init`: (the text of a commented starting spec for `topo`, referred to as
    `topology_ref`, and its warnings).  `root`: the live root the snapshot was probed
    from, read for the hypervisor flag and a cpufreq driver (None: what the snapshot
    records of them)."""
    from hostc.api.init import host_name, look, recorded, start

    try:
        chosen = Role(role)
    except ValueError:
        choices = ", ".join(r.value for r in Role)
        raise HostcError(
            [error(at("role"), f"{role!r} is no role; choose from {choices}")]
        ) from None
    machine = recorded(topo) if root is None else look(as_path(root, "root"))
    started = start(topo, topology_ref, host_name(name), chosen, machine)
    return started.text, started.warnings
