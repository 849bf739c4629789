"""Review at fleet scale: `hostc diff DIR@REV DIR` (each host's Plan diff) and the
summary of `hostc pre-commit` (each host's stale files), hosts whose changes are
identical grouped, so that twenty hosts with one change read as one entry, not twenty.

A change is grouped by what it is, never by what names its host: CPU moves and setting
values (old → new) with the artifacts that change and the cost on a running host, or
a file's changed lines.  Reasons are left out of the key (they name each host's spec);
`hostc diff HOST@REV HOST` shows them for one host."""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from hostc.delivery.disruption import Disruption, fleet_line
from hostc.diagnostics import Diagnostic, HostcError, printable
from hostc.fleet.diffinputs import hosts_at, review
from hostc.fleet.diffskip import preload, same_hosts
from hostc.fleet.gitrev import pinned
from hostc.record import Record
from hostc.report.review import (
    Review,
    Side,
    disruption_line,
    md_code,
    md_text,
    spec_line,
    to_json,
)


@attrs.frozen(repr=False, eq=False)
class FleetGroup(Record):
    hosts: tuple[str, ...]
    review: Review  # the first host's: what every host of the group changes alike


@attrs.frozen(repr=False, eq=False)
class FleetReview(Record):
    old: str
    new: str
    groups: tuple[FleetGroup, ...]  # the hosts that change, largest group first
    unchanged: tuple[str, ...]
    added: tuple[str, ...]  # hosts only NEW has
    removed: tuple[str, ...]  # hosts only OLD has
    failed: tuple[tuple[str, tuple[Diagnostic, ...]], ...]  # host, why it was not compared

    @property
    def changed(self) -> bool:
        return bool(self.groups or self.added or self.removed)


K = TypeVar("K", bound=Hashable)


def grouped(keys: Iterable[tuple[str, K]]) -> list[tuple[K, tuple[str, ...]]]:
    """(key, hosts) per distinct key: the largest group first, then by first host."""
    found: dict[K, list[str]] = {}
    for host, key in keys:
        found.setdefault(key, []).append(host)
    return sorted(
        ((k, tuple(hosts)) for k, hosts in found.items()), key=lambda kh: (-len(kh[1]), kh[1])
    )


def _key(r: Review) -> Hashable:
    """A host's change without its reasons (they name the host's spec)."""
    return (
        tuple((m.node, m.cpus, m.old, m.new) for m in r.plan.moves),
        tuple((s.name, s.change, s.old, s.new) for s in r.plan.settings),
        None if r.files is None else tuple((f.target, f.path, f.change) for f in r.files),
        disruption_line(r) if r.changed else None,
        tuple((c.key, c.old, c.new) for c in r.spec),
    )


def _one(pair: tuple[str, str, str]) -> tuple[str, Review | tuple[Diagnostic, ...]]:
    """One host's Review, its sides cut to their labels (what the fleet review shows),
    or the diagnostics of a side that fails."""
    host, old, new = pair
    try:
        r = review(old, new)
    except HostcError as e:
        return host, e.diagnostics
    return host, attrs.evolve(r, old=Side(r.old.label, {}), new=Side(r.new.label, {}))


def _each(
    pairs: list[tuple[str, str, str]], jobs: int | None
) -> list[tuple[str, Review | tuple[Diagnostic, ...]]]:
    """Every host's review, in `pairs` order: in `jobs` processes (default: one per CPU;
    forked where the platform can, so each starts with hostc imported)."""
    jobs = max(1, jobs or os.cpu_count() or 1)
    if jobs == 1 or len(pairs) < 2:
        return [_one(p) for p in pairs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    )
    with ProcessPoolExecutor(max_workers=min(jobs, len(pairs)), mp_context=ctx) as pool:
        return list(pool.map(_one, pairs))


def fleet_review(old: str, new: str, jobs: int | None = None) -> FleetReview:
    """Each host of OLD against the same-named host of NEW (`hostc.report.review`), each side
    a folder at a revision (`DIR@REV`) or a selection of the working tree.  A host that
    fails to compile on a side is reported with its diagnostics; the others still are."""
    reviews: list[tuple[str, Review]] = []
    unchanged: list[str] = []
    failed: list[tuple[str, tuple[Diagnostic, ...]]] = []
    with pinned():  # a revision resolved, listed and read once, its workers inheriting it
        a, b = hosts_at(old), hosts_at(new)
        both = [(h, a[h], b[h]) for h in sorted(set(a) & set(b))]
        same = same_hosts(old, new, both)  # the same input files on both sides: not compiled
        unchanged += [h for h, _, _ in both if h in same]
        todo = [p for p in both if p[0] not in same]
        preload(todo)
        for host, r in _each(todo, jobs):
            if not isinstance(r, Review):
                failed.append((host, r))
            elif r.changed:
                reviews.append((host, r))
            else:
                unchanged.append(host)
    first = dict(reviews)  # a group's Review: its first host's
    unchanged.sort()
    groups = [
        FleetGroup(hosts, first[hosts[0]]) for _, hosts in grouped((h, _key(r)) for h, r in reviews)
    ]
    return FleetReview(
        old,
        new,
        tuple(groups),
        tuple(unchanged),
        tuple(sorted(set(b) - set(a))),
        tuple(sorted(set(a) - set(b))),
        tuple(failed),
    )


