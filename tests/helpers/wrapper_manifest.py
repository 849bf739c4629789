"""The decoded view of the wrapper targets' output that golden/ keeps for most examples.

A wrapper (cloud-init, Ignition, rootfs, the tarball, Ansible) re-encodes the file
targets' files: percent-encoded data URLs, YAML strings, a binary tar.  Kept verbatim in
golden/, one preset change rewrites every wrapper of every example and the diff is
unreadable.  This view writes, per wrapper artifact, its mode, size, sha256 (so a change
of any byte still shows) and activation steps, then its content decoded: JSON and YAML
walked with every data URL decoded, a body that is byte-identical to a file target's
artifact named instead of repeated (that file's own golden shows the change), the tar as a
`tar tv` listing.  One example keeps the raw output too (`FULL_EXAMPLE` in regenerate).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import stat
import tarfile
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

import yaml

from hostc import api
from hostc.targets import TargetRole

HEADER = (
    "# The wrapper targets' output, decoded for review: a body equal to a file target's\n"
    "# file names that file; sha256 pins every byte.  Regenerate with `python -m pytest --regen`.\n"
)


def is_wrapper(target: str) -> bool:
    return api.targets()[target].role is TargetRole.WRAPPER


def _known(arts: list[api.Artifact]) -> dict[bytes, str]:
    """Body → where golden/<example>/ already shows it: file targets first, then rootfs."""
    known: dict[bytes, str] = {}
    ordered = sorted(arts, key=lambda a: (is_wrapper(a.target), a.target, a.relpath))
    for a in ordered:
        if a.data.strip() and (not is_wrapper(a.target) or a.target == "rootfs"):
            known.setdefault(a.data, f"{a.target}/{a.relpath}")
    return known


def _data_url(url: str) -> bytes:
    """RFC 2397: `data:[<mediatype>][;base64],<data>`, as Ignition's `contents.source`."""
    head, _, payload = url.partition(",")
    if head.endswith(";base64"):
        return base64.b64decode(payload)
    return urllib.parse.unquote_to_bytes(payload)


#: a long single-line string of the base64 alphabet (Ansible's `content`, `hostc_manifest`),
#: not a hex digest
_BASE64 = re.compile(r"(?![0-9a-f]+$)[A-Za-z0-9+/]{60,}={0,2}")


def _body(raw: bytes, known: Mapping[bytes, str]) -> str:
    if raw in known:
        return f"<same as {known[raw]}>"
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return f"<binary, {len(raw)} bytes, sha256 {hashlib.sha256(raw).hexdigest()}>"


def _walk(value: Any, known: Mapping[bytes, str], key: str = "") -> Any:
    """The parsed document with data URLs decoded and known bodies named."""
    if isinstance(value, dict):
        return {k: _walk(v, known, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, known, key) for v in value]
    if key == "mode" and isinstance(value, int) and not isinstance(value, bool):
        return f"{value:04o}"  # Ignition writes modes as decimal integers
    if isinstance(value, str) and value.startswith("data:"):
        return _body(_data_url(value), known)
    if isinstance(value, str) and len(value) % 4 == 0 and _BASE64.fullmatch(value):
        return _body(base64.b64decode(value, validate=True), known)
    if isinstance(value, str) and "\n" in value:
        return _body(value.encode("utf-8"), known)
    return value


def _tar_listing(raw: bytes) -> list[str]:
    """`tar tvf`: mode, owner/group, size, mtime, name (and a link's target)."""
    lines = []
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        for m in tar.getmembers():
            kind = stat.S_IFDIR if m.isdir() else stat.S_IFLNK if m.issym() else stat.S_IFREG
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(m.mtime))
            owner = f"{m.uname or m.uid}/{m.gname or m.gid}"
            link = f" -> {m.linkname}" if m.issym() else ""
            lines.append(
                f"{stat.filemode(kind | m.mode)} {owner} {m.size:>7} {when} {m.name}{link}"
            )
    return lines


def _content(a: api.Artifact, known: Mapping[bytes, str]) -> tuple[str, Any]:
    """What the artifact holds, decoded by its format."""
    name = a.relpath
    if name.endswith(".tar"):
        return "listing", _tar_listing(a.data)
    if name.endswith(".ign"):
        return "decoded", _walk(json.loads(a.data), known)
    if name == "user-data" or name.endswith((".yml", ".yaml")):
        return "decoded", _walk(yaml.safe_load(a.data), known)
    return "content", _body(a.data, known)


def _entry(a: api.Artifact, known: Mapping[bytes, str]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "mode": f"{a.mode:04o}",
        "size": len(a.data),
        "sha256": hashlib.sha256(a.data).hexdigest(),
    }
    if a.activation:
        row["activation"] = [str(step) for step in a.activation]
    itself = f"{a.target}/{a.relpath}"
    key, value = _content(a, {k: v for k, v in known.items() if v != itself})
    row[key] = value
    return row


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as `|` blocks, so a changed line is one changed diff line."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def manifest(arts: list[api.Artifact]) -> str:
    """golden/<example>/wrappers.yaml: every wrapper artifact of one build, decoded."""
    known = _known(arts)
    doc: dict[str, dict[str, Any]] = {}
    for a in arts:
        if is_wrapper(a.target):
            doc.setdefault(a.target, {})[a.path] = _entry(a, known)
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return HEADER + body
