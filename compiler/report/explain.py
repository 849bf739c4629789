"""`hostc explain SPEC WHAT`: the chain from source to output for one setting.

WHAT is a setting name as `hostc plan` prints it (`vm.swappiness`), a spec key path
(`kernel.transparent_hugepage`), or an artifact line (`/etc/sysctl.d/90-hostc.conf:12`).
For each setting found: where its value came from (origin), the Plan entry and its
reason, every artifact line carrying it, and where a host shows it.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

import attrs

from hostc.artifact import Artifact
from hostc.diagnostics import HostcError, at, error
from hostc.plan.model import Plan
from hostc.provenance import PresetLayer, Source, SpecKeys
from hostc.record import Record
from hostc.report.catalog import CatalogEntry, kernel, limits, partition, sysctls, workloads
from hostc.report.catalog_kubelet import kubelet
from hostc.report.catalog_runtime import runtime
from hostc.report.origin import ShownOrigin, origin
from hostc.settings.model import Cmdline, Family, Setting
from hostc.settings.table import SETTINGS
from hostc.spec import presets

#: a line number of at most 9 ASCII digits (int() takes other digits, and refuses 4,300)
_LINE = re.compile(r"(?P<path>[^:\s]+):(?P<line>[0-9]{1,9})")


@attrs.frozen(repr=False, eq=False)
class Carried(Record):
    path: str
    line: int
    text: str


@attrs.frozen(repr=False, eq=False)
class Found(Record):
    name: str
    value: str
    when: str
    reason: str
    origin: ShownOrigin
    lines: tuple[Carried, ...]
    observe: tuple[str, ...]
    #: how to change a value a preset gives: its spec key, or `preset.exclude` (None:
    #: the spec already sets it, or no row of the settings table names it)
    change: str | None = None


@attrs.frozen(repr=False, eq=False)
class Explanation(Record):
    what: str
    how: str  # setting | spec key | artifact line
    found: tuple[Found, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "what": self.what,
            "matched_as": self.how,
            "settings": [
                {**attrs.asdict(f, recurse=True), "lines": [attrs.asdict(c) for c in f.lines]}
                for f in self.found
            ],
        }

    def render(self) -> str:
        out: list[str] = []
        for f in self.found:
            o = f.origin
            where = (
                f" ({o.file}:{o.line})" if o.file and o.line else (f" ({o.file})" if o.file else "")
            )
            out += [
                f"{f.name} = {f.value}  [takes effect: {f.when}]",
                f"  source   {o.text}{where}",
            ]
            out += [f"           {d}" for d in o.detail]
            out += _clauses("  change   ", f.change) if f.change else []
            out += _clauses("  plan     ", f.reason)
            out += [f"  emitted  {c.path}:{c.line}  {c.text}" for c in f.lines] or [
                "  emitted  (no artifact line for this host's targets)"
            ]
            out += [f"  observe  {x}" for x in f.observe]
            out.append("")
        return "\n".join(out)


def _clauses(label: str, text: str) -> list[str]:
    """`text` under `label`, one clause (`; `) a line: a reason of several clauses read
    as one 300-character line (first-day-4 X2: the C-state limit's why, then where)."""
    pad = " " * len(label)
    return [(label if i == 0 else pad) + c for i, c in enumerate(text.split("; "))]


#: artifacts that check settings rather than carry them: the boot-time verifier's lines
#: are how a host observes a value (`observe`), not where it is set
CHECKERS = frozenset({"/usr/local/sbin/hostc-verify"})


def settings(plan: Plan) -> list[CatalogEntry]:
    """Every named setting, in `hostc plan`'s order: the partition, kernel arguments,
    sysctls, limits, workloads, then the runtime settings."""
    return [
        *partition(plan),
        *kernel(plan),
        *sysctls(plan),
        *limits(plan),
        *workloads(plan),
        *runtime(plan),
        *kubelet(plan),
    ]


def _lines(s: CatalogEntry, arts: list[Artifact]) -> tuple[Carried, ...]:
    out = []
    for a in arts:
        if a.path in CHECKERS:
            continue
        try:
            text = a.data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), start=1):
            if line.lstrip().startswith(("#", ";")) or not s.carries(a.path, line):
                continue
            out.append(Carried(a.path, n, line.strip()))
    return tuple(out)


def _norm(path: str) -> str:
    return path.replace('"', "").replace("'", "")


def _select(
    what: str, table: list[CatalogEntry], arts: list[Artifact]
) -> tuple[str, list[CatalogEntry]]:
    named = [s for s in table if s.name == what]
    if named:
        return "setting", named
    m = _LINE.fullmatch(what)
    if m and any(a.path == m["path"] for a in arts):
        return "artifact line", _at_line(m["path"], int(m["line"]), table, arts)
    key = _norm(what)
    by_key = [
        s
        for s in table
        if any(
            _norm(k) == key or _norm(k).startswith((key + ".", key + "["))
            for k in _keys(s.reason.source)
        )
    ]
    if by_key:
        return "spec key", by_key
    by_layer = [
        s
        for s in table
        if isinstance(s.reason.source, PresetLayer) and s.reason.source.layer.spec_key == key
    ]
    if by_layer:  # a key that turns a preset layer on: what the layer sets
        return "spec key", by_layer
    row = _row(what)
    if row is not None:
        return _by_row(what, row, table)
    last = key.rsplit(".", 1)[-1]
    by_last = [s for s in table if s.name in (last, key.split(".", 1)[-1])]
    if by_last and "." in key:
        return "spec key", by_last
    names = sorted({s.name for s in table} | {_norm(str(s.reason.source)) for s in table})
    close = difflib.get_close_matches(what, names, n=5, cutoff=0.5)
    raise HostcError(
        [
            error(
                at("WHAT"),
                f"{what!r} is no setting, spec key or artifact line of this host",
                hint=("close: " + ", ".join(close))
                if close
                else "`hostc plan SPEC` lists the settings",
            )
        ]
    )


