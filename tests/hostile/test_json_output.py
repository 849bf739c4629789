"""Every JSON hostc prints is valid JSON in valid UTF-8, whatever a file name holds
(issue 51 item 5b): a name that is not UTF-8 (byte 0xff, which Python holds as the lone
surrogate U+DCFF) is written as the four characters `\\xff`, and a character a terminal
must not be handed raw (C1, bidi) as a JSON `\\uNNNN` escape that reads back as itself.
Before: the raw byte (no UTF-8: `json.loads` of the text fails), exit 3 where stdout is
strict UTF-8 (en_US.UTF-8, PYTHONIOENCODING=utf-8), and the terminal's own `\\x85` escape
inside a JSON string (no JSON)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT

EXAMPLE = ROOT / "examples" / "h100-4gpu-inference"
#: a file name byte that is not UTF-8, as Python's surrogateescape holds it
FF = "\udcff"
LOCALES = {"utf-8 with surrogateescape": {}, "strict utf-8": {"PYTHONIOENCODING": "utf-8"}}


def _hostc(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, Any, str]:
    """`python -m hostc ARGS`: exit status, stdout read as strict UTF-8 JSON, stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "hostc", *args],
        cwd=cwd,
        capture_output=True,
        timeout=60,
        env={**os.environ, **env},
    )
    err = done.stderr.decode("utf-8", "replace")
    try:
        doc = json.loads(done.stdout.decode("utf-8"))
    except ValueError as e:  # UnicodeDecodeError is one
        raise AssertionError(f"not UTF-8 JSON ({e}): {done.stdout[:300]!r}\n{err}") from None
    return done.returncode, doc, err


def _work(tmp: Path, folder: str, spec: str) -> Path:
    """The example's spec as `folder/spec` (names as given), its snapshot in `tmp`."""
    where = tmp / folder
    where.mkdir()
    (tmp / "topology.toml").write_text((EXAMPLE / "topology.toml").read_text())
    text = (EXAMPLE / "node.toml").read_text()
    (where / spec).write_text(text.replace('"topology.toml"', f'"{tmp / "topology.toml"}"'))
    return where


def _strings(doc: object) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in [*_strings(k), *_strings(v)]]
    if isinstance(doc, list):
        return [s for v in doc for s in _strings(v)]
    return []


@pytest.mark.parametrize("env", list(LOCALES.values()), ids=list(LOCALES))
@pytest.mark.parametrize("command", ["check", "build --out", "fleet build", "diff"])
def test_json_output_is_utf8_json_whatever_a_file_name_holds(
    tmp_path: Path, command: str, env: dict[str, str]
) -> None:
    where = _work(tmp_path, f"h{FF}", f"n{FF}.toml")
    spec = f"h{FF}/n{FF}.toml"
    args = {
        "check": ["check", spec, "--json"],
        "build --out": ["build", spec, "--out", f"o{FF}", "--json", "-q"],
        "fleet build": ["build", f"h{FF}", "--out", "out", "--json", "-q", "-j", "1"],
        "diff": ["diff", spec, str(EXAMPLE / "node.toml"), "--format", "json"],
    }[command]
    if command == "fleet build":  # a host's name is one word: the folder holds the byte
        (where / f"n{FF}.toml").rename(where / "n.toml")
        spec = f"h{FF}/n.toml"
    code, doc, err = _hostc(args, tmp_path, env)
    assert code in (0, 1), err
    shown = [s for s in _strings(doc) if "h\\xff" in s or "o\\xff" in s]
    assert shown, f"the name is in the output, its byte as \\xff: {doc!r:.500}"
    assert not [s for s in _strings(doc) if FF in s]


def test_json_escapes_what_a_terminal_must_not_see_as_json_escapes(tmp_path: Path) -> None:
    """C1 and bidi characters in a name: a JSON `\\u0085`, never the terminal's `\\x85`
    (no JSON escape) nor the raw character."""
    name = "n\u0085\u202e.toml"
    _work(tmp_path, "h", name)
    done = subprocess.run(
        [sys.executable, "-m", "hostc", "check", f"h/{name}", "--json"],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    text = done.stdout.decode("utf-8")
    assert done.returncode == 0, done.stderr
    assert json.loads(text)["spec"] == f"h/{name}", "reads back as the very name"
    assert "\u0085" not in text and "\u202e" not in text, "escaped, never raw"
