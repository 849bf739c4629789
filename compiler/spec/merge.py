"""The merge of spec layers, at the TOML-data level: NixOS's module system, in TOML.

Each layer (one file's tables, or its `[force]` table) becomes a tree whose
leaves remember their value, their priority and where they were written.  Two
trees combine by one rule per setting:

- a scalar (and an array that is a value, like `gpus`) is one leaf: the later
  layer wins unless the earlier one has a stronger priority (`[force]`, NixOS's
  `mkForce`); siblings in one `extends` list that set it to different values at
  the same priority conflict, unless a file extending both settles it;
- a table merges key by key (`sysctl`, `modules.options`, `hugepages.per_node` …);
- `workload` entries merge by `name`, field by field;
- `APPEND` arrays accumulate, each entry once, in the order layers add them.

`[remove]` takes inherited entries out before the file's own values go in.
Pure functions over plain data: reading files and reporting errors live in
`hostc.spec.layers`.
"""

from __future__ import annotations

from typing import Any

import attrs

from hostc.keypath import KeyPath, Named, Part
from hostc.record import Record

#: Priorities, lower wins (NixOS: mkForce 50, a plain definition 100).
FORCE = 50
NORMAL = 100

#: Arrays of tables merged entry by entry, keyed by this field.
KEYED: dict[tuple[str, ...], str] = {("workload",): "name"}
#: Arrays whose entries accumulate over layers (every other array is a value, replaced whole).
APPEND: frozenset[tuple[str, ...]] = frozenset(
    {
        ("kernel", "extra_args"),
        ("modules", "blacklist"),
        ("services", "disable"),
        ("preset", "exclude"),
        ("kubelet", "cpu_manager_policy_options"),
    }
)


@attrs.frozen(repr=False, eq=False)
class Origin(Record):
    """Where a value was written: the file and the key path inside that file."""

    file: str
    key: str


@attrs.frozen(repr=False, eq=False)
class Leaf(Record):
    value: Any
    prio: int
    origin: Origin
    #: a sibling layer that set another value at the same priority (unsettled: an error)
    rival: Leaf | None = None


@attrs.frozen(repr=False, eq=False)
class Keyed(Record):
    """A keyed array of tables: entries by key, in first-seen order."""

    field: str
    entries: dict[str, dict[str, Any]]


@attrs.frozen(repr=False, eq=False)
class Appended(Record):
    items: tuple[Leaf, ...]


def keypath(parts: tuple[str | int, ...]) -> str:
    """`("workload", 0, "gpus")` → `workload[0].gpus`; keys quoted as TOML needs (the
    text of a provenance key: one rendering, `hostc.keypath`'s)."""
    return str(KeyPath(parts))


def tree(data: Any, prio: int, file: str, at: tuple[str, ...], src: tuple[str | int, ...]) -> Any:
    """One layer's data as a tree.  `at`: the spec path (for the rules), `src`: the key
    path in the file (for provenance; `force.` prefixed for the force table)."""
    if isinstance(data, dict):
        return {k: tree(v, prio, file, (*at, k), (*src, k)) for k, v in data.items()}
    if isinstance(data, list) and at in KEYED and all(isinstance(x, dict) for x in data):
        field = KEYED[at]
        entries: dict[str, dict[str, Any]] = {}
        for i, item in enumerate(data):
            name = item.get(field)
            key = name if isinstance(name, str) else f"#{i}"
            entries[key] = tree(item, prio, file, (*at, field), (*src, i))
        return Keyed(field, entries)
    if isinstance(data, list) and at in APPEND:
        return Appended(
            tuple(Leaf(v, prio, Origin(file, keypath((*src, i)))) for i, v in enumerate(data))
        )
    return Leaf(data, prio, Origin(file, keypath(src)))


def _leaf(base: Leaf, top: Leaf, siblings: bool) -> Leaf:
    if top.prio < base.prio:
        return top
    if top.prio > base.prio:
        return base
    if siblings and top.value != base.value:
        return attrs.evolve(top, rival=base)
    return top


def combine(base: Any, top: Any, siblings: bool = False) -> Any:
    """`top` refines `base` (with `siblings`, equal-priority differences are kept as rivals)."""
    if isinstance(base, dict) and isinstance(top, dict):
        out = dict(base)
        for k, v in top.items():
            out[k] = combine(base[k], v, siblings) if k in base else v
        return out
    if isinstance(base, Keyed) and isinstance(top, Keyed):
        entries = dict(base.entries)
        for k, v in top.entries.items():
            entries[k] = combine(entries[k], v, siblings) if k in entries else v
        return Keyed(base.field, entries)
    if isinstance(base, Appended) and isinstance(top, Appended):
        seen = {repr(x.value) for x in base.items}
        return Appended(base.items + tuple(x for x in top.items if repr(x.value) not in seen))
    if isinstance(base, Leaf) and isinstance(top, Leaf):
        return _leaf(base, top, siblings)
    if isinstance(base, Leaf) and base.prio < _prio(top):
        return base
    return top


