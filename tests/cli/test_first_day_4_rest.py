"""The rest of the fourth newcomer trial's papercuts (issue 54, first-day-4): each through
what a user runs or reads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, run_hostc

H100 = ROOT / "examples" / "h100-4gpu-inference"


def test_an_error_comes_without_the_warnings_that_follow_from_it(tmp_path: Path) -> None:
    """E3: a workload's unknown GPU leaves no CPU isolated; the warning "no CPU ends up
    isolated" is the error's consequence and sent the reader after the wrong line."""
    for name in ("node.toml", "topology.toml"):
        shutil.copy(H100 / name, tmp_path / name)
    spec = tmp_path / "node.toml"
    text = spec.read_text()
    assert 'gpus = ["GPU0"' in text or "gpus = [" in text
    start = text.index("gpus = [")
    spec.write_text(text[:start] + 'gpus = ["GPU9"]' + text[text.index("]", start) + 1 :])
    r = run_hostc("check", spec)
    assert r.returncode == 2
    assert "GPU 'GPU9' is not in the topology" in r.stderr
    assert "warning" not in r.stderr, r.stderr
    # the example as committed checks clean (the edit above is the only cause)
    spec.write_text(text)
    assert "error" not in run_hostc("check", spec).stderr


def _fresh_clone_run(tmp_path: Path, tests: dict[str, str]) -> str:
    """`pytest -rs` in a copy of the suite's own harness (conftest, helpers, pyproject)
    with no ../shared beside it, as a fresh clone runs it; its terminal output."""
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "tests" / "helpers", clone / "tests" / "helpers")
    shutil.copy(ROOT / "tests" / "conftest.py", clone / "tests" / "conftest.py")
    shutil.copy(ROOT / "pyproject.toml", clone / "pyproject.toml")
    for name, text in tests.items():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_text(text)
    # the outer run's CI flag, VM lane, timings file and pytest options are not the copy's
    outer = ("CI", "HOSTC_VM_LANE", "HOSTC_TIMINGS", "PYTEST_ADDOPTS")
    env = {k: v for k, v in os.environ.items() if k not in outer}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-n0", "-p", "no:randomly", "-p",
         "no:cacheprovider", "tests"],
        cwd=clone, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_a_fresh_clone_folds_its_skips_and_says_the_vms_did_not_run(tmp_path: Path) -> None:
    """R3: the lane line read `VM tests 1638` although every VM test skipped; R4: one skip
    line per missing ../shared file and per VM test (53 lines to learn one fact)."""
    uses_shared = (
        "import pytest\nfrom conftest import shared\n"
        "@pytest.mark.parametrize('name', ['a.txt', 'b.txt', 'c.txt'])\n"
        "def test_reads(name):\n    shared('topologies', 'lscpu', name)\n"
    )
    vm = (
        "import pytest\nimport vmlane\npytestmark = pytest.mark.vm\n"
        "@pytest.fixture(scope='session')\ndef lifecycle_vm():\n"
        "    pytest.skip(vmlane.unavailable() or 'no VM')\n"
        "def test_one(lifecycle_vm):\n    pass\ndef test_two(lifecycle_vm):\n    pass\n"
        "def test_lint_needs_no_vm():\n    pass\n"
    )
    files = {"tests/unit/test_shared.py": uses_shared, "tests/vm/test_vms.py": vm}
    out = _fresh_clone_run(tmp_path, files)
    skips = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == 2, out
    assert any("[3] tests/conftest.py" in s and "shared not present" in s for s in skips), out
    assert any(s.startswith("SKIPPED [2] tests/vm: ") for s in skips), out
    lane = next(line for line in out.splitlines() if line.strip().startswith("VM tests"))
    assert "skipped: " in lane and ("vm-boot" in lane or "root" in lane), lane


def test_top_level_help_lists_commands_in_a_newcomers_order_uncut() -> None:
    """H5: `hostc --help` listed build first and init 12th of 14, several lines cut
    with `...`; no -h had an Examples section."""
    import typer.main

    from hostc.cli.base import COMMANDS, EXAMPLES
    from hostc.cli.main import app

    registered = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert registered == set(COMMANDS), registered ^ set(COMMANDS)
    r = run_hostc("--help", env={"COLUMNS": "80"})
    listed = r.stdout.split("Commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in listed] == list(COMMANDS)
    assert listed[0].split()[0] == "init"
    assert not [line for line in listed if line.rstrip().endswith("...") or len(line) > 80]
    for name, text in EXAMPLES.items():
        assert "Examples:" in run_hostc(name, "-h").stdout, name
        for line in text.splitlines():
            words = line.split("#")[0].split()
            assert words[:2] == ["hostc", name], line
            for word in words:
                if word.startswith("examples/"):
                    assert (ROOT / word.split("@")[0]).exists(), line
            if name in RUNNABLE and "old/" not in line:  # runs as written (its output aside)
                # at HEAD, not HEAD~1: a shallow clone has no parent commit
                argv = line.split("#")[0].split(">")[0].replace("@HEAD~1", "@HEAD").split()[1:]
                r = run_hostc(*argv, cwd=ROOT)
                assert r.returncode in (0, 1), (line, r.stderr)


#: the examples that read and print only: run as written from the top folder (a diff
#: exits 1 when the two sides differ)
RUNNABLE = ("check", "plan", "explain", "diff")


def test_explain_gives_a_reason_of_several_clauses_a_line_each() -> None:
    """X2: the C-state limit's reason (why, then where, then how it is undone) came as one
    300-character line."""
    r = run_hostc("explain", H100 / "node.toml", "max_cstate")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  plan     "))
    assert lines[at].endswith("on the hot path (costs idle power)"), lines[at]
    assert lines[at + 1].startswith("           per CPU at runtime on the isolated CPUs")
    assert "; " not in lines[at] + lines[at + 1]
