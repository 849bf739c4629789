"""A Measurement as text (a table per CPU, then each excess with its fix), as JSON (the
stable document `--json` prints and `--record` stores; docs/measure.md describes it), and
as the few lines `hostc audit` adds from the last record.
"""

from __future__ import annotations

from typing import Any

from hostc.measure.model import CountRow, CpuReport, Measurement, Verdict

#: The document's kind and version: a change of a field's meaning bumps the version.
SCHEMA = "hostc-measure/1"
#: The longest name a table cell shows (the JSON has it whole).
NAME_WIDTH = 28
#: What the thread sampler cannot see (tasks.py), said with every report.
SAMPLER_MISSES = (
    "threads that start and exit between two scans, and the CPU of each run "
    "(a run is booked to the CPU a thread shows at the next scan)"
)


def _row(r: CountRow) -> dict[str, Any]:
    c = r.cause
    return {
        "source": str(r.kind),
        "key": r.key,
        "name": r.name,
        "count": r.count,
        "allowed": r.allowed,
        "verdict": str(r.verdict),
        "cause": {
            "kind": str(c.kind),
            "id": c.id,
            "why": c.why,
            "what": c.what,
            "source": c.source,
            "fix": c.fix,
        },
    }


def document(m: Measurement, *, host: str, spec: str) -> dict[str, Any]:
    """The JSON document (schema SCHEMA)."""
    s = m.sampling
    return {
        "schema": SCHEMA,
        "host": host,
        "spec": spec,
        "window_s": m.seconds,
        "ok": not m.excess,
        "excess": len(m.excess),
        "cpus": [
            {
                "cpu": c.cpu,
                "role": c.role,
                "workload": c.workload,
                "promised": list(c.promised),
                "switches": c.switches,
                "booked": c.booked,
                "online": c.here,
                "rows": [_row(r) for r in c.rows],
            }
            for c in m.cpus
        ],
        "host_rows": [_row(r) for r in m.host],
        "sampling": {
            "scans": s.scans,
            "most_threads": s.most,
            "partial": s.partial,
            "exited": s.exited,
            "counted_by": "switch-ins" if s.by_switches else "cpu-time",
            "misses": SAMPLER_MISSES,
        },
        "not_visible": list(m.not_visible),
        "osnoise": m.osnoise,
    }


def _cut(text: str, width: int = NAME_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _cause(r: CountRow) -> str:
    return f"{r.cause.id} (≤ {r.allowed})" if r.allowed else r.cause.id


def _isolated(c: CpuReport) -> list[str]:
    head = f"CPU {c.cpu}  isolated"
    if c.workload:
        head += f"  workload {c.workload}"
    if c.promised:
        head += "  " + " ".join(c.promised)
    if c.switches is not None:
        head += f"  switch-ins {c.switches} ({c.booked} by named threads)"
    if not c.here:
        return [head, "  not online here: no counters for it"]
    if not c.rows:
        return [head, "  nothing counted"]
    cells = [("SOURCE", "KEY", "NAME", "COUNT", "VERDICT", "CAUSE")] + [
        (str(r.kind), _cut(r.key, 10), _cut(r.name), str(r.count), str(r.verdict), _cause(r))
        for r in c.rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(5)]
    lines = [head]
    for row in cells:
        left = [row[i].rjust(widths[i]) if i == 3 else row[i].ljust(widths[i]) for i in range(5)]
        lines.append(("  " + "  ".join(left) + "  " + row[5]).rstrip())
    return lines


def _housekeeping(c: CpuReport) -> str:
    if not c.here:
        return f"CPU {c.cpu}  housekeeping: not online here"
    parts = [f"{r.kind} {r.count}" for r in sorted(c.rows, key=lambda r: -r.count)]
    if c.switches is not None:
        parts.append(f"switch-ins {c.switches}")
    return f"CPU {c.cpu}  housekeeping: " + (", ".join(parts) or "nothing counted")


def _excess(m: Measurement) -> list[str]:
    """Each excess under the setting it breaks, with that setting's fix once."""
    groups: dict[tuple[str, str, str, str], list[CountRow]] = {}
    for r in m.excess:
        c = r.cause
        groups.setdefault((c.id, c.source, c.what, c.fix), []).append(r)
    if not groups:
        return []
    out = [f"{len(m.excess)} excess: a Plan setting not in effect"]
    for (id_, source, what, fix), rows in groups.items():
        out.append(f"  {id_} ({source}): {what}")
        for r in rows:
            where = f"CPU {r.cpu} " if r.cpu is not None else ""
            out.append(f"    {where}{r.kind} {r.key} {r.name} x{r.count}: {r.cause.why}")
        out.append(f"    fix: {fix}")
    return out


def text(m: Measurement, *, host: str, spec: str) -> str:
    """The report a person reads: per CPU, then each excess with its fix."""
    out = [f"hostc measure: {m.seconds:g} s on {host} ({spec})", ""]
    for c in m.cpus:
        if c.role == "isolated":
            out += [*_isolated(c), ""]
    out += [_housekeeping(c) for c in m.cpus if c.role != "isolated"]
    for r in m.host:
        out.append(f"host  {r.kind} {r.key} {r.count}: {r.cause.why}")
    out.append("")
    out += _excess(m) or [
        "no excess: every count on an isolated CPU is the workload's own, allowed, left out "
        "on purpose or the kernel's"
        if any(c.role == "isolated" for c in m.cpus)
        else "the Plan isolates no CPU: nothing is promised"
    ]
    s = m.sampling
    out.append(
        f"threads: {s.scans} scans of up to {s.most} threads, counted by "
        f"{'switch-ins' if s.by_switches else 'CPU time (no per-thread schedstat)'}"
        + (", some scans stopped at their limit" if s.partial else "")
        + f"; not seen: {SAMPLER_MISSES}"
    )
    out += [f"not visible: {n}" for n in m.not_visible]
    out.append(f"osnoise: {m.osnoise}")
    return "\n".join(out) + "\n"


def summary(doc: dict[str, Any], where: str) -> str:
    """The lines `hostc audit` prints from a record (the last `hostc measure` here)."""
    excess = [
        (c.get("cpu"), r)
        for c in doc.get("cpus", [])
        if isinstance(c, dict)
        for r in c.get("rows", [])
        if isinstance(r, dict) and r.get("verdict") == str(Verdict.EXCESS)
    ]
    excess += [
        (None, r)
        for r in doc.get("host_rows", [])
        if isinstance(r, dict) and r.get("verdict") == str(Verdict.EXCESS)
    ]
    head = f"last hostc measure ({where}, {doc.get('window_s')} s"
    taken = doc.get("taken")
    head += f", {taken})" if taken else ")"
    if not excess:
        return f"{head}: no excess on the isolated CPUs\n"
    lines = [f"{head}: {len(excess)} excess"]
    for cpu, r in excess[:5]:
        where_ = f"CPU {cpu} " if cpu is not None else ""
        cause = r.get("cause")
        lines.append(
            f"  {where_}{r.get('source')} {r.get('key')} {r.get('name')} x{r.get('count')}: "
            f"{cause.get('id') if isinstance(cause, dict) else '?'}"
        )
    if len(excess) > 5:
        lines.append(f"  … {len(excess) - 5} more: see the record")
    return "\n".join(lines) + "\n"
