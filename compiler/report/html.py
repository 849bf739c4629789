"""`hostc diff OLD NEW --format html`: one self-contained review page.

The two partition pictures side by side (inline SVG), the CPU moves, every setting in
a table with the changed ones highlighted and both reasons, and the artifact diffs
folded per file (`<details>`).  Inline CSS only: no script, no external resource.
Every text from the input is escaped here (`svgdoc.markup`: controls, bidi and
zero-width characters made visible, then `&<>"'` as references) or by the SVG writer.
"""

from __future__ import annotations

from hostc.cpuset import CpuSet
from hostc.report.plandiff import show, with_partition
from hostc.report.review import Review, Side, disruption_line
from hostc.report.svgdoc import markup

CSS = """
body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;color:#1f1f1f;margin:24px;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.pics{display:flex;gap:16px}.pics figure{flex:1;margin:0;min-width:0}
.pics svg{width:100%;height:auto;border:1px solid #ccc}
figcaption{font-weight:bold;margin-bottom:6px;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border:1px solid #d0d0d0;padding:4px 6px;text-align:left;vertical-align:top;
overflow-wrap:anywhere}
th{background:#f0f0f0}tr.changed td{background:#fff4d6}tr.added td{background:#e3f4e1}
tr.removed td{background:#fbe3e3}td.tag{font-weight:bold;white-space:nowrap}
code,pre{font-family:"DejaVu Sans Mono",monospace;font-size:12px}
pre{background:#f7f7f5;padding:8px;overflow-x:auto}
.add{color:#1b6e1b}.del{color:#a3313d}.hunk{color:#56449c}
summary{cursor:pointer;padding:4px 0}.none{color:#5a5a5a}
.cost{display:flex;gap:10px;align-items:baseline;margin:8px 0 4px;font-size:15px}
.badge{font-weight:bold;text-transform:uppercase;letter-spacing:.05em;padding:3px 10px;
border-radius:4px;color:#fff;white-space:nowrap}
.badge.reboot{background:#b3261e}.badge.restart{background:#a15c00}
.badge.live{background:#1b6e1b}.badge.none,.badge.unknown{background:#5a5a5a}
td.name{min-width:20ch}td.val{min-width:18ch}td.why{min-width:24ch}
"""

#: what each badge word means, beside it
BADGE_WORDS = {
    "reboot": "reboot",
    "restart": "restart",
    "live": "live",
    "none": "none",
    "unknown": "not computed",
}


