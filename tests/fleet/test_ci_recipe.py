"""The CI recipe in docs/ci.md runs as documented, and the pre-commit hook is well formed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import ROOT, run_hostc

#: where the recipe's fleet repository commits what hostc makes from its hosts
COMMITTED = "examples/fleet/output"


def _workflow() -> dict[str, object]:
    text = (ROOT / "docs" / "ci.md").read_text()
    block = re.search(r"## GitHub Actions.*?```yaml\n(.*?)```", text, re.S)
    assert block, "docs/ci.md has a GitHub Actions yaml block"
    doc: dict[str, object] = yaml.safe_load(block.group(1))
    return doc


def test_the_documented_ci_steps_pass(tmp_path: Path) -> None:
    """Every `run:` step after the install step, in a shell, from the repository root."""
    jobs = _workflow()["jobs"]
    assert isinstance(jobs, dict)
    steps = [s for job in jobs.values() for s in job["steps"] if "run" in s]
    commands = [s["run"] for s in steps if not s["run"].startswith("pip install")]
    assert len(commands) >= 3
    # the fleet repository's committed output, which this repository does not keep
    committed = tmp_path / "output"
    built = run_hostc("build", ROOT / "examples/fleet/hosts", "-t", "all", "--out", committed)
    assert built.returncode == 0, built.stderr
    commands = [c.replace(f" {COMMITTED} ", f" {committed} ") for c in commands]
    assert any(str(committed) in c for c in commands), f"a step checks {COMMITTED}"
    env = {
        **os.environ,
        "CI": "true",
        "RUNNER_TEMP": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    for cmd in commands:
        r = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", cmd],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, f"{cmd}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        assert "\r[" not in r.stderr, "no progress bar under CI"
    assert (tmp_path / "plans.json").stat().st_size > 0


def test_pre_commit_hook_runs_what_it_declares(tmp_path: Path) -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "hostc-check" and hook["pass_filenames"] is True
    assert hook["entry"] == "hostc pre-commit"
    fleet = ROOT / "examples" / "fleet"
    args = [str(fleet / "hosts"), "--out", str(tmp_path), "--target", "sysctl"]
    # a changed class: every host extending it is built and compared (here: all stale)
    r = run_hostc("pre-commit", *args, str(fleet / "classes" / "epyc-training.toml"))
    assert r.returncode == 1
    assert "6 hosts:" in r.stderr and "6 stale" in r.stderr
    # a file no host reads: nothing to check
    r = run_hostc("pre-commit", *args, str(ROOT / "README.md"))
    assert r.returncode == 0 and r.stderr == ""
