"""Shared test helpers: where the shared topologies live, and the CI rule for validators."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

ROOT = Path(__file__).resolve().parents[1]
SHARED_TOPOLOGIES = ROOT.parent / "shared" / "topologies"
IN_CI = os.environ.get("CI") == "true"


def need_tool(name: str) -> str:
    """The path of a real validator; under CI=true a missing one fails instead of skipping."""
    path = shutil.which(name)
    if path is None:
        if IN_CI:
            pytest.fail(f"validator {name!r} is missing; .ci/run must install it")
        pytest.skip(f"{name} not installed")
    return path


def shared_topologies() -> Path:
    if not SHARED_TOPOLOGIES.is_dir():
        if IN_CI:
            pytest.fail(f"{SHARED_TOPOLOGIES} is missing; CI must provide ../shared")
        pytest.skip(f"{SHARED_TOPOLOGIES} not present")
    return SHARED_TOPOLOGIES