def _keys(source: Source) -> list[str]:
    """The spec keys a value came from as written: one, or each of several (SpecKeys)."""
    return [str(k) for k in source.keys] if isinstance(source, SpecKeys) else [str(source)]


def _row(what: str) -> Setting[Any] | None:
    """The settings table's row named `what`, or whose node.toml key `what` is."""
    key = _norm(what)
    return next(
        (s for s in SETTINGS if s.name == what or (s.spec_key and ".".join(s.spec_key) == key)),
        None,
    )


#: the catalog names a rule of lowering gives a table row's Plan value beyond the row's
#: own (`shown_as`): an argument spelled off x86, a C-state cap at boot, a module
_SHOWN_AS = {
    "iommu": ("iommu.passthrough",),
    "max_cstate": ("intel_idle.max_cstate", "processor.max_cstate"),
    "load_ib_umad": ("ib_umad",),
}


def shown_as(row: Setting[Any]) -> tuple[str, ...]:
    """The catalog names of a row's Plan value: its name, each kernel argument the row
    declares (the catalog lists a kernel argument by its word: `pcie_aspm.policy` of a
    row named otherwise, `amd_pstate` or `intel_pstate` by vendor), and a rule's others."""
    words = (o.arg for o in row.observe if isinstance(o, Cmdline))
    return tuple(dict.fromkeys((row.name, *words, *_SHOWN_AS.get(row.name, ()))))


def _by_row(
    what: str, row: Setting[Any], table: list[CatalogEntry]
) -> tuple[str, list[CatalogEntry]]:
    names = shown_as(row)
    found = [s for s in table if s.name in names]
    how = "setting" if what == row.name else "spec key"
    if found:
        return how, found
    raise HostcError(
        [
            error(
                at("WHAT"),
                f"{what!r} is the setting {row.name}, which this host's Plan does not set",
                hint="its preset leaves it out for this role or host, or preset.exclude "
                "drops it; `hostc plan SPEC` lists what the host gets",
            )
        ]
    )


def select(
    plan: Plan, what: str, arts: list[Artifact] | None = None
) -> tuple[str, list[CatalogEntry]]:
    """How WHAT matched, and the catalog entries `hostc explain` shows for it (a
    HostcError when none: a row this Plan does not set says so by its name)."""
    return _select(what, settings(plan), arts or [])


def _at_line(
    path: str, line: int, table: list[CatalogEntry], arts: list[Artifact]
) -> list[CatalogEntry]:
    art = next(a for a in arts if a.path == path)
    lines = art.data.decode("utf-8", "replace").splitlines()
    if not 0 < line <= len(lines):
        raise HostcError([error(at("WHAT"), f"{path} has {len(lines)} lines, not {line}")])
    text = lines[line - 1]
    found = _carrying(path, text, table)
    if not found and text.strip() and not text.lstrip().startswith("#"):
        found = _block(path, lines, line - 1, table)
    if not found:
        raise HostcError(
            [
                error(
                    at("WHAT"),
                    f"{path}:{line} carries no setting: {text.strip()!r}",
                    hint="a comment, blank or structural line",
                )
            ]
        )
    return found


def _carrying(path: str, text: str, table: list[CatalogEntry]) -> list[CatalogEntry]:
    return [s for s in table if not text.lstrip().startswith("#") and s.carries(path, text)]


def _block(path: str, lines: list[str], at: int, table: list[CatalogEntry]) -> list[CatalogEntry]:
    """The setting of the block (lines between blank lines) holding line `at`: the
    nearest carrying line before it, else after it (a loop body, a `put` under its
    `for`).  A block that carries two settings names neither."""
    start, end = at, at
    while start > 0 and lines[start - 1].strip():
        start -= 1
    while end + 1 < len(lines) and lines[end + 1].strip():
        end += 1
    order = [*range(at - 1, start - 1, -1), *range(at + 1, end + 1)]
    carried = [(n, _carrying(path, lines[n], table)) for n in order]
    names = {s.name for _, found in carried for s in found}
    if len(names) != 1:
        return []
    return next(found for _, found in carried if found)


def explain(
    plan: Plan,
    arts: list[Artifact],
    what: str,
    spec: tuple[str, str],
    topo: tuple[str, str],
    ctx: presets.Context,
) -> Explanation:
    """`spec` and `topo` are (file name, text) of the spec and its topology snapshot;
    `ctx` the facts the preset conditions were judged on."""
    how, chosen = select(plan, what, arts)
    found = tuple(
        Found(
            s.name,
            s.value,
            s.when,
            str(s.reason),
            origin(s.name, s.reason, plan, spec, topo, ctx),
            _lines(s, arts),
            s.observe,
            _change(s),
        )
        for s in chosen
    )
    return Explanation(what, how, found)


def _change(s: CatalogEntry) -> str | None:
    """For a value a preset layer gives: the spec key that overrides it and the
    `preset.exclude` entry that leaves it out (first-day-4 X1)."""
    if not isinstance(s.reason.source, PresetLayer):
        return None
    row = next((r for r in SETTINGS if s.name in shown_as(r)), None)
    if row is None:
        return None
    exclude = f'preset.exclude = ["{row.name}"] leaves it out'
    if row.family is Family.SYSCTL:  # `sysctl_setting`: its key is `sysctl."<key>"`
        key = str(at("sysctl", row.name))
    elif row.spec_key is not None:
        key = str(at(*row.spec_key))
    else:
        return f"no spec key sets it; {exclude}"
    return f"{key} in the spec overrides it; {exclude}"
