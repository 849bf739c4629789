"""The decoded view of the wrapper targets' output that golden/ keeps for most examples.

A wrapper (cloud-init, Ignition, rootfs, the tarball, Ansible) re-encodes the file
targets' files: percent-encoded data URLs, YAML strings, a binary tar.  Kept verbatim in
golden/, one preset change rewrites every wrapper of every example and the diff is
unreadable.  This view writes, per wrapper artifact, its mode, size, sha256 (so a change
of any byte still shows) and activation steps, then its content decoded: JSON and YAML
walked with every data URL decoded, a body that is byte-identical to a file target's
artifact named instead of repeated (that file's own golden shows the change), the tar as a
`tar tv` listing.

A body named `<same as X>` carries no size or hash of its own: X's golden pins its bytes,
and a hash here would only repeat, as churn, every change X's diff already shows.  For the
same reason a sha256 of such a body quoted inside an artifact (Ansible's `sha256:`, the
manifest's `file <sha256> <path>` lines) reads `<sha256 of X>`, and an artifact that wraps
such bodies (config.ign, user-data, the tar) is pinned by its *frame*: the sha256 of its
bytes with those bodies (and their quoted hashes) cut out.  The frame plus the named bodies
is every byte of the artifact, so a byte that decodes the same (one more space in
config.ign) still changes the view, while a changed sysctl changes only the sysctl's golden.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import re
import stat
import tarfile
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs
import yaml

from hostc import api
from hostc.targets import TargetRole

HEADER = (
    "# The wrapper targets' output, decoded for review: a body equal to a file target's\n"
    "# file names that file (whose golden pins it); frame_sha256 pins every other byte (the\n"
    "# artifact with the named bodies cut out).  Regenerate with `python -m pytest --regen`.\n"
)


def is_wrapper(target: str) -> bool:
    return api.targets()[target].role is TargetRole.WRAPPER


@attrs.frozen
class Shown:
    """The bodies golden/<example>/ already shows, by content and by sha256."""

    bodies: Mapping[bytes, str]
    hashes: Mapping[str, str]

    @classmethod
    def of(cls, bodies: Mapping[bytes, str]) -> Shown:
        return cls(bodies, {_sha256(b): name for b, name in bodies.items()})

    def without(self, name: str) -> Shown:
        return Shown.of({b: n for b, n in self.bodies.items() if n != name})


def _sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _known(arts: list[api.Artifact]) -> Shown:
    """Body → where golden/<example>/ already shows it: file targets first, then rootfs."""
    known: dict[bytes, str] = {}
    ordered = sorted(arts, key=lambda a: (is_wrapper(a.target), a.target, a.relpath))
    for a in ordered:
        if a.data.strip() and (not is_wrapper(a.target) or a.target == "rootfs"):
            known.setdefault(a.data, f"{a.target}/{a.relpath}")
    return Shown.of(known)


#: a sha256 as artifacts quote it (manifest lines, Ansible's `sha256:`)
_HEX = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")


#: a lifecycle manifest's digest of a fact (a sysctl's value, the kernel arguments, the
#: kubelet managers): the value is in the file targets' golden already
_FACT = re.compile(
    r"^(entry (?:sysctl:\S+|cmdline|cmdline-live|kubelet-managers)) [0-9a-f]{16}$", re.M
)


def _name_hashes(text: str, shown: Shown) -> str:
    """Each quoted sha256 of a shown body as `<sha256 of X>`, each fact's digest in a
    lifecycle manifest as `<digest>`."""
    text = _FACT.sub(r"\1 <digest>", text)
    return _HEX.sub(
        lambda m: f"<sha256 of {shown.hashes[m[0]]}>" if m[0] in shown.hashes else m[0], text
    )


def _data_url(url: str) -> bytes:
    """RFC 2397: `data:[<mediatype>][;base64],<data>`, as Ignition's `contents.source`."""
    head, _, payload = url.partition(",")
    if head.endswith(";base64"):
        return base64.b64decode(payload)
    return urllib.parse.unquote_to_bytes(payload)


