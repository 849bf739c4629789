"""docs/embedding.md: its python block runs as written, from the repository root."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import ROOT

DOC = ROOT / "docs" / "embedding.md"


def test_embedding_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"^```python\n(.*?)^```$", DOC.read_text(), re.M | re.S)
    assert len(blocks) == 1
    old = Path.cwd()
    os.chdir(ROOT)
    try:
        exec(compile(blocks[0], str(DOC), "exec"), {"__name__": "embedding"})
    finally:
        os.chdir(old)
    out = capsys.readouterr().out
    assert "run: ('sysctl', '--system')" in out
    assert "reboot afterwards: True" in out
    assert "unknown target 'no-such-target'" in out
