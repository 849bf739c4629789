"""node.toml text → HostSpec.  Only shape and types; every error names file and key path.

The spec path may name anything (/dev/zero, a FIFO, a directory, a secret that
is not TOML): it is read through the same bounded reader as snapshots, and no
error about it echoes its content.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from hostc.cpuset import CpuSet
from hostc.diagnostics import (
    Diagnostic,
    HostcError,
    Named,
    at,
    error,
    file_error,
    kind_of,
    with_file,
)
from hostc.inputs import read_text_bounded
from hostc.knowledge.kubelet import KubeVersion, Quantity
from hostc.patharg import as_path
from hostc.spec import layers
from hostc.spec.model import HostSpec
from hostc.spec.parse import (
    NESTING_LIMIT,
    SPEC_LIMIT,
    declares_layers,
    nesting_depth,
    parse,
    too_deep,
)
from hostc.spec.text import name_problem, shown
from hostc.units import PageSize

if TYPE_CHECKING:
    from hostc.spec.layers import Files, Layered

SPEC_VERSION = 1


def loads(text: str, file: str = "node.toml") -> HostSpec:
    data = parse(text, file)
    if declares_layers(data):  # `extends`, `[force]`, `[remove]`: read from `file`
        return load_layered(Path(file))[0]
    return from_data(data, file, text)


def from_data(data: Any, file: str = "<data>", text: str | None = None) -> HostSpec:
    """A mapping shaped like node.toml (what tomli returns) → HostSpec, through the
    one converter the loader uses: the same types, rules and key paths."""
    from hostc.spec.structure import diagnostics, structure

    if isinstance(data, Mapping) and not isinstance(data, dict):
        data = dict(data)
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise HostcError(
            [file_error(file, f"expected a table of node.toml keys, got {kind_of(data)}")]
        )
    if nesting_depth(data) > NESTING_LIMIT:
        raise too_deep(file)
    # DESIGN: the format evolves by version, so none is no guess; reported with the
    # spec's other problems, all in one round
    missing = (
        []
        if "version" in data
        else [
            error(
                at("version"),
                "missing: a spec says which node.toml format it is written in",
                hint=f"add `version = {SPEC_VERSION}` as the first line",
            )
        ]
    )
    version = data.get("version", SPEC_VERSION)
    if version != SPEC_VERSION or isinstance(version, bool):
        raise HostcError(
            with_file(
                [
                    error(
                        at("version"),
                        f"unsupported node.toml version {shown(version)}",
                        hint=f"this hostc reads version {SPEC_VERSION}",
                    )
                ],
                file,
                text,
            )
        )
    try:
        spec = structure(data, HostSpec)
    except Exception as e:  # cattrs' exception groups, flattened into diagnostics
        found = missing + _by_name(diagnostics(e), data)
        raise HostcError(with_file(found, file, text)) from None
    if missing:
        raise HostcError(with_file(missing, file, text))
    object.__setattr__(spec, "_converted", (file, text))  # see `Converted`
    return spec


def _by_name(diags: list[Diagnostic], data: dict[str, Any]) -> list[Diagnostic]:
    """A converter problem inside a `[[workload]]` entry names the entry as every later
    rule does (`HostSpec.workload_at`): by its name when it has a unique one."""
    entries = data.get("workload")
    if not isinstance(entries, list):
        return diags
    names = [w.get("name") if isinstance(w, dict) else None for w in entries]
    once = {n for n, k in Counter(n for n in names if isinstance(n, str)).items() if k == 1}
    out = []
    for d in diags:
        match d.path.parts:
            case ("workload", int(i), *rest) if i < len(names):
                name = names[i]
                if (
                    isinstance(name, str) and name in once and name_problem(name) is None
                ):  # not the problem itself
                    d = attrs.evolve(d, path=at("workload", Named(i, name), *rest))
        out.append(d)
    return out


def converted(spec: HostSpec) -> bool:
    """Whether `from_data` made this very spec (`model.Converted`): typed and immutable,
    so it need not be structured again."""
    return origin(spec) is not None


def origin(spec: HostSpec) -> tuple[str, str | None] | None:
    """The file `from_data` read this spec from (`<data>` for a mapping) and its text when
    known; None for a spec it did not make."""
    mark = getattr(spec, "_converted", None)
    if isinstance(mark, tuple) and len(mark) == 2 and isinstance(mark[0], str):
        return mark[0], mark[1] if isinstance(mark[1], str) else None
    return None


def load_layered(
    path: Path, files: Files | None = None, source: str | None = None
) -> tuple[HostSpec, Layered]:
    """A spec with `extends`/`[force]`/`[remove]`: merged, structured, and each problem
    pointed at the file and line that set the value.  `files`: where they are read
    (default the disk); `source`: the spec's own text, when the caller just read it."""
    files = files or layers.DISK
    merged = layers.read(path, files, source)
    try:
        file = str(path) if files is layers.DISK else files.shown(path)
        return from_data(merged.data, file, None), merged
    except HostcError as e:
        raise HostcError(layers.attribute(e.diagnostics, merged)) from None


def load(path: Path | str) -> tuple[HostSpec, str]:
    """Return the spec and its source text (kept for locating later diagnostics)."""
    path = as_path(path, "spec")
    text = read_text_bounded(path, limit=SPEC_LIMIT, what="spec")
    return loads(text, str(path)), text


def to_data(value: Any) -> Any:
    """A HostSpec (or any part of one) as the plain data node.toml would hold: enums as
    their values, CPU lists, quantities, page sizes and versions as their text, table
    keys as strings.  `from_data(to_data(spec))` is how a spec built in Python gets the
    loader's types and rules (a `"always"` where a ThpMode belongs becomes a ThpMode)."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bool | int | str | float) or value is None:
        return value
    if isinstance(value, CpuSet | KubeVersion | Quantity | PageSize):
        return str(value)  # node.toml writes these as text
    if attrs.has(type(value)):
        return {
            f.name: to_data(getattr(value, f.name))
            for f in attrs.fields(type(value))
            if getattr(value, f.name) is not None
        }
    if isinstance(value, list | tuple):
        return [to_data(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_data(v) for k, v in value.items()}
    raise TypeError(f"{type(value).__name__} is no node.toml value")