#: a long single-line string of the base64 alphabet (Ansible's `content`, `hostc_manifest`),
#: not a hex digest
_BASE64 = re.compile(r"(?![0-9a-f]+$)[A-Za-z0-9+/]{60,}={0,2}")


def _body(raw: bytes, shown: Shown) -> str:
    if raw in shown.bodies:
        return f"<same as {shown.bodies[raw]}>"
    try:
        return _name_hashes(raw.decode("utf-8"), shown)
    except UnicodeDecodeError:
        return f"<binary, {len(raw)} bytes, sha256 {_sha256(raw)}>"


def _gunzipped(data: bytes) -> bytes:
    """A gzip body (cloud-init's `gz+b64`, Ignition's `compression: gzip`) shown unpacked."""
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _encoded(value: str) -> bytes | None:
    """The body a string scalar carries (a data URL, base64, a multi-line text), if any."""
    if value.startswith("data:"):
        return _gunzipped(_data_url(value))
    if _b64(value):
        return _gunzipped(base64.b64decode(value, validate=True))
    if "\n" in value:
        return value.encode("utf-8")
    return None


def _walk(value: Any, shown: Shown, key: str = "") -> Any:
    """The parsed document with data URLs decoded and known bodies named."""
    if isinstance(value, dict):
        # a sha256 of a body this mapping carries (Ansible's hostc_manifest_sha256) is named
        inner = {
            _sha256(body): str(k)
            for k, v in value.items()
            if isinstance(v, str) and (body := _encoded(v)) is not None
        }
        shown = attrs.evolve(shown, hashes={**inner, **shown.hashes})
        return {k: _walk(v, shown, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, shown, key) for v in value]
    if key == "mode" and isinstance(value, int) and not isinstance(value, bool):
        return f"{value:04o}"  # Ignition writes modes as decimal integers
    if isinstance(value, str):
        body = _encoded(value)
        return _name_hashes(value, shown) if body is None else _body(body, shown)
    return value


def _members(raw: bytes) -> list[tuple[tarfile.TarInfo, bytes]]:
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        return [(m, raw[m.offset_data : m.offset_data + m.size]) for m in tar.getmembers()]


def _tar_listing(raw: bytes, shown: Shown) -> list[str]:
    """`tar tvf`: mode, owner/group, size, mtime, name (and a link's target); a member
    whose body golden shows elsewhere names it instead of its size."""
    lines = []
    for m, body in _members(raw):
        kind = stat.S_IFDIR if m.isdir() else stat.S_IFLNK if m.issym() else stat.S_IFREG
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(m.mtime))
        owner = f"{m.uname or m.uid}/{m.gname or m.gid}"
        link = f" -> {m.linkname}" if m.issym() else ""
        same = m.isfile() and body in shown.bodies
        size = "=" if same else str(m.size)
        tail = f" <same as {shown.bodies[body]}>" if same else link
        lines.append(f"{stat.filemode(kind | m.mode)} {owner} {size:>7} {when} {m.name}{tail}")
    return lines


def _content(a: api.Artifact, shown: Shown) -> tuple[str, Any]:
    """What the artifact holds, decoded by its format."""
    name = a.relpath
    if name.endswith(".tar"):
        return "listing", _tar_listing(a.data, shown)
    if name.endswith(".ign"):
        return "decoded", _walk(json.loads(a.data), shown)
    if _is_yaml(name):
        return "decoded", _walk(yaml.safe_load(a.data), shown)
    return "content", _body(a.data, shown)


def _is_yaml(name: str) -> bool:
    return name == "user-data" or name.endswith((".yml", ".yaml"))


#: what stands for a cut-out body in a frame
_CUT = "\0"


