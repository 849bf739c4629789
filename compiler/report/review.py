"""`hostc diff OLD NEW`: the Plan-level change, and the artifacts whose bytes change,
as Markdown for a PR comment and as JSON for bots.  The sides come loaded (a spec
compiled, a plan.json, `SPEC@REV`: `hostc.fleet.diffinputs`); this module only
compares and shows them."""

from __future__ import annotations

import difflib
import re
from typing import Any

import attrs

from hostc.artifact import Artifact
from hostc.delivery.disruption import Disruption, compute, state
from hostc.diagnostics import printable
from hostc.plan.model import Plan
from hostc.record import Record
from hostc.report.plandiff import PlanDiff, diff, named, setting_name
from hostc.report.specdiff import SpecChange, spec_changes
from hostc.spec.model import HostSpec
from hostc.targets._escape import oneline


@attrs.frozen(repr=False, eq=False)
class Side(Record):
    """One side of `hostc diff`, loaded: its plan.json data, and from a spec its Plan,
    artifacts and the spec as merged."""

    label: str
    data: dict[str, Any]  # plan.json's data
    plan: Plan | None = None  # None for a saved plan.json
    artifacts: tuple[Artifact, ...] | None = None
    #: each setting `preset.exclude` leaves out, with where it says so (`node.toml:31`)
    excluded: tuple[tuple[str, str], ...] = ()
    #: the spec as merged (None: a saved plan.json), for the spec-level diff
    spec: HostSpec | None = None


@attrs.frozen(repr=False, eq=False)
class FileChange(Record):
    target: str
    path: str
    change: str  # added | removed | changed
    diff: str  # unified diff of the text ("" for binary files)
    added: int
    removed: int


@attrs.frozen(repr=False, eq=False)
class Review(Record):
    old: Side
    new: Side
    plan: PlanDiff
    files: tuple[FileChange, ...] | None  # None: a side is a plan.json, no artifacts
    #: what the change costs a running host (None: a side is a plan.json)
    disruption: Disruption | None = None
    #: the spec keys that changed, as written (none when a side is a plan.json)
    spec: tuple[SpecChange, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.plan) or bool(self.files)


def _text(a: Artifact | None) -> list[str] | None:
    if a is None:
        return []
    try:
        return a.data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def files(old: tuple[Artifact, ...], new: tuple[Artifact, ...]) -> tuple[FileChange, ...]:
    a = {(x.target, x.path): x for x in old}
    b = {(x.target, x.path): x for x in new}
    out = []
    for key in [*a, *(k for k in b if k not in a)]:
        x, y = a.get(key), b.get(key)
        if x is not None and y is not None and x.data == y.data and x.mode == y.mode:
            continue
        change = "added" if x is None else "removed" if y is None else "changed"
        before, after = _text(x), _text(y)
        if before is None or after is None:
            out.append(FileChange(*key, change, "", 0, 0))
            continue
        name = f"{key[0]}:{key[1]}"
        lines = list(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}"))
        plus = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
        minus = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
        out.append(FileChange(*key, change, "".join(lines), plus, minus))
    return tuple(out)


def compare(old: Side, new: Side) -> Review:
    """The review of two loaded sides: the Plan diff, and from specs the artifacts whose
    bytes change and what the change costs a running host."""
    changes = cost = None
    if old.artifacts is not None and new.artifacts is not None:
        changes = files(old.artifacts, new.artifacts)
        if old.plan is not None and new.plan is not None:
            cost = compute(state(old.plan, old.artifacts), state(new.plan, new.artifacts))
    edited = spec_changes(old.spec, new.spec, old.plan, new.plan)
    plan = _why_removed(diff(old.data, new.data), old, new)
    return Review(old, new, plan, changes, cost, edited)


def _why_removed(d: PlanDiff, old: Side, new: Side) -> PlanDiff:
    """A removed setting that the new side's `preset.exclude` names says so, where."""
    if not new.excluded:
        return d
    where = dict(new.excluded)
    names = named(old.data)  # every path's row name, once
    out = []
    for s in d.settings:
        name = setting_name(s.name, names) if s.change == "removed" else None
        if name in where:
            why = f"preset.exclude ({where[name]}): {name} is left out"
            s = attrs.evolve(s, new_reason=why)
        out.append(s)
    return attrs.evolve(d, settings=tuple(out))


def to_json(r: Review) -> dict[str, Any]:
    return {
        "old": r.old.label,
        "new": r.new.label,
        "changed": r.changed,
        "cpus": [attrs.asdict(m) for m in r.plan.moves],
        "settings": [attrs.asdict(s) for s in r.plan.settings],
        "artifacts": None if r.files is None else [attrs.asdict(f) for f in r.files],
        "disruption": None if r.disruption is None else r.disruption.to_json(),
        "spec": [attrs.asdict(c) for c in r.spec],
    }


