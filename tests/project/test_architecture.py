"""The layers of hostc, enforced: every import points down the table or sideways.

    base < spec, topology < plan < resolve < check, lower < targets < output, report
    < api < cli

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

#: Layer rank → the modules and packages in it (a package stands for all it holds).
LAYERS: dict[int, tuple[str, ...]] = {
    # values and knowledge every stage may read
    0: (
        "hostc",
        "hostc.artifact",
        "hostc.cpuset",
        "hostc.diagnostics",
        "hostc.fielddoc",
        "hostc.inputs",
        "hostc.knowledge",
        "hostc.locate",
        "hostc.patharg",
        "hostc.provenance",
        "hostc.record",
        "hostc.settings",
        "hostc.topology_hints",
        "hostc.units",
        "hostc.vocab",
    ),
    # the two inputs, what the operator asks for and what the machine is, and their
    # one converter from TOML data
    1: ("hostc.spec", "hostc.topology", "hostc.structure", "hostc.structure_errors"),
    # the IR and its spelling as kernel arguments
    2: (
        "hostc.plan",
        "hostc.plan_base",
        "hostc.plan_kubelet",
        "hostc.plan_runtime",
        "hostc.kernelargs",
    ),
    3: ("hostc.resolve",),
    4: ("hostc.check", "hostc.lower"),
    # readers of the Plan: the targets, how their files are activated, the audit of a host
    5: ("hostc.targets", "hostc.activation", "hostc.audit"),
    # what is done with a Plan and its artifacts: files written, reports and views
    6: (
        "hostc.output",
        # what a build left in --out (its record), and what a change costs a running host
        "hostc.owned",
        "hostc.disruption",
        "hostc.compare",
        "hostc.report",
        "hostc.plan_view",
        "hostc.kubelet_view",
        "hostc.schema",
        # `hostc init`'s starting spec, from a snapshot
        "hostc.init",
        # the settings reference page, written from the table and the presets
        "hostc.settings.docs",
    ),
    7: (
        "hostc.api",
        "hostc.api_build",
        "hostc.api_compile",
        "hostc.api_report",
        "hostc.api_topology",
        # `hostc diff`'s two sides and the review page over them, each side compiled
        # through the API
        "hostc.report.diffinputs",
        "hostc.report.html",
        "hostc.report.review",
        "hostc.fleet",
        "hostc.fleet_view",
    ),
    8: (
        "hostc.cli",
        "hostc.cli_base",
        "hostc.cli_build",
        "hostc.cli_change",
        "hostc.cli_completion",
        "hostc.cli_fleet",
        "hostc.cli_init",
        "hostc.cli_json",
        "hostc.cli_text",
        "hostc.cli_topology",
        "hostc.__main__",
    ),
}

#: What the CLI modules may import beyond each other: the API, and the error type
#: and terminal-safe text every command prints.
CLI = frozenset(LAYERS[8])
#: `hostc.fleet` is the API for many hosts (embedders call `fleet.select`/`fleet.run`
#: too) and `fleet_view` renders its results, as `api.plan_text` renders a Plan;
#: `hostc.inputs` is the bounded reader that shows a diagnostic's source line.
CLI_MAY_IMPORT = frozenset(
    {"hostc.api", "hostc.diagnostics", "hostc.inputs", "hostc.fleet", "hostc.fleet_view"}
)

#: Wrong-way imports in files other helpers of issue 18 are changing at the same time:
#: each entry names its owner, and the test fails once an entry is no longer needed,
#: so the list only shrinks (empty it after merging their branches).
KNOWN_VIOLATIONS: frozenset[tuple[str, str]] = frozenset({})


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
    """The rank of the longest LAYERS entry that is `module` or a package holding it."""
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
            if module in CLI and not type_only and name not in CLI | CLI_MAY_IMPORT:
                found.add((module, name))
    return found


def test_imports_point_down_the_layers() -> None:
    """No import climbs the table; the CLI imports only the API (KNOWN_VIOLATIONS aside)."""
    found = _violations()
    new = sorted(found - KNOWN_VIOLATIONS)
    assert not new, "imports against the layer table:\n" + "\n".join(f"{a} -> {b}" for a, b in new)
    fixed = sorted(KNOWN_VIOLATIONS - found)
    assert not fixed, "no longer needed, drop from KNOWN_VIOLATIONS: " + ", ".join(map(str, fixed))


def test_check_never_imports_lower() -> None:
    """check judges what resolve worked out; it never re-runs lowering (same layer, so the
    table alone would let it)."""
    for module, path in MODULES.items():
        if layer_of(module) == 4 and module.startswith("hostc.check"):
            assert not [n for n, _ in imports(path) if n.startswith("hostc.lower")], module


def test_the_table_sees_lazy_imports() -> None:
    """A function-level import counts: api_compile imports check only inside compile_plan."""
    assert ("hostc.check", False) in set(imports(MODULES["hostc.api_compile"]))
