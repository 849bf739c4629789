"""The two sides of `hostc diff`: a spec (compiled here), a saved plan.json, or
`SPEC@REV`, a spec and the topology it names as git has them at a revision.  Loaded
here, compared and shown by the review pages (`hostc.report.review`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import attrs

from hostc.cpuset import CpuListError
from hostc.diagnostics import HostcError, file_error
from hostc.fleet.gitrepo import RefusedPath
from hostc.fleet.gitrev import Revision
from hostc.inputs import SNAPSHOT_LIMIT, is_selection, loads_json, read_text_bounded
from hostc.locate import locate
from hostc.pipeline.compile import _read_spec, compile_file, compile_layered, compile_plan
from hostc.pipeline.emit import emit
from hostc.plan.model import Plan
from hostc.report import plan_view
from hostc.report.plandiff import flatten, roles_of
from hostc.report.review import Review, Side, compare
from hostc.spec.load import load_layered, loads
from hostc.spec.model import HostSpec
from hostc.spec.parse import SPEC_LIMIT, declares_layers, parse
from hostc.topology.snapshot import loads as loads_topology


def _excluded(
    spec: HostSpec, file: str, text: str | None, plan: Plan
) -> tuple[tuple[str, str], ...]:
    """`preset.exclude`'s names with their file and line: from the plan's provenance for a
    layered spec, else located in the spec's text (the file alone where neither says)."""
    names = spec.preset.exclude
    origin = next((p for p in plan.provenance if p.key == "preset.exclude"), None)
    out = []
    for i, name in enumerate(names):
        if origin is not None:
            where = origin.file + (f":{origin.line}" if origin.line is not None else "")
        else:
            line = locate(f"preset.exclude[{i}]", text) if text is not None else None
            where = file + (f":{line}" if line is not None else "")
        out.append((name, where))
    return tuple(out)


@attrs.define
class _Revision:
    """A layered spec's files as git has them at a revision (`layers.Files`), read through
    `gitrev.Revision`: each read once, named `PATH@REV` in diagnostics."""

    at: Revision
    read: dict[str, str | None] = attrs.field(factory=dict)

    def _get(self, path: Path) -> str | None:
        key = str(path)
        if key not in self.read:
            try:
                self.read[key] = self.at.read(path, SNAPSHOT_LIMIT, self.shown(path))
            except RefusedPath:  # a link or a nested repository: an error, never "missing"
                raise
            except HostcError:
                self.read[key] = None
        return self.read[key]

    def text(self, path: Path, what: str) -> str:
        found = self._get(path)
        limit = SPEC_LIMIT if what == "spec" else SNAPSHOT_LIMIT
        if found is None or len(found.encode()) > limit:
            return self.at.read(path, limit, self.shown(path))  # its own error
        return found

    def exists(self, path: Path) -> bool:
        return self._get(path) is not None

    def is_file(self, path: Path) -> bool:
        return self._get(path) is not None

    def shown(self, path: Path) -> str:
        return f"{os.path.normpath(path)}@{self.at.rev}"


def _from_texts(label: str, spec_file: str, text: str, topo_file: str, topo: str) -> Side:
    spec = loads(text, spec_file)
    plan, _ = compile_plan(
        spec, loads_topology(topo, topo_file), spec_file=spec_file, spec_source=text
    )
    excluded = _excluded(spec, spec_file, text, plan)
    return Side(label, plan_view.plan_json(plan), plan, tuple(emit(plan)), excluded, spec)


def _plan_json(path: Path, arg: str) -> dict[str, Any]:
    """A saved plan.json, checked to have what the diff reads: one error, never a traceback."""
    text = read_text_bounded(path, limit=64 << 20, what="plan.json")
    data = loads_json(text, arg, "plan.json")
    try:
        roles_of(data)
        flatten(data)
    except (KeyError, TypeError, AttributeError, ValueError, CpuListError) as e:
        raise HostcError(
            [
                file_error(
                    arg,
                    f"not a plan.json ({type(e).__name__}: {e})",
                    hint="`hostc plan SPEC --json` writes one",
                )
            ]
        ) from None
    found = data.get("format", 1)  # format 1, from an earlier hostc, says none
    if found != plan_view.PLAN_JSON_FORMAT:
        found = json.dumps(found, ensure_ascii=True)[:40]  # input: shown escaped
        raise HostcError(
            [
                file_error(
                    arg,
                    f"plan.json format {found}, this hostc writes and compares format "
                    f"{plan_view.PLAN_JSON_FORMAT}",
                    hint="rebuild it with this hostc: `hostc plan SPEC --json`",
                )
            ]
        )
    return data  # type: ignore[no-any-return]