def _prio(node: Any) -> int:
    """The strongest priority inside a node (a forced leaf deep inside keeps its table)."""
    if isinstance(node, Leaf):
        return node.prio
    kids: list[Any] = []
    if isinstance(node, dict):
        kids = list(node.values())
    elif isinstance(node, Keyed):
        kids = list(node.entries.values())
    elif isinstance(node, Appended):
        kids = list(node.items)
    return min((_prio(k) for k in kids), default=NORMAL)


def strip(node: Any) -> Any:
    """What survives removing `node`: only forced leaves (None when nothing does)."""
    if isinstance(node, Leaf):
        return node if node.prio < NORMAL else None
    if isinstance(node, dict):
        kept = {k: s for k, v in node.items() if (s := strip(v)) is not None}
        return kept or None
    if isinstance(node, Keyed):
        entries = {k: s for k, v in node.entries.items() if (s := strip(v)) is not None}
        return Keyed(node.field, entries) if entries else None
    if isinstance(node, Appended):
        items = tuple(x for x in node.items if x.prio < NORMAL)
        return Appended(items) if items else None
    return None


class RemoveError(Exception):
    """A `[remove]` value of the wrong type; `args[0]` is its KeyPath (never a message)."""


#: What a `[remove]` names that nothing inherited sets: the key path, and its words.
Missing = tuple[KeyPath, str]


def remove(base: Any, what: Any, at: tuple[str | int, ...] = ()) -> tuple[Any, list[Missing]]:
    """Take `what` (a `[remove]` table) out of `base`.  Returns the new base and the key
    paths `what` names that nothing inherited sets (a typo, reported by the caller).

    `true` removes the key; a list of names removes those entries of a table, a
    keyed array (by name) or an append array (by value).  Forced values stay.
    Any other value, or a name that is no string or integer, raises RemoveError
    naming its key path.
    """
    missing: list[Missing] = []
    if not isinstance(base, dict) or not isinstance(what, dict):
        return base, [(KeyPath(at), keypath(at))]
    out = dict(base)
    for k, spec in what.items():
        here = (*at, k)
        if k not in out:
            missing.append((KeyPath(here), keypath(here)))
            continue
        node = out[k]
        if spec is True:
            kept = strip(node)
        elif isinstance(spec, list):
            kept, gone = _remove_entries(node, spec, here)
            missing += gone
        elif isinstance(spec, dict):
            kept, gone = remove(node, spec, here)
            missing += gone
        else:
            raise RemoveError(KeyPath(here))
        if kept is None:
            del out[k]
        else:
            out[k] = kept
    return out, missing


def _remove_entries(
    node: Any, names: list[Any], at: tuple[str | int, ...]
) -> tuple[Any, list[Missing]]:
    missing: list[Missing] = []
    where = KeyPath(at)
    for i, n in enumerate(names):
        if not isinstance(n, str | int) or isinstance(n, bool):
            raise RemoveError(where.index(i))
    if isinstance(node, Keyed):
        entries = dict(node.entries)
        for n in names:
            if n not in entries:
                missing.append((where, f"{where} entry {n!r}"))
            elif (s := strip(entries.pop(n))) is not None:
                entries[n] = s
        return Keyed(node.field, entries), missing
    if isinstance(node, Appended):
        values = [repr(x.value) for x in node.items]
        missing = [(where, f"{where} entry {n!r}") for n in names if repr(n) not in values]
        gone = {repr(n) for n in names}
        items = tuple(x for x in node.items if repr(x.value) not in gone or x.prio < NORMAL)
        return Appended(items), missing
    if isinstance(node, dict):
        table = dict(node)
        for n in names:
            if not isinstance(n, str) or n not in table:
                missing.append((where, f"{where} entry {n!r}"))
            elif (s := strip(table.pop(n))) is not None:
                table[n] = s
        return table, missing
    return node, [(where, f"{where} (not a table or a list)")]


def rivals(node: Any, at: tuple[Part, ...] = ()) -> list[tuple[KeyPath, Leaf]]:
    """Every leaf two sibling layers set differently and no later layer settled."""
    out: list[tuple[KeyPath, Leaf]] = []
    for path, leaf in leaves(node, at):
        if leaf.rival is not None:
            out.append((path, leaf))
    return out


def leaves(node: Any, at: tuple[Part, ...] = ()) -> list[tuple[KeyPath, Leaf]]:
    """(merged key path, leaf) for every leaf, in output order: a keyed entry by its
    name and merged index (`KeyPath.indexed()` is the provenance key)."""
    if isinstance(node, Leaf):
        return [(KeyPath(at), node)]
    out: list[tuple[KeyPath, Leaf]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            out += leaves(v, (*at, k))
    elif isinstance(node, Keyed):
        for i, (k, v) in enumerate(node.entries.items()):
            out += leaves(v, (*at, i if k.startswith("#") else Named(i, k)))
    elif isinstance(node, Appended):
        out += [(KeyPath((*at, i)), x) for i, x in enumerate(node.items)]
    return out


def data(node: Any) -> Any:
    """The merged tree as plain TOML data, ready to structure into a HostSpec."""
    if isinstance(node, Leaf):
        return node.value
    if isinstance(node, dict):
        return {k: data(v) for k, v in node.items()}
    if isinstance(node, Keyed):
        return [data(v) for v in node.entries.values()]
    if isinstance(node, Appended):
        return [x.value for x in node.items]
    return node
