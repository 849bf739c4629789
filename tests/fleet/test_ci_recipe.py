"""The CI recipe in docs/ci.md runs as documented, and the pre-commit hook is well formed."""

from __future__ import annotations

import os
import re
import shutil
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


def _yaml_after(heading: str) -> dict[str, object]:
    """The first yaml block under `heading` in docs/ci.md."""
    text = (ROOT / "docs" / "ci.md").read_text()
    block = re.search(rf"{re.escape(heading)}\n.*?```yaml\n(.*?)```", text, re.S)
    assert block, f"docs/ci.md has a yaml block under {heading}"
    doc: dict[str, object] = yaml.safe_load(block.group(1))
    return doc


def test_the_documented_pre_commit_recipe_works_without_a_release(tmp_path: Path) -> None:
    """A `repo: local` hook (no tag exists yet: first-day-4 V4), run as pre-commit runs a
    `language: system` hook: its entry, its args, then the changed files."""
    config = _yaml_after("## pre-commit")
    (repo,) = config["repos"]  # type: ignore[index]
    assert repo["repo"] == "local" and "rev" not in repo, "nothing that does not exist yet"
    (hook,) = repo["hooks"]
    (declared,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    for key in ("id", "entry", "pass_filenames", "require_serial"):
        assert hook[key] == declared[key], key
    assert hook["language"] == "system"
    assert "example.com" not in (ROOT / "docs" / "ci.md").read_text()
    fleet = tmp_path / "examples" / "fleet"
    shutil.copytree(ROOT / "examples" / "fleet", fleet)
    for name in ("dgx-h100-inference", "epyc-1s-training"):
        shutil.copytree(ROOT / "examples" / name, tmp_path / "examples" / name)
    args = list(hook["args"])
    assert args[0] == "hosts/" and args[args.index("--out") + 1] == "out/"
    entry = [sys.executable, "-m", "hostc", *hook["entry"].split()[1:]]
    built = run_hostc("build", "hosts/", "--out", "out/", "--target", "all", "-q", cwd=fleet)
    assert built.returncode == 0, built.stderr
    cls = "classes/epyc-training.toml"
    current = subprocess.run([*entry, *args, cls], cwd=fleet, capture_output=True, text=True)
    assert current.returncode == 0, current.stdout + current.stderr
    path = fleet / cls
    path.write_text(path.read_text().replace('"vm.swappiness" = 10 ', '"vm.swappiness" = 20 '))
    stale = subprocess.run([*entry, *args, cls], cwd=fleet, capture_output=True, text=True)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "to update: hostc build hosts/ --out out -t all" in stale.stdout


def test_the_documented_pull_request_comment_step_reviews_against_the_base_branch(
    tmp_path: Path,
) -> None:
    """The review step of docs/ci.md, in a scratch repository whose `origin/main` is the
    base: full history (`fetch-depth: 0`), the base branch as REV, exit 0 on a change."""
    workflow = _yaml_after("## The review as a pull-request comment")
    jobs = workflow["jobs"]
    assert isinstance(jobs, dict)
    (job,) = jobs.values()
    checkout = next(
        s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout")
    )
    assert checkout["with"]["fetch-depth"] == 0, "the base branch's commits are needed"
    (review,) = [s for s in job["steps"] if "hostc diff" in s.get("run", "")]
    assert "@origin/${GITHUB_BASE_REF}" in review["run"]
    assert any("gh pr comment" in s.get("run", "") for s in job["steps"])
    for name in ("fleet", "dgx-h100-inference", "epyc-1s-training"):
        shutil.copytree(ROOT / "examples" / name, tmp_path / "examples" / name)

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "base")
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    cls = tmp_path / "examples" / "fleet" / "classes" / "dgx-inference.toml"
    cls.write_text(cls.read_text().replace("\ntotal = 64\n", "\ntotal = 96\n"))
    env = {
        **os.environ,
        "GITHUB_BASE_REF": "main",
        "RUNNER_TEMP": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    r = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", review["run"]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    comment = (tmp_path / "review.md").read_text()
    assert "- spec `hugepages.total`: `64` → `96`" in comment
    assert "on a running host: reboots for kernel arguments" in comment
