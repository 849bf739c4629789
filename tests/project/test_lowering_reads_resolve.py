"""Lowering reads only what resolve made: a spec key is interpreted in one place.

`hostc.resolve` reads the spec once (the placements, the preset merge with each
setting's provenance, the isolation, kernel, runtime and kubelet requests);
`hostc.lower` turns that into the Plan.  Were lowering to read the spec again, a key
would have two readers that can disagree (issue 55 item 4: before it, lowering read the
raw spec in 7 files).  Checked on the source's syntax, so a lazy or type-only import,
a function that takes the spec, and `resolved.spec` all count.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from conftest import ROOT

LOWER = ROOT / "compiler" / "lower"
#: the spec's package: its model, loader and presets (resolve reads them for lowering)
SPEC = "hostc.spec"
#: the spec model's root type, however it is spelled in an annotation
SPEC_TYPE = "HostSpec"


def _imported(node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The modules an import statement reads (`from hostc import spec` reads hostc.spec)."""
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
    elif node.module is not None and node.level == 0:
        yield node.module
        yield from (f"{node.module}.{a.name}" for a in node.names)


def _takes_spec(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[str]:
    a = fn.args
    for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
        if arg is None:
            continue
        shown = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        if arg.arg == "spec" or SPEC_TYPE in shown:
            yield f"{fn.name}({arg.arg}: {shown or '?'})"


def offences(folder: Path) -> list[str]:
    """Every place under `folder` that reads the spec rather than resolve's output."""
    out = []
    for path in sorted(folder.rglob("*.py")):
        found: list[tuple[int, str]] = []
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                spec = [m for m in _imported(node) if m == SPEC or m.startswith(SPEC + ".")]
                found += [(node.lineno, f"imports {spec[0]}")] if spec else []
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found += [(node.lineno, f"{x} takes the spec") for x in _takes_spec(node)]
            elif isinstance(node, ast.Attribute) and node.attr == "spec":
                found.append((node.lineno, f"reads {ast.unparse(node)}"))
        out += [f"{path.relative_to(folder.parent)}:{n}: {what}" for n, what in sorted(found)]
    return out


def test_lowering_never_reads_the_spec() -> None:
    assert len(list(LOWER.glob("*.py"))) > 5, "the lowering package was not found"
    found = offences(LOWER)
    assert not found, (
        "lowering reads the spec; read the key in hostc.resolve (a request or the merge) "
        "and lower from that:\n" + "\n".join(found)
    )


def test_the_check_sees_each_way_of_reading_the_spec(tmp_path: Path) -> None:
    """The three readings the rule forbids are each found (the check can fail)."""
    folder = tmp_path / "lower"
    folder.mkdir()
    (folder / "a.py").write_text(
        "from hostc.spec.model import Cpu\n"
        "from hostc import spec as s\n"
        "def f(r: object, topo: 'HostSpec') -> None:\n"
        "    import hostc.spec.presets\n"
        "    return r.spec.cpu\n"
        "def g(spec):\n"
        "    pass\n"
    )
    (folder / "b.py").write_text("from hostc.resolve import Resolved\nx = Resolved.spec_like\n")
    assert offences(folder) == [
        "lower/a.py:1: imports hostc.spec.model",
        "lower/a.py:2: imports hostc.spec",
        "lower/a.py:3: f(topo: 'HostSpec') takes the spec",
        "lower/a.py:4: imports hostc.spec.presets",
        "lower/a.py:5: reads r.spec",
        "lower/a.py:6: g(spec: ?) takes the spec",
    ]