def spec_line(c: SpecChange) -> str:
    """`hugepages.total = 64 → 96`, as Markdown (the key and values as code)."""
    was = "(not set)" if c.old is None else md_code(c.old)
    now = "(not set)" if c.new is None else md_code(c.new)
    where = f" ({md_text(c.where)})" if c.where else ""
    return f"{md_code(c.key)}: {was} → {now}{where}"


def disruption_line(r: Review) -> str:
    """The change's cost on a running host, in one line."""
    if r.disruption is None:
        return "not computed: a side is a plan.json (give specs to compare artifacts)"
    return r.disruption.line()


#: The ASCII punctuation that means something inside a CommonMark/GFM line (code, emphasis,
#: links and images, HTML and comments, entities, table cells, strikethrough); each is
#: backslash-escaped (CommonMark 2.4).  md_text never starts a line, so `#`, `-` and
#: `1.` need none.
_MD_PUNCT = frozenset("\\`*_[]<>&|~!")


def md_text(text: object) -> str:
    """Any text as literal Markdown prose, on one line: the Markdown medium's one escaping
    function (with `md_code`).  Terminal-unsafe characters (controls, bidi, zero-width)
    become visible escapes, line breaks a space, and every ASCII punctuation character is
    backslash-escaped, so no `<!--`, tag, link, emphasis, heading or table pipe of a
    plan.json's strings is read as Markdown or HTML."""
    s = oneline(printable(text))
    return "".join("\\" + c if c in _MD_PUNCT else c for c in s)


def md_code(text: str | None) -> str:
    """Inline Markdown code for any value: one line, terminal-unsafe characters escaped,
    fenced by one backtick more than its longest backtick run (code spans take no HTML)."""
    if text is None or text == "":
        return "(none)"
    s = oneline(printable(text))
    if not s:
        return "(none)"
    run = max((len(r) for r in re.findall("`+", s)), default=0)
    fence = "`" * (run + 1)
    return f"{fence} {s} {fence}" if run else f"`{s}`"


def to_markdown(r: Review) -> str:
    out = [f"### hostc diff: {md_text(r.old.label)} → {md_text(r.new.label)}", ""]
    if r.changed:
        out += [f"**On a running host:** {md_text(disruption_line(r))}", ""]
    if not r.changed:
        files = "no artifact changes" if r.files is not None else "artifacts not compared"
        return "\n".join([*out, f"No change at Plan level; {files}.", ""])
    if r.spec:
        out += ["**Spec** (the keys as written; the Plan detail follows)", ""]
        out += [f"- {spec_line(c)}" for c in r.spec]
        out += [""]
    out += ["**CPUs**", ""]
    out += [
        f"- node {md_text(m.node)}: CPUs {md_text(m.cpus)}: {md_text(m.old)} → {md_text(m.new)}"
        for m in r.plan.moves
    ] or ["- no CPU changes its role"]
    out += ["", "**Settings**", ""]
    for s in r.plan.settings:
        if s.change == "changed" and not (s.old or s.new):
            out.append(f"- reason changed for {md_code(s.name)}")
            out.append(f"  - was: {md_text(s.old_reason or '(no reason)')}")
            out.append(f"  - now: {md_text(s.new_reason or '(no reason)')}")
        elif s.change == "changed":
            out.append(f"- changed {md_code(s.name)}: {md_code(s.old)} → {md_code(s.new)}")
            if s.old_reason == s.new_reason:
                out.append(f"  - why (both): {md_text(s.new_reason or '(no reason)')}")
            else:
                out.append(f"  - was: {md_text(s.old_reason or '(no reason)')}")
                out.append(f"  - now: {md_text(s.new_reason or '(no reason)')}")
        elif s.change == "added":
            out.append(f"- added {md_code(s.name)}: {md_code(s.new)}")
            out.append(f"  - why: {md_text(s.new_reason or '(no reason)')}")
        else:
            out.append(f"- removed {md_code(s.name)}: {md_code(s.old)}")
            out.append(f"  - was: {md_text(s.old_reason or '(no reason)')}")
            if s.new_reason:
                out.append(f"  - now: {md_text(s.new_reason)}")
    if not r.plan.settings:
        out.append("- no setting changes")
    out += ["", "**Artifacts**", ""]
    if r.files is None:
        out.append("- not compared: a side is a plan.json (give specs to compare artifacts)")
    else:
        out += [
            f"- {f.change} {md_text(f.target)}:{md_text(f.path)} (+{f.added} −{f.removed})"
            for f in r.files
        ]
        out += [] if r.files else ["- no artifact changes"]
    return "\n".join([*out, ""])
