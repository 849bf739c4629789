"""rootfs-tar: the rootfs tree as one byte-reproducible tarball, `apply.sh` included.

The same tree as the rootfs target's `OUT/rootfs/`: every host file at its path and
`apply.sh` at the top, so one way serves both.  Unpack it into a staging folder and run
`sh STAGE/apply.sh` (a host) or `DESTDIR=IMAGE sh STAGE/apply.sh` (an image built offline:
the files installed under IMAGE, the units enabled there), not `tar -C /`, which would
leave `/apply.sh` and enable nothing.  Entries sorted by path, each parent directory an
entry of its own (0755), mtime 0, uid/gid 0 named root, the files' own modes, GNU
format: the same artifacts give the same bytes in any order, on any machine.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Sequence
from pathlib import PurePosixPath

from hostc.artifact import Artifact, ArtifactKind
from hostc.plan.model import Plan
from hostc.targets import rootfs
from hostc.targets._emitter import Emitter

NAME = "rootfs.tar"
DIR_MODE = 0o755


def _info(name: str, mode: int, size: int, *, is_dir: bool) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE if is_dir else tarfile.REGTYPE
    info.mode = mode
    info.size = size
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def tarball(files: Sequence[Artifact]) -> bytes:
    data = {a.relpath: a for a in files if a.kind is ArtifactKind.FILE}
    dirs = {str(p) for rel in data for p in PurePosixPath(rel).parents if str(p) != "."}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name in sorted(dirs | set(data)):
            art = data.get(name)
            if art is None:
                tar.addfile(_info(name, DIR_MODE, 0, is_dir=True))
            else:
                info = _info(name, art.mode, len(art.data), is_dir=False)
                tar.addfile(info, io.BytesIO(art.data))
    return buf.getvalue()


def tree(plan: Plan, files: Sequence[Artifact]) -> list[Artifact]:
    """What the tarball holds: the rootfs target's tree, the host files and `apply.sh` at
    its top (a file of the tarball, not of the host), the same script as OUT/rootfs/'s."""
    carried = [a for a in files if a.kind is ArtifactKind.FILE]
    script = rootfs.apply_script(plan, carried).encode()
    return [*carried, Artifact("rootfs-tar", "/" + rootfs.APPLY, script, 0o755)]


def emit(plan: Plan, files: Sequence[Artifact], out: Emitter) -> None:
    out.deliverable(NAME, tarball(tree(plan, files)))
