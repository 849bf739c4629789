"""Spec layers: `extends`, `[force]` and `[remove]`, read and merged before structuring.

    extends = ["../classes/dgx-inference.toml"]   # relative to this file

    [force]                      # wins over every later layer (NixOS mkForce)
    sysctl."vm.swappiness" = 1

    [remove]                     # take inherited entries out (forced ones stay)
    workload = ["serve-d"]       # keyed entries by name, tables by key, lists by value
    hugepages = true             # a whole table or value

The extending file refines all it extends; within one `extends` list a later
entry refines an earlier one, except that two of them setting one value
differently at the same priority is an error, unless the extending file sets
it.  The merged data is structured into a HostSpec by the ordinary loader, so
every rule of a single spec still applies.  A spec without these keys never
comes here: its behaviour is the single-file loader's.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from hostc.diagnostics import Diagnostic, HostcError, KeyPath, at, file_error
from hostc.inputs import read_text_bounded
from hostc.locate import locate
from hostc.provenance import Provenance
from hostc.record import Record
from hostc.spec import merge
from hostc.spec.parse import LAYER_KEYS, SPEC_LIMIT, parse

if TYPE_CHECKING:
    from hostc.provenance import Provenance

#: The longest chain of `extends` followed (a real fleet nests two or three deep).
DEPTH_LIMIT = 16


#: The layer keys in the JSON Schema of node.toml.  A file that extends others is
#: checked after merging: alone it may leave out what its classes set (`host.role`).
SCHEMA: dict[str, Any] = {
    "extends": {
        "type": "array",
        "items": {"type": "string"},
        "description": "spec files this one refines, relative to this file; a later entry "
        "refines an earlier one, and two entries setting one value differently is an error "
        "unless this file sets it",
        "examples": [["../classes/dgx-inference.toml"]],
    },
    "force": {
        "type": "object",
        "description": "values, in the spec's own shape, that win over every later layer "
        "(NixOS mkForce)",
        "examples": [{"sysctl": {"vm.swappiness": 1}}],
    },
    "remove": {
        "type": "object",
        "description": "inherited entries to take out, in the spec's shape: a list of names "
        "(workloads by name, table keys, array items) or true for the whole key; forced "
        "values stay",
        "examples": [{"workload": ["serve-d"], "hugepages": True}],
    },
}


@attrs.frozen(repr=False, eq=False)
class Layered(Record):
    """The merged data of one host, and where each value came from."""

    data: dict[str, Any]
    #: merged key path → (file relative to the host's spec, key path in that file)
    provenance: dict[str, merge.Origin]
    #: the source text of every file read, by the name diagnostics use
    sources: dict[str, str]
    #: the top spec's directory: provenance files are relative to it
    base: str


def _shown(path: Path) -> str:
    return os.path.normpath(path)


class Files(Protocol):
    """Where a layered spec's files are read: the disk, or a git revision (`hostc diff
    SPEC@REV` reads the spec, every file it extends and its snapshot as they were)."""

    def text(self, path: Path, what: str) -> str:
        """The file's text; HostcError when it cannot be read."""
        ...

    def exists(self, path: Path) -> bool: ...

    def is_file(self, path: Path) -> bool: ...

    def shown(self, path: Path) -> str:
        """How diagnostics name the file."""
        ...


class Disk:
    """The files as they are now."""

    def text(self, path: Path, what: str) -> str:
        return read_text_bounded(path, limit=SPEC_LIMIT, what=what)

    def exists(self, path: Path) -> bool:
        return path.exists()

    def is_file(self, path: Path) -> bool:
        return path.is_file()

    def shown(self, path: Path) -> str:
        return _shown(path)


DISK = Disk()


@functools.lru_cache(maxsize=256)
def parsed(text: str, file: str) -> dict[str, Any]:
    """A class file is read for every host that extends it; its parse is remembered.
    `hostc.pipeline.compile` parses a spec through here to tell a layered one apart, so
    the merge below finds that parse instead of making it again.  The data is shared:
    nothing downstream changes it (the merge builds new trees)."""
    return parse(text, file)


def _read(path: Path, files: Files, known: str | None = None) -> tuple[dict[str, Any], str]:
    text = files.text(path, "spec") if known is None else known
    return parsed(text, files.shown(path)), text


def _at(file: str, text: str, key: KeyPath, message: str, hint: str | None = None) -> Diagnostic:
    return file_error(file, message, line=locate(key, text), hint=hint, path=key)


def _where(file: str, text: str, key: str) -> str:
    line = locate(key, text)
    return f"{file}:{line}" if line else file


class _Reader:
    """Walks the `extends` graph depth first; one per host.  Each file's merged tree is
    built once and remembered by its normalised name (`merged`), so a diamond (two
    classes extending one base, nested d deep) costs one merge per file, not 2**d: a
    file's tree depends on the file and what it extends, never on who reached it."""

    def __init__(self, top: Path, files: Files, source: str | None = None) -> None:
        self.top_dir = top.parent
        self.files = files
        #: the top spec's text when the caller has just read it (read once, not twice)
        self.top, self.source = top, source
        self.sources: dict[str, str] = {}
        #: name → (merged tree, height: the longest `extends` chain below it)
        self.merged: dict[str, tuple[Any, int]] = {}

    def rel(self, path: Path) -> str:
        return os.path.relpath(path, self.top_dir)

    def layer(self, path: Path, chain: tuple[str, ...]) -> Any:
        """The merged tree of `path` and everything it extends."""
        return self._layer(path, chain)[0]

    def _layer(self, path: Path, chain: tuple[str, ...]) -> tuple[Any, int]:
        name = self.files.shown(path)
        done = self.merged.get(name)
        if done is not None:
            return done
        data, text = _read(path, self.files, self.source if path == self.top else None)
        self.sources[name] = text
        parents = self._parents(data, name, text, path, chain)
        base: Any = {}
        height = 0
        for i, parent in enumerate(parents):
            sub, below = self._layer(parent, (*chain, name))
            if below and len(chain) + 1 + below > DEPTH_LIMIT:  # as deep as unmemoized
                raise HostcError(
                    [
                        _at(
                            name,
                            text,
                            at("extends", i),
                            f"extends nest more than {DEPTH_LIMIT} deep",
                        )
                    ]
                )
            height = max(height, below + 1)
            base = merge.combine(base, sub, siblings=i > 0)
        if isinstance(data.get("remove"), dict):
            try:
                base, missing = merge.remove(base, data["remove"])
            except merge.RemoveError as e:
                key = at("remove") + e.args[0]
                msg = "must be true (the whole key), a list of names, or a table"
                raise HostcError([_at(name, text, key, msg)]) from None
            if missing:
                raise HostcError(
                    [
                        _at(
                            name,
                            text,
                            at("remove") + where,
                            f"removes {m}, which no file it extends sets",
                        )
                        for where, m in missing
                    ]
                )
        own = {k: v for k, v in data.items() if k not in LAYER_KEYS}
        rel = self.rel(path)
        mine = merge.tree(self._paths(own, path), merge.NORMAL, rel, (), ())
        forced = data.get("force", {})
        force = merge.tree(self._paths(forced, path), merge.FORCE, rel, (), ("force",))
        done = self.merged[name] = merge.combine(merge.combine(base, mine), force), height
        return done

    def _paths(self, data: dict[str, Any], path: Path) -> dict[str, Any]:
        """`host.topology` is relative to the file naming it: rewritten relative to the host."""
        host = data.get("host")
        topo = host.get("topology") if isinstance(host, dict) else None
        if not isinstance(topo, str) or os.path.isabs(topo) or path.parent == self.top_dir:
            return data
        moved = os.path.relpath(path.parent / topo, self.top_dir)
        return {**data, "host": {**host, "topology": moved}}  # type: ignore[dict-item]

    def _parents(
        self, data: dict[str, Any], name: str, text: str, path: Path, chain: tuple[str, ...]
    ) -> list[Path]:
        ext = data.get("extends", [])
        if not isinstance(ext, list) or not all(isinstance(x, str) for x in ext):
            raise HostcError(
                [_at(name, text, at("extends"), "extends must be a list of spec files (strings)")]
            )
        bad = [k for k in ("force", "remove") if k in data and not isinstance(data[k], dict)]
        if bad:
            raise HostcError([_at(name, text, at(k), f"[{k}] must be a table") for k in bad])
        out = []
        for i, rel in enumerate(ext):
            parent = path.parent / rel
            pname = self.files.shown(parent)
            if pname in (*chain, name):
                first = (*chain, name).index(pname)
                loop = " -> ".join((*(*chain, name)[first:], pname))
                raise HostcError(
                    [
                        _at(
                            name,
                            text,
                            at("extends", i),
                            f"extends {pname}, which extends this file: a cycle ({loop})",
                        )
                    ]
                )
            if len(chain) >= DEPTH_LIMIT:
                raise HostcError(
                    [
                        _at(
                            name,
                            text,
                            at("extends", i),
                            f"extends nest more than {DEPTH_LIMIT} deep",
                        )
                    ]
                )
            if not self.files.is_file(parent):
                what = "is not a file" if self.files.exists(parent) else "does not exist"
                raise HostcError(
                    [_at(name, text, at("extends", i), f"extends {pname}, which {what}")]
                )
            out.append(parent)
        return out


def read(path: Path, files: Files = DISK, source: str | None = None) -> Layered:
    """Merge the layers of the spec at `path` (which declares `extends`, `force` or
    `remove`); `source`: its text, when the caller has just read it from `files`."""
    reader = _Reader(path, files, source)
    node = reader.layer(path, ())
    conflicts = merge.rivals(node)
    if conflicts:
        raise HostcError([_conflict(reader, key, leaf) for key, leaf in conflicts])
    provenance = {key.indexed(): leaf.origin for key, leaf in merge.leaves(node)}
    return Layered(merge.data(node), provenance, reader.sources, str(reader.top_dir))


def _conflict(reader: _Reader, key: KeyPath, leaf: merge.Leaf) -> Diagnostic:
    assert leaf.rival is not None
    a, b = leaf.rival.origin, leaf.origin
    fa, fb = (_shown(reader.top_dir / o.file) for o in (a, b))
    wa, wb = _where(fa, reader.sources[fa], a.key), _where(fb, reader.sources[fb], b.key)

    return file_error(
        fb,
        f"set to {leaf.rival.value!r} by {wa} and to {leaf.value!r} by {wb}, "
        "two files extended side by side at the same priority",
        line=locate(b.key, reader.sources[fb]),
        path=key,
        hint="set it in the file that extends both, or force one of them with [force]",
    )


def attribute(
    diags: list[Diagnostic] | tuple[Diagnostic, ...], layered: Layered
) -> list[Diagnostic]:
    """Point each diagnostic about a merged key at the file and line that set it."""
    out = []
    for d in diags:
        merged = d.path.indexed()  # provenance keys a named entry by its merged index
        origin = _origin(merged, layered.provenance)
        if origin is None:
            out.append(d)
            continue
        file = _shown(Path(layered.base) / origin[1].file)
        key = origin[1].key + merged[len(origin[0]) :]
        out.append(attrs.evolve(d, file=file, line=locate(key, layered.sources.get(file, ""))))
    return out


def _origin(path: str, provenance: dict[str, merge.Origin]) -> tuple[str, merge.Origin] | None:
    """The provenance entry for `path`, or for its nearest ancestor or first descendant."""
    if not path:
        return None
    best = None
    for key, origin in provenance.items():
        inside = path == key or path.startswith((key + ".", key + "["))
        if inside and (best is None or len(key) > len(best[0])):
            best = (key, origin)
    if best is None:
        for key, origin in provenance.items():
            if key.startswith((path + ".", path + "[")):
                cut = len(origin.key) - len(key) + len(path)  # the same suffix in both
                return path, attrs.evolve(origin, key=origin.key[:cut])
    return best


def provenance(merged: Layered) -> tuple[Provenance, ...]:
    """The Plan's provenance rows: each merged key, the file that set it and the line."""
    # each layer's text looked up once, not once per key, and scanned once per text
    # (`locate` keeps the scans: a fleet's hosts of one class share their class file's)
    texts: dict[str, str] = {}
    rows = []
    for key, origin in merged.provenance.items():
        text = texts.get(origin.file)
        if text is None:
            text = texts[origin.file] = merged.sources.get(
                _shown(Path(merged.base) / origin.file), ""
            )
        rows.append(Provenance(key, origin.file, locate(origin.key, text), origin.key))
    return tuple(rows)


def chain(path: Path) -> set[str]:
    """Every spec file `path` reads (itself and all it extends), normalised: a pre-commit
    hook checks a host when any of them changed.  Unreadable files are left to the build."""
    seen: set[str] = set()
    todo = [path]
    while todo:
        p = todo.pop()
        name = _shown(p)
        if name in seen:
            continue
        seen.add(name)
        try:
            data, _ = _read(p, DISK)
        except HostcError:
            continue
        ext = data.get("extends", [])
        if isinstance(ext, list):
            todo += [p.parent / x for x in ext if isinstance(x, str)]
    return seen