def load(arg: str) -> Side:
    """One side from its command-line spelling."""
    path = Path(arg)
    if "@" in arg and not path.exists():
        name, rev = arg.rsplit("@", 1)
        at = Revision.at(rev, arg)
        spec_path = Path(name)
        text = at.read(spec_path, SPEC_LIMIT, arg)
        if declares_layers(parse(text, arg)):
            files = _Revision(at, {str(spec_path): text})
            plan, _ = compile_layered(spec_path, files)
            merged = load_layered(spec_path, files)[0]
            excluded = _excluded(merged, arg, None, plan)
            data = plan_view.plan_json(plan)
            return Side(arg, data, plan, tuple(emit(plan)), excluded, merged)
        spec = loads(text, arg)
        if spec.host.topology is None:
            raise HostcError(
                [file_error(arg, f"host.topology is not set: nothing to read at {rev}")]
            )
        topo_path = spec_path.parent / spec.host.topology
        shown = f"{topo_path}@{rev}"
        topo = at.read(topo_path, SNAPSHOT_LIMIT, shown)
        return _from_texts(arg, arg, text, shown, topo)
    if path.suffix == ".json":
        return Side(arg, _plan_json(path, arg))
    plan, _ = compile_file(path)
    spec, excluded = _excluded_here(path, plan)
    return Side(arg, plan_view.plan_json(plan), plan, tuple(emit(plan)), excluded, spec)


def review(old_arg: str, new_arg: str) -> Review:
    """`hostc diff OLD NEW`: each side loaded from its command-line spelling, compared."""
    return compare(load(old_arg), load(new_arg))


def _excluded_here(path: Path, plan: Plan) -> tuple[HostSpec, tuple[tuple[str, str], ...]]:
    """The spec on disk (read again through compile's cache), and `_excluded` for it."""
    spec, text = _read_spec(path)
    if spec is None:
        merged = load_layered(path)[0]
        return merged, _excluded(merged, str(path), None, plan)
    return spec, _excluded(spec, str(path), text, plan)


def names_fleet(arg: str) -> bool:
    """Whether a side of `hostc diff` is many hosts: a selection of the working tree (a
    directory, glob or @list), or `DIR@REV` where DIR is a folder here or ends in `/`."""
    if is_selection(arg):
        return True
    if "@" not in arg or Path(arg).exists():
        return False
    name = arg.rsplit("@", 1)[0]
    return name in ("", ".") or name.endswith("/") or Path(name).is_dir()


def hosts_at(arg: str) -> dict[str, str]:
    """A fleet side of `hostc diff`: host name → its spec as `load` takes it.  `DIR@REV`
    is the folder's hosts (`*.toml`, `*/node.toml`, as `hostc build DIR/` selects them)
    as git has them at REV; anything else is a selection of the working tree."""
    from hostc.fleet.selection import named, select

    path = Path(arg)
    if "@" not in arg or arg.startswith("@") or path.exists():
        return {h.name: str(h.spec) for h in select(arg)}
    name, rev = arg.rsplit("@", 1)
    at = Revision.at(rev, arg)
    folder = Path(name or ".")
    specs = [
        folder / n
        for n in sorted(map(str, at.listing(folder, arg)))
        if ("/" not in n and n.endswith(".toml"))
        or (n.count("/") == 1 and n.endswith("/node.toml"))
    ]
    if not specs:
        raise HostcError([file_error(arg, f"names no spec at {rev} (no *.toml or */node.toml)")])
    return {h.name: f"{h.spec}@{rev}" for h in named(specs)}
