"""node.toml text → data: the bounded parse every spec file gets, single or layered.

Below both readers of a spec (`hostc.spec.load` for one file, `hostc.spec.layers` for
`extends`/`[force]`/`[remove]`), so that neither imports the other back.
"""

from __future__ import annotations

from typing import Any

import tomli

from hostc.diagnostics import HostcError, file_error, kind_of, toml_syntax_error
from hostc.inputs import loads_toml

#: A spec is a few hundred bytes; a MiB is far above any real one.
SPEC_LIMIT = 1 << 20
#: Arrays and tables nested deeper than this are refused (the model nests 4 deep).
NESTING_LIMIT = 32
#: The top-level keys that make a file a layered spec (`hostc.spec.layers` reads it;
#: a plain spec is told apart here, without importing the layers' machinery).
LAYER_KEYS = ("extends", "force", "remove")


def nesting_depth(data: Any) -> int:
    """How deeply arrays and tables nest, counted without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        v, d = stack.pop()
        deepest = max(deepest, d)
        if d > NESTING_LIMIT:
            break
        items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()
        if items:  # its values are one level down; only arrays and tables go further
            deepest = max(deepest, d + 1)
            stack.extend((x, d + 1) for x in items if isinstance(x, (dict, list)))
    return deepest


def too_deep(file: str) -> HostcError:
    return HostcError(
        [
            file_error(
                file,
                f"arrays or tables are nested too deeply (more than {NESTING_LIMIT} levels)",
                hint="node.toml nests a few levels at most; is this the right file?",
            )
        ]
    )


def parse(text: str, file: str) -> dict[str, Any]:
    """TOML text → data, with the syntax and nesting checks every spec file gets."""
    if not isinstance(text, str):
        raise HostcError([file_error(file, f"expected the text of node.toml, got {kind_of(text)}")])
    try:
        data = loads_toml(text)
    except tomli.TOMLDecodeError as e:
        raise HostcError([toml_syntax_error(e, file)]) from None
    except RecursionError:
        raise too_deep(file) from None
    if nesting_depth(data) > NESTING_LIMIT:
        raise too_deep(file)
    return data


def declares_layers(data: dict[str, Any]) -> bool:
    return any(k in data for k in LAYER_KEYS)