def _hosts(n: int) -> str:
    return f"{n} host" if n == 1 else f"{n} hosts"


def _change_lines(r: Review) -> list[str]:
    """A group's change in Markdown, one item per line; every input text escaped."""
    text, code = md_text, md_code
    out = [f"- spec {spec_line(attrs.evolve(c, where=None))}" for c in r.spec]
    out += [
        f"- node {text(m.node)}: CPUs {text(m.cpus)}: {text(m.old)} → {text(m.new)}"
        for m in r.plan.moves
    ]
    for s in r.plan.settings:
        if s.change == "changed" and not (s.old or s.new):
            out.append(f"- reason changed for {code(s.name)}")
        elif s.change == "changed":
            out.append(f"- changed {code(s.name)}: {code(s.old)} → {code(s.new)}")
        elif s.change == "added":
            out.append(f"- added {code(s.name)}: {code(s.new)}")
        else:
            out.append(f"- removed {code(s.name)}: {code(s.old)}")
    if r.files:
        names = ", ".join(text(f"{f.target}:{f.path}") for f in r.files)
        out.append(f"- artifacts: {len(r.files)} change ({names})")
    out.append(f"- on a running host: {text(disruption_line(r))}")
    return out


def fleet_markdown(f: FleetReview) -> str:
    """The review as Markdown for a PR comment: one entry per group of hosts."""
    total = sum(len(g.hosts) for g in f.groups)
    out = [
        f"### hostc diff: {md_text(f.old)} → {md_text(f.new)}",
        "",
        md_text(
            f"{_hosts(total)} change ({len(f.groups)} distinct change(s)), "
            f"{len(f.unchanged)} unchanged, {len(f.added)} added, {len(f.removed)} removed"
            + (f", {len(f.failed)} not compared" if f.failed else "")
        ),
    ]
    for g in f.groups:
        names = ", ".join(md_text(h) for h in g.hosts)
        out += ["", f"**{_hosts(len(g.hosts))}:** {names}", ""]
        out += _change_lines(g.review)
    for what, hosts in (("added", f.added), ("removed", f.removed), ("unchanged", f.unchanged)):
        if hosts:
            out += ["", f"**{what} ({len(hosts)}):** " + ", ".join(md_text(h) for h in hosts)]
    for host, diags in f.failed:
        why = "; ".join(d.message for d in diags[:1])
        out += ["", f"**not compared:** {md_text(host)}: {md_text(why)}"]
    if f.groups:
        out += ["", md_text("Reasons per host: hostc diff HOST@REV HOST")]
    return "\n".join([*out, ""])


def fleet_json(f: FleetReview) -> dict[str, Any]:
    def group(g: FleetGroup) -> dict[str, Any]:
        one = to_json(g.review)
        settings = [{k: s[k] for k in ("name", "change", "old", "new")} for s in one["settings"]]
        artifacts = one["artifacts"]
        if artifacts is not None:
            artifacts = [{k: a[k] for k in ("target", "path", "change")} for a in artifacts]
        return {
            "hosts": list(g.hosts),
            "cpus": one["cpus"],
            "settings": settings,
            "artifacts": artifacts,
            # each host's own file and line differ: the keys and values are the group's
            "spec": [{k: c[k] for k in ("key", "old", "new")} for c in one["spec"]],
            "disruption": one["disruption"],  # the object `hostc diff HOST@REV HOST` gives
        }

    rows: dict[str, Disruption | None] = {h: g.review.disruption for g in f.groups for h in g.hosts}
    rows |= dict.fromkeys(f.unchanged, NO_CHANGE)
    return {
        "old": f.old,
        "new": f.new,
        "changed": f.changed,
        "disruption": fleet_disruption(rows),
        "groups": [group(g) for g in f.groups],
        "unchanged": list(f.unchanged),
        "added": list(f.added),
        "removed": list(f.removed),
        "failed": {h: [d.to_json() for d in diags] for h, diags in f.failed},
    }


