"""A spec that check must refuse, built through the CLI as a user builds it: an
example's node.toml with one edit, beside the example's own snapshot."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import EXAMPLES, run_hostc


def refused_build(tmp_path: Path, example: str, old: str, new: str) -> tuple[Path, str]:
    """(the spec file, stderr) of `hostc build --target all` of examples/`example` with
    `old` replaced by `new`, after asserting what every refusal owes: exit 2, no
    traceback, nothing written."""
    src = EXAMPLES / example
    text = (src / "node.toml").read_text()
    assert old in text, old
    node = tmp_path / "node.toml"
    node.write_text(text.replace(old, new).replace('"topology.toml"', f'"{src / "topology.toml"}"'))
    out = tmp_path / "out"
    r: subprocess.CompletedProcess[str] = run_hostc("build", node, "--target", "all", "--out", out)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"{node}:" in r.stderr, r.stderr
    assert not out.exists() or not any(out.iterdir())
    return node, r.stderr