def page(r: Review) -> str:
    """The review page as text (deterministic: Plan order, no timestamps)."""
    title = f"hostc diff: {r.old.label} → {r.new.label}"
    body = [
        f"<h1>{markup(title)}</h1>",
        *([_badge(r)] if r.changed else []),
        f"<p>{_verdict(r)}</p>",
        *(["<h2>Spec keys changed</h2>", _spec(r)] if r.spec else []),
        "<h2>Settings</h2>",
        _settings(r),
        "<h2>CPUs that change role</h2>",
        _moves(r),
        "<h2>Partition</h2>",
        _pictures(r),
        "<h2>Artifacts</h2>",
        _files(r),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{markup(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def _badge(r: Review) -> str:
    """The cost on a running host as a coloured word at the top (reboot, restart, live,
    none: `Disruption.summary`), the sentence beside it."""
    word = "unknown" if r.disruption is None else r.disruption.summary
    return (
        f'<p class="cost"><span class="badge {word}">{BADGE_WORDS[word]}</span>'
        f"<span><b>On a running host:</b> {markup(disruption_line(r))}</span></p>"
    )


def _spec(r: Review) -> str:
    """The keys the reviewer edited, as written, above the Plan detail."""
    rows = "".join(
        f'<tr><td class="name"><code>{markup(c.key)}</code></td>'
        f'<td class="val"><code>{markup(c.old or "(not set)")}</code></td>'
        f'<td class="val"><code>{markup(c.new or "(not set)")}</code></td>'
        f"<td>{markup(c.where or '')}</td></tr>"
        for c in r.spec
    )
    return f"<table><tr><th>key</th><th>old</th><th>new</th><th>set in</th></tr>{rows}</table>"


def _verdict(r: Review) -> str:
    if not r.changed:
        return "No change at Plan level."
    files = "not compared" if r.files is None else str(len(r.files))
    return markup(
        f"{len(r.plan.moves)} CPU move(s), {len(r.plan.settings)} setting change(s), "
        f"artifacts changed: {files}."
    )


def _moved(r: Review) -> CpuSet:
    """The CPUs whose role changes: outlined in both pictures."""
    out = CpuSet()
    for m in r.plan.moves:
        out = out | CpuSet.parse(m.cpus)
    return out


def _pictures(r: Review) -> str:
    """Both pictures side by side; folded when no CPU changes its role."""
    pics = '<div class="pics">' + _picture(r.old, _moved(r)) + _picture(r.new, _moved(r))
    if r.plan.moves:
        return pics + "</div>"
    return (
        f"<details><summary>unchanged: the partition of both sides</summary>{pics}</div></details>"
    )


def _picture(side: Side, changed: CpuSet) -> str:
    caption = f"<figcaption>{markup(side.label)}</figcaption>"
    if side.plan is None:
        return f'<figure>{caption}<p class="none">no picture: this side is a plan.json</p></figure>'
    from hostc.report.svg import render_svg

    svg = render_svg(side.plan, changed).split("\n", 1)[1]  # without the XML declaration
    return f"<figure>{caption}\n{svg}</figure>"


def _moves(r: Review) -> str:
    if not r.plan.moves:
        return '<p class="none">No CPU changes its role.</p>'
    rows = "".join(
        f"<tr><td>{markup(m.node)}</td><td><code>{markup(m.cpus)}</code></td>"
        f"<td>{markup(m.old)}</td><td>{markup(m.new)}</td></tr>"
        for m in r.plan.moves
    )
    return f"<table><tr><th>node</th><th>CPUs</th><th>was</th><th>now</th></tr>{rows}</table>"


def _settings(r: Review) -> str:
    """Every setting of both sides: the changed ones first, highlighted, with both
    reasons; the unchanged ones after them, folded (`<details>`), each in Plan order."""
    a, b = with_partition(r.old.data), with_partition(r.new.data)
    changes = {s.name: s.change for s in r.plan.settings}
    names = [*a, *(k for k in b if k not in a)]
    changed = [n for n in names if n in changes]
    same = [n for n in names if n not in changes]
    out = _table(changed, a, b, changes) if changed else '<p class="none">No setting changes.</p>'
    if same:
        out += (
            f"<details><summary>{len(same)} unchanged setting(s)</summary>"
            f"{_table(same, a, b, changes)}</details>"
        )
    return out


Rows = dict[str, tuple[dict[str, str], str | None]]


def _reasons(name: str, a: Rows, b: Rows) -> tuple[str, str]:
    x, y = a.get(name), b.get(name)
    return ((x[1] or "") if x else "", (y[1] or "") if y else "")


def _table(names: list[str], a: Rows, b: Rows, changes: dict[str, str]) -> str:
    """One `reason` column when every row's two reasons are the same, else `old reason`
    and `new reason` (a row whose two are the same spans both)."""
    one = all(len(set(_reasons(n, a, b))) == 1 for n in names)
    heads = (
        "setting",
        "change",
        "old",
        "new",
        *(("reason",) if one else ("old reason", "new reason")),
    )
    head = "".join(f"<th>{h}</th>" for h in heads)
    return f"<table><tr>{head}</tr>{_rows(names, a, b, changes, one)}</table>"


def _rows(names: list[str], a: Rows, b: Rows, changes: dict[str, str], one: bool) -> str:
    rows = []
    for name in names:
        x, y = a.get(name), b.get(name)
        change = changes.get(name, "")
        was, now = _reasons(name, a, b)
        if one or was == now:
            span = "" if one else ' colspan="2"'
            why = f'<td class="why"{span}>{markup(now)}</td>'
        else:
            why = f'<td class="why">{markup(was)}</td><td class="why">{markup(now)}</td>'
        rows.append(
            f'<tr class="{change or "same"}"><td class="name">{markup(name)}</td>'
            f'<td class="tag">{markup(change or "same")}</td>'
            f'<td class="val">{markup(show(x[0]) if x else "")}</td>'
            f'<td class="val">{markup(show(y[0]) if y else "")}</td>{why}</tr>'
        )
    return "".join(rows)


def _line(text: str) -> str:
    cls = (
        "hunk"
        if text.startswith("@@")
        else "add"
        if text.startswith("+")
        else "del"
        if text.startswith("-")
        else ""
    )
    return f'<span class="{cls}">{markup(text)}</span>' if cls else markup(text)


def _files(r: Review) -> str:
    if r.files is None:
        return '<p class="none">Not compared: a side is a plan.json.</p>'
    if not r.files:
        return '<p class="none">No artifact changes.</p>'
    out = []
    for f in r.files:
        lines = "\n".join(_line(t) for t in f.diff.splitlines()) or "(binary)"
        out.append(
            f"<details><summary>{markup(f.change)} <code>{markup(f.target)}:"
            f"{markup(f.path)}</code> (+{f.added} −{f.removed})</summary>"
            f"<pre>{lines}</pre></details>"
        )
    return "\n".join(out)
