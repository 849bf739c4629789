"""examples/packer: the real `packer` (1.6.6) validates the template, and the offline build
runs hostc end to end, leaving the rootfs tree and apply.sh where the image build uploads
them from.  CHECKPOINT_DISABLE keeps Packer off the network."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hostc import api
from hostc.artifact import ArtifactKind

from conftest import ROOT, need_tool
from delivery_read import as_files, host_files, tree_files

TEMPLATE_DIR = ROOT / "examples" / "packer"
SPEC = ROOT / "examples" / "h100-4gpu-inference" / "node.toml"


def _packer(*args: str, out: Path) -> subprocess.CompletedProcess[str]:
    exe = need_tool("packer")
    env = {**os.environ, "CHECKPOINT_DISABLE": "1", "PACKER_CACHE_DIR": str(out / ".cache")}
    hostc = f"{sys.executable} -m hostc"
    argv = [exe, *args, "-var", f"spec={SPEC}", "-var", f"out={out}", "-var", f"hostc={hostc}"]
    return subprocess.run(
        [*argv, "."], cwd=TEMPLATE_DIR, capture_output=True, text=True, env=env, timeout=300
    )


def test_packer_validate_needs_the_tree_then_passes(tmp_path: Path) -> None:
    out = tmp_path / "build"
    r = _packer("validate", out=out)
    assert r.returncode != 0 and "Bad source" in r.stdout + r.stderr  # the check can fail
    hostc = [sys.executable, "-m", "hostc", "build", str(SPEC), "-t", "rootfs", "--out", str(out)]
    subprocess.run(hostc, check=True, cwd=ROOT, capture_output=True, timeout=120)
    r = _packer("validate", out=out)
    assert r.returncode == 0, r.stdout + r.stderr


def test_packer_offline_build_runs_hostc(tmp_path: Path) -> None:
    out = tmp_path / "build"
    r = _packer("build", "-only=rootfs.null.offline", out=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rootfs.null.offline" in r.stdout and "image.null.image" not in r.stdout
    plan, _ = api.compile_file(SPEC)
    assert tree_files(out / "rootfs", skip=("/apply.sh",)) == as_files(host_files(plan))
    (apply,) = [a for a in api.emit(plan, ["rootfs"]) if a.kind is ArtifactKind.DELIVERABLE]
    assert (out / "rootfs" / "apply.sh").read_bytes() == apply.data


def test_packer_template_is_formatted() -> None:
    exe = need_tool("packer")
    r = subprocess.run(
        [exe, "fmt", "-check", "."], cwd=TEMPLATE_DIR, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stdout + r.stderr
