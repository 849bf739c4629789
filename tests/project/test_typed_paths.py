"""Every diagnostic names its place by a typed `KeyPath` (issue 33 §5.3): no call that
builds a Diagnostic passes a string as its path.

mypy strict holds the rest, but it does not read code it thinks unreachable (the
`isinstance` refusals of the API, for one), so this reads the syntax: a literal, an
f-string, a `%`/`+`/`.format` of strings, or `str(...)` as the path argument of
`error`, `warning`, `Diagnostic` or `file_error(path=)` fails."""

from __future__ import annotations

import ast

from conftest import ROOT

SOURCES = sorted([*(ROOT / "compiler").rglob("*.py"), *(ROOT / "targets").rglob("*.py")])

#: callee name → the position of its path argument (None: keyword `path=` only)
BUILDERS = {"error": 0, "warning": 0, "Diagnostic": 1, "file_error": None}


def _stringy(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _stringy(node.left) or _stringy(node.right)
    if isinstance(node, ast.IfExp):
        return _stringy(node.body) or _stringy(node.orelse)
    if isinstance(node, ast.Call):
        f = node.func
        return (isinstance(f, ast.Name) and f.id == "str") or (
            isinstance(f, ast.Attribute) and f.attr == "format"
        )
    return False


def stringly_paths(source: str) -> list[int]:
    """The lines where a diagnostic is built from a string path."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name not in BUILDERS:
            continue
        pos = BUILDERS[name]
        args = [node.args[pos]] if pos is not None and len(node.args) > pos else []
        args += [k.value for k in node.keywords if k.arg == "path"]
        out += [a.lineno for a in args if _stringy(a)]
    return out


def test_the_guard_sees_a_string_path() -> None:
    code = 'error("cpu.isolate", "m")\nwarning(f"workload[{i}]", "m")\n'
    code += 'Diagnostic(Severity.ERROR, "x" + y, "m")\nfile_error(f, "m", path=str(k))\n'
    code += 'error(at("cpu", "isolate"), "fine")\nfile_error(f, "message is a string")\n'
    assert stringly_paths(code) == [1, 2, 3, 4]


def test_no_diagnostic_is_built_from_a_string_path() -> None:
    found = {str(p.relative_to(ROOT)): n for p in SOURCES if (n := stringly_paths(p.read_text()))}
    assert not found, f"pass a KeyPath (hostc.keypath.at) at {found}"
