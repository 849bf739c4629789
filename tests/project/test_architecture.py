"""The layers of hostc, enforced: every import points down the table or sideways.

    base < spec, topology < plan < resolve < check, lower < targets, audit, measure
    < delivery, report, bench < pipeline < fleet < api < cli   (docs/architecture.md)

Every hostc import counts, function-level (lazy) ones and `if TYPE_CHECKING:` ones
included: a lazy import is still a dependency, only a later one.  The CLI reaches
the compiler through `hostc.api` alone (type-only imports aside), so the API is the
one surface a script, a test and the command line share.

A module that no row of LAYERS names fails the test: a new module is given its
layer when it is written, not when it first imports the wrong way.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from conftest import ROOT

SOURCES = sorted([*(ROOT / "compiler").rglob("*.py"), *(ROOT / "targets").rglob("*.py")])

#: Layer rank → the packages (and top-level modules) in it; a package stands for all
#: it holds, and a longer name wins (`hostc.delivery.activation` below the rest of
#: `hostc.delivery`).
LAYERS: dict[int, tuple[str, ...]] = {
    # values and knowledge every stage may read: the top-level modules, nothing else
    0: ("hostc", "hostc.knowledge", "hostc.settings"),
    # the two inputs, what the operator asks for and what the machine is, and their
    # one converter from TOML data
    1: ("hostc.spec", "hostc.topology"),
    # the IR and its spelling as kernel arguments
    2: ("hostc.plan",),
    3: ("hostc.resolve",),
    4: ("hostc.check", "hostc.lower"),
    # readers of the Plan: the targets, how their files are activated, the audit of a host
    5: (
        "hostc.targets",
        "hostc.delivery.activation",
        "hostc.delivery.effects",
        "hostc.audit",
        "hostc.measure",
    ),
    # what is done with a Plan and its artifacts: files written and owned, what a change
    # costs, and the reports and views of a Plan
    6: ("hostc.delivery", "hostc.report", "hostc.bench"),
    # the stages run in order: a spec file to a checked Plan, its artifacts, a build
    # written; below both the fleet and the API, so each runs the one pipeline
    7: ("hostc.pipeline",),
    # many hosts per command and specs at another revision: the fleet runner, the
    # sides of `hostc diff`, the fleet review
    8: ("hostc.fleet",),
    # the one surface a script, a test and the command line share
    9: ("hostc.api",),
    10: ("hostc.cli", "hostc.__main__"),
}

#: The top-level modules: values every stage shares.  Anything else belongs in the
#: package of its stage (issue 33: 38 prefix-named siblings became packages).
TOP_LEVEL = frozenset(
    {
        "hostc",
        "hostc.__main__",
        "hostc.artifact",
        "hostc.cpuset",
        "hostc.diagnostics",
        "hostc.fielddoc",
        "hostc.inputs",
        "hostc.keypath",
        "hostc.locate",
        "hostc.patharg",
        "hostc.provenance",
        "hostc.record",
        "hostc.units",
        "hostc.vocab",
    }
)

#: What the CLI modules may import beyond each other: the API, and the error type
#: and the bounded reader every command uses to show a diagnostic's source line.
CLI_MAY_IMPORT = frozenset({"hostc.api", "hostc.diagnostics", "hostc.inputs"})


def module_name(path: Path) -> str:
    if path.is_relative_to(ROOT / "targets"):
        parts = ["hostc", "targets", *path.relative_to(ROOT / "targets").with_suffix("").parts]
    else:
        parts = ["hostc", *path.relative_to(ROOT / "compiler").with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in SOURCES}


def layer_of(module: str) -> int | None:
    """The rank of the longest LAYERS entry that is `module` or a package holding it
    (a top-level module is in `hostc`'s rank: the shared values)."""
    if module in TOP_LEVEL and module != "hostc.__main__":
        return 0
    best: tuple[int, int] | None = None
    for rank, names in LAYERS.items():
        for name in names:
            inside = module == name or (module.startswith(name + ".") and name != "hostc")
            if inside and (best is None or len(name) > best[0]):
                best = (len(name), rank)
    return None if best is None else best[1]


def _type_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(path: Path) -> Iterator[tuple[str, bool]]:
    """(module, type_only) for every hostc import in `path`, at any depth."""
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else None
    tree = ast.parse(path.read_text())
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _type_only(node):
            type_only |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = (package or module_name(path)).split(".")
                base = ".".join(anchor[: len(anchor) - node.level + 1] + ([base] if base else []))
            # `from hostc.spec import presets` imports the module hostc.spec.presets
            names = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        for name in names:
            if name == "hostc" or name.startswith("hostc."):
                yield name, id(node) in type_only


def test_every_module_has_a_layer() -> None:
    assert len(MODULES) > 100, "the source tree was not found"
    missing = sorted(m for m in MODULES if layer_of(m) is None)
    assert not missing, f"give these modules a row in LAYERS: {missing}"


def _violations() -> set[tuple[str, str]]:
    found = set()
    for module, path in MODULES.items():
        here = layer_of(module)
        assert here is not None
        for name, type_only in imports(path):
            there = layer_of(name)
            if there is not None and there > here:
                found.add((module, name))
            cli = module.startswith("hostc.cli")
            allowed = name.startswith(("hostc.cli", "hostc.api")) or name in CLI_MAY_IMPORT
            if cli and not type_only and not allowed:
                found.add((module, name))
    return found


def test_imports_point_down_the_layers() -> None:
    """No import climbs the table; the CLI imports only the API."""
    found = sorted(_violations())
    assert not found, "imports against the layer table:\n" + "\n".join(
        f"{a} -> {b}" for a, b in found
    )


def test_check_never_imports_lower() -> None:
    """check judges what resolve worked out; it never re-runs lowering (same layer, so the
    table alone would let it)."""
    for module, path in MODULES.items():
        if layer_of(module) == 4 and module.startswith("hostc.check"):
            assert not [n for n, _ in imports(path) if n.startswith("hostc.lower")], module


def test_the_table_sees_lazy_imports() -> None:
    """A function-level import counts: pipeline.compile imports check only inside compile_plan."""
    assert ("hostc.check", False) in set(imports(MODULES["hostc.pipeline.compile"]))


def _graph() -> dict[str, set[str]]:
    """Every hostc import between modules: top-level, function-level (lazy) and
    `if TYPE_CHECKING:` ones alike (a lazy import is a dependency, only a later one)."""
    return {m: {n for n, _ in imports(p) if n in MODULES and n != m} for m, p in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_cycle_counting_every_import() -> None:
    """No two modules import each other, however indirectly and however lazily: same
    layer (sideways) included.  A split that makes a cycle is worse than a long module."""
    graph = _graph()
    assert graph["hostc.api.report"], "the graph is empty"
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above can fail: a lazy import back closes a circle it reports."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def _room(module: str) -> str:
    """The package a module lives in (a top-level module is its own room)."""
    parts = module.split(".")
    if MODULES[module].name == "__init__.py":
        return module if len(parts) <= 2 else ".".join(parts[:2])
    return ".".join(parts[:2]) if len(parts) > 2 else module


def test_packages_import_each_other_one_way() -> None:
    """Between packages too the arrows run one way (what `farm-studio look` draws as
    rooms): no package imports a package that imports it back."""
    graph = _graph()
    rooms: dict[str, set[str]] = {}
    for m, targets in graph.items():
        for n in targets:
            if _room(m) != _room(n):
                rooms.setdefault(_room(m), set()).add(_room(n))
    rooms = {r: rooms.get(r, set()) for r in {_room(m) for m in MODULES}}
    cycles = _cycles(rooms)
    assert not cycles, "packages in a circle:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_top_level_modules_are_the_shared_values_only() -> None:
    """A stage's modules live in its package; prefix families (`api_*`, `cli_*`,
    `plan_*`) are packages, not siblings."""
    top = {m for m, p in MODULES.items() if p.parent == ROOT / "compiler"}
    assert top == TOP_LEVEL, f"new: {sorted(top - TOP_LEVEL)}, gone: {sorted(TOP_LEVEL - top)}"
    names = [m.removeprefix("hostc.") for m in top if m != "hostc"]
    stems = [n.split("_")[0] for n in names if "_" in n.strip("_")]
    families = {s for s in stems if stems.count(s) > 1 and s}
    assert not families, f"prefix families to make packages of: {sorted(families)}"


def test_targets_read_host_facts_from_the_plan() -> None:
    """A target reads what the host's release ships from `plan.host` (resolved once in
    lower, as `HostFacts.tuned`), never from the distribution tables again."""
    found = sorted(
        module
        for module, path in MODULES.items()
        if module.startswith("hostc.targets")
        for name, _ in imports(path)
        if name == "hostc.knowledge.distro"
    )
    assert not found, f"targets reading hostc.knowledge.distro: {found}"


#: Attributes that hold a closed set typed as an enum from resolve on (`Vendor`).
CLOSED_SETS = frozenset({"cpu_vendor"})


def _strings(node: ast.expr) -> bool:
    """A string literal, or a tuple, list or set holding one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_strings(x) for x in node.elts)
    return False


def _names(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def test_closed_sets_are_compared_as_enum_members() -> None:
    """`cpu_vendor == "amd"` compares a string that a typo keeps silently false; the
    Plan's vendor is a `Vendor`, so comparisons name its members (`Vendor.AMD`)."""
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            if any(_names(x) in CLOSED_SETS for x in sides) and any(_strings(x) for x in sides):
                found.append(f"{module}:{node.lineno}")
    assert not found, "string comparisons of a closed set: " + ", ".join(sorted(found))
