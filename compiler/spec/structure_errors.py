"""cattrs' exceptions turned into Diagnostics with TOML key paths.

TOML keys are attribute names (no renames), so cattrs' error paths are true
TOML key paths; `transform_error` would give `... @ $.cpu.isolate`, mapped here
to `cpu.isolate` once, for every caller of `hostc.spec.structure`.
"""

from __future__ import annotations

import difflib
import re

import attrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
)

from hostc.diagnostics import ROOT, Diagnostic, KeyPath, Severity
from hostc.spec.text import shown

#: The longest message a diagnostic carries from a converter (values in it are cut first).
MESSAGE_MAX = 300


def _walk(exc: BaseException, path: KeyPath, out: list[Diagnostic]) -> None:
    if isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            full = path.key(key)
            out.append(
                Diagnostic(
                    Severity.ERROR,
                    full,
                    f"unknown key {shown(key)}",
                    hint=_known(exc.cl, key),
                )
            )
        return
    if isinstance(exc, ClassValidationError | IterableValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            name = getattr(note, "name", None)
            idx = getattr(note, "index", None)
            if name is not None:
                # dict keys come as index notes on mappings; attribute names as names
                sub_path = path.key(str(name))
            elif isinstance(idx, int):
                sub_path = path.index(idx)
            elif idx is not None:
                sub_path = path.key(str(idx))
            else:
                sub_path = path
            _walk(sub, sub_path, out)
        for sub in without:
            _walk(sub, path, out)
        return
    if isinstance(exc, KeyError):
        key = str(exc.args[0]) if exc.args else "?"
        # cattrs notes the attribute name already; do not repeat it
        full = path if path.parts[-1:] == (key,) else path.key(key)
        out.append(Diagnostic(Severity.ERROR, full, "required key is missing"))
        return
    msg = str(exc) or type(exc).__name__
    if isinstance(exc, ValueError) and "is not a valid" in msg:
        m = re.match(r"'?(.*?)'? is not a valid (\w+)", msg, re.S)
        if m:
            msg = f"{shown(m.group(1))} is not a valid {m.group(2)}"
    if len(msg) > MESSAGE_MAX:  # a message quoting a huge value stays readable
        msg = msg[: MESSAGE_MAX - 1] + "…"
    out.append(Diagnostic(Severity.ERROR, path, msg))


def _known(cl: type, key: str) -> str | None:
    """The nearest known key first (a typo: `sysclt` → `sysctl`), then all of them."""
    if not attrs.has(cl):
        return None
    names = [a.name for a in attrs.fields(cl)]
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    known = "known keys: " + ", ".join(names)
    return f"did you mean {close[0]}? {known}" if close else known


def diagnostics(exc: BaseException) -> list[Diagnostic]:
    """Flatten a cattrs exception tree into one Diagnostic per leaf, with TOML key paths."""
    out: list[Diagnostic] = []
    _walk(exc, ROOT, out)
    return out
