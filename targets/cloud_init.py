"""cloud-init: one `#cloud-config` user-data carrying every host file and its apply steps.

`write_files` writes each file byte for byte: a file of `COMPRESS_FROM` bytes or more
gzip-compressed (`encoding: gz+b64`, one of write_files' documented encodings: the
scripts and the manifest are most of the size, and a cloud takes 16 KB to 256 KB of
user-data, `hostc.knowledge.clouds`), a smaller one as a readable `|` block scalar when
YAML gives back exactly the same text, base64 otherwise.  `runcmd` runs the
apply steps of `hostc.delivery.activation` for the host's OS family as argv lists, and
`power_state` reboots once when a file only takes effect after a reboot (never
a bare `reboot` in runcmd, which would cut cloud-init's final stage short).
write_files, runcmd and power_state run once per instance; the steps are safe
to run twice.  When a reboot follows, runcmd holds only what the next boot needs
(boot configuration, enabled units; `hostc.delivery.activation` leaves out the live
steps), else it activates everything live.  `packages` installs what a step
needs (TuneD).  `merge_how` makes hostc's part append to the lists and keep the
keys of vendor or base cloud-config parts: with cloud-init's default merge only
one part's `runcmd` or `write_files` list survives.  Built as data and
serialized by PyYAML, then parsed back and compared, so a serializer surprise
fails the build instead of the host.
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Sequence

from hostc.artifact import Artifact, ArtifactKind
from hostc.delivery.activation import needs_reboot, packages, steps
from hostc.plan.model import Plan
from hostc.targets import _yaml
from hostc.targets._emitter import Emitter
from hostc.targets._yaml import Block, Flow

NAME = "user-data"
HEADER = "#cloud-config\n"
#: cloud-init's "Merging user-data sections": lists append, dicts keep earlier keys.
MERGE_HOW = [
    {"name": "list", "settings": ["append"]},
    {"name": "dict", "settings": ["no_replace", "recurse_list"]},
]


#: Files from this size on travel gzip-compressed: under it a file stays readable in the
#: user-data (a drop-in, a sysctl.d file), and compression saves little.
COMPRESS_FROM = 1024


def gzipped(data: bytes) -> bytes:
    """gzip at level 9 with mtime 0: the same bytes give the same output on every build
    (Python's gzip writes no file name, and the header's time is the only other
    varying field)."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def _dump(doc: object) -> str:
    return _yaml.dump(doc, default_flow_style=False, allow_unicode=True, width=1 << 16, indent=2)


def _readable(data: bytes) -> str | None:
    """The text, when a `|` block scalar carries it back byte for byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text or any(ord(c) < 0x20 and c not in "\n\t" for c in text) or "\r" in text:
        return None
    dumped = _dump({"content": Block(text)})
    if not dumped.startswith("content: |"):
        return None
    if _yaml.load(dumped) != {"content": text}:
        return None
    return text


def _entry(art: Artifact) -> dict[str, object]:
    entry: dict[str, object] = {"path": art.path, "owner": "root:root"}
    entry["permissions"] = f"{art.mode:04o}"
    if len(art.data) >= COMPRESS_FROM:
        entry["encoding"] = "gz+b64"
        entry["content"] = base64.b64encode(gzipped(art.data)).decode("ascii")
        return entry
    text = _readable(art.data)
    if text is None:
        entry["encoding"] = "b64"
        entry["content"] = base64.b64encode(art.data).decode("ascii")
    else:
        entry["content"] = Block(text)
    return entry


def user_data(plan: Plan, files: Sequence[Artifact]) -> str:
    carried = [a for a in files if a.kind is ArtifactKind.FILE]
    reboot = needs_reboot(carried)
    doc: dict[str, object] = {"merge_how": MERGE_HOW}
    run = steps(carried, plan.host.os_family, live=not reboot)
    if need := packages(run):
        doc["packages"] = need
    if carried:
        doc["write_files"] = [_entry(a) for a in carried]
    if run:
        doc["runcmd"] = [Flow(s.command) for s in run]
    if reboot:
        doc["power_state"] = {
            "mode": "reboot",
            "delay": "now",
            "message": f"hostc: reboot {plan.host.name} for its kernel command line",
            "timeout": 30,
            "condition": True,
        }
    text = HEADER + _dump(doc)
    _check(text, carried, [list(s.command) for s in run])
    return text


def _check(text: str, carried: Sequence[Artifact], run: list[list[str]]) -> None:
    """Parse the document back: every file and command must survive the trip exactly."""
    doc = _yaml.load(text) or {}
    got = []
    for e in doc.get("write_files", []):
        raw, how = e["content"], e.get("encoding")
        data = base64.b64decode(raw) if how in ("b64", "gz+b64") else raw.encode("utf-8")
        data = gzip.decompress(data) if how == "gz+b64" else data
        got.append((e["path"], int(e["permissions"], 8), data))
    want = [(a.path, a.mode, a.data) for a in carried]
    if got != want or doc.get("runcmd", []) != run:
        raise RuntimeError("cloud-init: user-data does not parse back to the artifacts")


def emit(plan: Plan, files: Sequence[Artifact], out: Emitter) -> None:
    out.deliverable(NAME, user_data(plan, files))