#: a host whose build does not change: what `hostc diff` says of an unchanged host
NO_CHANGE = Disruption((), (), False, (), (), 0)

#: Disruption.summary's words, the costliest first
WORDS = ("reboot", "restart", "live", "none")


def fleet_disruption(rows: Mapping[str, Disruption | None]) -> dict[str, Any]:
    """A fleet's answer to "does this reboot or restart anything?" as one object, shaped
    as each host's (`Disruption.to_json`: `reboot`, `restart`, `kubelet_reset`, `live`,
    `later`, `reboot_for`, `files`, `summary`) summed over the hosts (any reboot, every
    unit restarted, the costliest `summary`), with `hosts`: each `summary` word's hosts,
    and `line`, the sentence `hostc changed` ends with.  A host whose cost was not
    computed (a side is a plan.json) is under `hosts.unknown`, and makes `summary`
    `unknown` unless a known host reboots: a bot never reads "none" for it."""
    known = {h: d for h, d in rows.items() if d is not None}
    by_word: dict[str, list[str]] = {w: [] for w in (*WORDS, "unknown")}
    for h in sorted(rows):
        d = rows[h]
        by_word["unknown" if d is None else d.summary].append(h)
    worst = next((w for w in WORDS if by_word[w]), "none")
    if by_word["unknown"] and worst != "reboot":
        worst = "unknown"

    def union(field: str) -> list[str]:
        return sorted({x for d in known.values() for x in getattr(d, field)})

    return {
        "reboot": any(d.reboot for d in known.values()),
        "restart": union("restart"),
        "kubelet_reset": any(d.kubelet_reset for d in known.values()),
        "live": union("live"),
        "later": union("later"),
        "reboot_for": union("reboot_for"),
        "files": sum(d.files for d in known.values()),
        "summary": worst,
        "hosts": {w: hosts for w, hosts in by_word.items() if hosts},
        "line": fleet_line(known),
    }


#: the changed lines one file shows per group in `pre-commit`'s summary
SHOWN_LINES = 6


def _file_key(rel: str, text: str) -> tuple[str, ...]:
    """One stale file's change without its context lines: `REL: new file (N lines)`,
    `REL: removed (N lines)`, `REL: WHAT` for what is not a file (a link, a directory),
    or `REL:` and its changed lines."""
    lines = text.splitlines()
    body = [ln for ln in lines[2:] if ln[:1] in "+-"]
    first = lines[0] if lines else ""
    if first.endswith(")") and " (" in first:  # `--- a/REL (a symbolic link, not followed)`
        return (f"{rel}: {first.rsplit(' (', 1)[1][:-1]}",)
    if first.startswith("--- /dev/null"):
        return (f"{rel}: new file ({len(body)} lines)",)
    if len(lines) > 1 and lines[1].startswith("+++ /dev/null"):
        return (f"{rel}: removed ({len(body)} lines)",)
    plus = sum(ln.startswith("+") for ln in body)
    return (f"{rel} (+{plus} −{len(body) - plus}):", *body)


def stale_summary(
    found: Sequence[tuple[str, Sequence[tuple[str, str]]]],
    costs: Mapping[str, str],
    commands: tuple[str, str],
) -> str:
    """`hostc pre-commit`: per group of hosts whose committed output is stale alike, what
    it costs a running host (`costs`: host → `Disruption.line()`), its files and their
    changed lines (at most SHOWN_LINES each), as terminal text; then the commands that
    update the output and show the Plan-level change (`commands`, as given)."""
    keys = (
        (host, (costs.get(host, ""), tuple(_file_key(rel, text) for rel, text in diffs)))
        for host, diffs in found
        if diffs
    )
    out: list[str] = []
    for (cost, files), hosts in grouped(keys):
        out.append(f"{_hosts(len(hosts))}: {', '.join(printable(h) for h in hosts)}")
        if cost:
            out.append(f"  on a running host: {printable(cost)}")
        for first, *changed in files:
            out.append(f"  {printable(first)}")
            out += [f"    {printable(ln)}" for ln in changed[:SHOWN_LINES]]
            if len(changed) > SHOWN_LINES:
                out.append(f"    … {len(changed) - SHOWN_LINES} more changed line(s)")
    if out:
        update, plan_level = commands
        out += [
            f"to update: {printable(update)}",
            f"the Plan-level change: {printable(plan_level)}",
            "each file's unified diff: --diff",
        ]
    return "\n".join(out) + "\n" if out else ""