def _scalars(node: yaml.Node) -> Iterator[yaml.ScalarNode]:
    if isinstance(node, yaml.ScalarNode):
        yield node
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from _scalars(key)
            yield from _scalars(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _scalars(item)


def _text_frame(text: str, shown: Shown) -> str:
    """A JSON or YAML document with every scalar that carries a shown body cut out, and
    every quoted sha256 of a shown body or of a body the document carries itself (the
    manifest an Ansible play checks) cut out, in base64 too: such a scalar stands as its
    decoded body with the hashes cut, when it is canonical base64 (of the body, or of
    the body's gzip: cloud-init's gz+b64, Ignition's compression)."""
    node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    carried = [
        (s.start_mark.index, s.end_mark.index, s.value, body)
        for s in (_scalars(node) if node is not None else ())
        if s.tag == "tag:yaml.org,2002:str" and (body := _encoded(s.value)) is not None
    ]
    hashes = {*shown.hashes, *(_sha256(body) for *_, body in carried)}
    for start, end, value, body in sorted(carried, reverse=True):
        if body in shown.bodies:
            text = text[:start] + _CUT + text[end:]
        elif _packed(value):
            plain = _cut_hashes(body.decode("utf-8", "surrogateescape"), hashes)
            text = text[:start] + _CUT + json.dumps(plain) + text[end:]
    return _cut_hashes(text, hashes)


def _packed(value: str) -> bool:
    """A scalar that carries its body packed: canonical base64 (of the body or of its
    gzip), or a base64 data URL of a gzip body (Ignition's `compression: gzip`)."""
    if value.startswith("data:") and value.partition(",")[0].endswith(";base64"):
        payload = value.partition(",")[2]
        raw = base64.b64decode(payload)
        return raw[:2] == b"\x1f\x8b" and base64.b64encode(raw).decode() == payload
    return _b64(value) and base64.b64encode(base64.b64decode(value)).decode() == value


def _b64(value: str) -> bool:
    return not value.startswith("data:") and len(value) % 4 == 0 and bool(_BASE64.fullmatch(value))


def _cut_hashes(text: str, hashes: Iterable[str]) -> str:
    """Each of these sha256s cut out wherever it stands (in a percent-encoded data URL
    too, where the hex digits of `%20` run into it)."""
    for h in hashes:
        text = text.replace(h, _CUT)
    return _FACT_QUOTED.sub(lambda m: m[1] + _CUT, text)


#: a fact's digest in a lifecycle manifest, as it stands in a frame (percent-encoded too)
_FACT_QUOTED = re.compile(
    r"(entry(?: |%20)(?:sysctl:[^\s%]+|cmdline|cmdline-live|kubelet-managers)(?: |%20))"
    r"[0-9a-f]{16}(?![0-9a-f])"
)


def _tar_frame(raw: bytes, shown: Shown) -> bytes:
    """The tar with each shown member's body cut out, and its header's size and checksum
    (which follow from the body) blanked.  The zeros after the last member (the
    end-of-archive blocks and the padding to tar's 10 KiB record) are cut too: their
    length follows from the bodies' lengths, so a body that grows a block would
    otherwise change a frame that holds nothing of it."""
    frame, end = bytearray(), 0
    for m, body in _members(raw):
        header = bytearray(raw[m.offset : m.offset_data])
        end = m.offset_data + -(-m.size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
        if m.isfile() and body in shown.bodies:
            last = len(header) - tarfile.BLOCKSIZE
            header[last + 124 : last + 136] = bytes(12)  # size
            header[last + 148 : last + 156] = bytes(8)  # chksum
            frame += header
        else:
            frame += raw[m.offset : end]
    return bytes(frame + raw[end:].rstrip(b"\0"))


def frame(a: api.Artifact, shown: Shown) -> bytes:
    """The artifact's bytes less the bodies (and their quoted hashes) golden shows elsewhere."""
    if a.relpath.endswith(".tar"):
        return _tar_frame(a.data, shown)
    try:
        text = a.data.decode("utf-8")
    except UnicodeDecodeError:
        return a.data
    if a.relpath.endswith(".ign") or _is_yaml(a.relpath):
        return _text_frame(text, shown).encode()
    return _cut_hashes(text, shown.hashes).encode()


def _entry(a: api.Artifact, known: Shown) -> dict[str, Any]:
    shown = known.without(f"{a.target}/{a.relpath}")
    key, value = _content(a, shown)
    row: dict[str, Any] = {"mode": f"{a.mode:04o}"}
    if not (isinstance(value, str) and value.startswith("<same as ")):
        row["frame_sha256"] = _sha256(frame(a, shown))
    if a.activation:
        row["activation"] = [str(step) for step in a.activation]
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
