"""Shared test helpers: where the shared topologies live, the CI rule for validators, and
`--regen`, the one command that rewrites every generated file (golden/, schemas/, the
example snapshots): `python -m pytest --regen`, then review `git diff`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

import hypothesis
import pytest

from hostc import api
from hostc.delivery import descriptors
from hostc.plan.model import Plan

# Hypothesis's per-example deadline is wall time: beside the VM lane and another xdist
# worker on 2 cores an example can take 10x its quiet time, and a deadline failure then
# says nothing about the code.  Examples stay bounded by `max_examples`.
hypothesis.settings.register_profile("hostc", deadline=None)
hypothesis.settings.load_profile("hostc")

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "helpers"))

ROOT = Path(__file__).resolve().parents[1]
#: the example hosts: examples/<name>/node.toml and its snapshot
EXAMPLES = ROOT / "examples"
EXAMPLE_NAMES = sorted(p.parent.name for p in EXAMPLES.glob("*/node.toml"))
#: real topologies and consumers' harnesses, beside the checkout (not in it)
SHARED = ROOT.parent / "shared"
SHARED_TOPOLOGIES = SHARED / "topologies"
IN_CI = os.environ.get("CI") == "true"

#: hostc's cache folder (the build records' seal secret, `hostc.delivery.contentkey`) in a
#: folder of this process's own, for every command the suite runs: nothing under $HOME
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="hostc-test-cache-")

#: `hostc ARGS` through the interpreter's own start and end: none of hostc/__main__.py's
#: apparatus (collector, generated-code cache, exit); what that apparatus must not change.
PLAIN = "import sys; from hostc.cli.main import main; sys.argv[0] = 'hostc'; main()"
T = TypeVar("T")


def need_tool(name: str) -> str:
    """The path of a real validator or linter; under CI=true a missing one fails instead
    of skipping.  The interpreter's own bin/ comes first: `venv/bin/python -m pytest`
    without an activated venv still finds the venv's ruff and mypy instead of skipping."""
    path = shutil.which(
        name, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    )
    if path is None:
        if IN_CI:
            pytest.fail(f"validator {name!r} is missing; .ci/run must install it")
        pytest.skip(f"{name} not installed")
    return path


def shared(*parts: str) -> Path:
    """A path under ../shared: real topologies (`topologies/hwloc/…`) or a consumer's
    harness (`tools/cloud-init-apply`).  The README's fresh clone has no ../shared, so
    locally a missing one skips naming the path; under CI=true it fails."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        if IN_CI:
            pytest.fail(f"{path} is missing; CI must provide ../shared")
        # a fresh clone has no ../shared at all: one reason for every such skip, so that
        # `pytest -rs` folds them into one line (first-day-4 R4), not one per file
        missing = path if SHARED.is_dir() else SHARED
        pytest.skip(f"{missing} not present (../shared sits beside the checkout)")
    return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A booted-VM test that skips (no vm-boot, no QEMU, not root) is reported at its
    folder, not at its own line: `pytest -rs` then folds the VM tests' skips into one line
    per reason (first-day-4 R4: 22 lines said the same thing)."""
    outcome = yield
    report = outcome.get_result()
    if (
        report.skipped
        and isinstance(report.longrepr, tuple)
        and item.get_closest_marker("vm") is not None
    ):
        report.longrepr = (str(Path(str(item.path)).parent), None, report.longrepr[2])


def example_plan(name: str) -> Plan:
    """The Plan of examples/<name>/node.toml."""
    return api.compile_file(EXAMPLES / name / "node.toml")[0]


def nonempty(params: Iterable[T], why: str) -> list[T] | list[Any]:
    """Parameters that are never silently none: with none (../shared absent), one
    parameter that skips with `why`; under CI=true a collection failure."""
    found = list(params)
    if found:
        return found
    if IN_CI:
        pytest.fail(f"{why}; CI must provide it", pytrace=False)
    return [pytest.param(None, id="absent", marks=pytest.mark.skip(reason=why))]


def run_hostc(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m hostc ARGS` in a child, as a user runs it; text output."""
    return subprocess.run(
        [sys.executable, "-m", "hostc", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen",
        action="store_true",
        help="rewrite every generated file (golden/, schemas/, example snapshots) from the "
        "code before the tests run; review the change with git diff",
    )


def _controller(config: pytest.Config) -> bool:
    """The process that runs the session: pytest itself, or xdist's controller (not one
    of its workers, which inherit what it set up)."""
    return not hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    """With --regen, regenerate before collection, so the tests then check the new files
    (once, before xdist's workers start).  The session's VM lane folder, in the
    environment every worker inherits (HOSTC_VM_LANE set by hand names one to reuse:
    a lane that already ran there is not started again, its results are read)."""
    if not _controller(config):
        return
    _CONFIG[:] = [config]
    if config.getoption("--regen"):
        from regenerate import regenerate

        changed = regenerate()
        config.stash[_REGENERATED] = [str(p.relative_to(ROOT)) for p in changed]
    if "HOSTC_VM_LANE" not in os.environ:
        lane = Path(tempfile.mkdtemp(prefix="hostc-vmlane-", dir="/var/tmp"))
        os.environ["HOSTC_VM_LANE"] = str(lane)
        config.stash[_OWN_LANE] = lane


_REGENERATED = pytest.StashKey[list[str]]()
_OWN_LANE = pytest.StashKey[Path]()


#: Modules whose tests share module-scoped state (one playbook install that several tests
#: copy; a count of the malformed inputs the module tried): one xdist worker runs each of
#: them whole, in order.  (xdist's own `xdist_group` mark does nothing on pytest 9.2: it
#: rewrites `item._nodeid`, which pytest no longer reads.)
ONE_WORKER = frozenset({"tests/validators/test_ansible.py", "tests/hostile/test_fuzz.py"})


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scope scheduler, a scope being a module of ONE_WORKER or else one test;
    the largest scopes go first (the Ansible module, the longest, starts at once), the
    others in collection order (`pytest_collection_modifyitems`: the VM tests, which
    wait for the VM lane, and then the timing-sensitive ones come last)."""
    from xdist.scheduler import LoadScopeScheduling

    class OneWorkerModules(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in ONE_WORKER else nodeid

    return OneWorkerModules(config, log)


def _lane_order(item: pytest.Item) -> int:
    """The tests beside the VMs first, then the VM tests (they wait for the VM lane)."""
    return 1 if item.get_closest_marker("vm") else 0


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_lane_order)  # stable: collection order within each lane


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the VM lane for the VMs the selected tests need, as soon as they are known
    (whichever xdist worker gets there first starts it)."""
    if session.config.option.collectonly:
        return
    import vmlane

    names = {
        vmlane.FIXTURES[f]
        for item in session.items
        for f in getattr(item, "fixturenames", ())
        if f in vmlane.FIXTURES
    }
    lane = vmlane.lane_dir()
    if names and lane is not None and vmlane.unavailable() is None:
        vmlane.start(lane, names)


_LANES = ("tests beside the VMs", "VM tests")
_ENDS = pytest.StashKey[dict[str, float]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    if _controller(session.config):
        session.config.stash[_ENDS] = {"start": time.monotonic()}


#: per lane, the first skip's reason, and whether any of its tests ran at all: a lane whose
#: every test skipped (no vm-boot, no QEMU) says so instead of a wall time (first-day-4 R3)
_SKIPPED = pytest.StashKey[dict[str, str]]()
_RAN = pytest.StashKey[set[str]]()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """When each lane's last test ended (the controller sees every worker's reports)."""
    ends = _CONFIG[0].stash.get(_ENDS, None) if _CONFIG else None
    if ends is None:
        return
    lane = _LANES[1 if "vm" in report.keywords else 0]
    stash = _CONFIG[0].stash
    if report.skipped and isinstance(report.longrepr, tuple):
        stash.setdefault(_SKIPPED, {}).setdefault(
            lane, str(report.longrepr[2]).removeprefix("Skipped: ")
        )
    elif report.when == "call":
        stash.setdefault(_RAN, set()).add(lane)
    if report.when == "teardown":
        ends[lane] = time.monotonic()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Each lane's wall time from the session's start, to the terminal and to
    $HOSTC_TIMINGS (the table at the end of .ci/run)."""
    ends = session.config.stash.get(_ENDS, None)
    if ends is None:
        return
    ran = set(session.config.stash.get(_RAN, set()))
    skipped = session.config.stash.get(_SKIPPED, {})
    # the VM lane's tests that need no VM (its scripts' lint) run anyway: the lane ran
    # only if its VMs were started
    lane = os.environ.get("HOSTC_VM_LANE")
    if not (lane and (Path(lane) / "started").exists()):
        ran.discard(_LANES[1])
    rows = [
        (lane, f"{ends[lane] - ends['start']:.0f}" if lane in ran else "skipped")
        for lane in _LANES
        if lane in ends
    ]
    session.config.stash[_LANE_ROWS] = [
        (lane, sec if lane in ran else f"skipped: {skipped.get(lane, 'no test ran')}")
        for lane, sec in rows
    ]
    target = os.environ.get("HOSTC_TIMINGS")
    if target:
        with open(target, "a") as f:
            f.writelines(f"pytest: {lane} (from its start)\t{sec}\n" for lane, sec in rows)


_LANE_ROWS = pytest.StashKey[list[tuple[str, str]]]()
#: the session's config, for the report hooks that are not given it
_CONFIG: list[pytest.Config] = []


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop a VM lane an interrupted session left running; remove its folder
    (HOSTC_VM_KEEP=1 keeps it, with every VM's output, for inspection)."""
    lane = config.stash.get(_OWN_LANE, None)
    if lane is None:
        return
    import vmlane

    vmlane.stop(lane)
    if not os.environ.get("HOSTC_VM_KEEP"):
        shutil.rmtree(lane, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lane = config.stash.get(_OWN_LANE, None)
    times = lane / "times.tsv" if lane is not None else None
    rows = list(config.stash.get(_LANE_ROWS, []))
    if times is not None and times.is_file():
        rows += [tuple(row.split("\t")) for row in times.read_text().splitlines()]  # type: ignore[misc]
    if rows:
        terminalreporter.write_line("lanes (wall seconds):")
        for what, seconds in rows:
            terminalreporter.write_line(f"  {what:<40} {seconds:>6}".rstrip())
    changed = config.stash.get(_REGENERATED, None)
    if changed is not None:
        terminalreporter.write_line(f"--regen: {len(changed)} generated files changed")
        for path in changed[:50]:
            terminalreporter.write_line(f"  {path}")


@pytest.fixture(params=["openat2", "walk"])
def opening(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test on both ways a reused host's files are opened: one openat2 call each, and
    `walk`, the folders one by one, as on a kernel without openat2."""
    if request.param == "walk":
        monkeypatch.setattr(descriptors, "_OPENAT2", [None])
    else:
        monkeypatch.setattr(descriptors, "_OPENAT2", [])
        if descriptors._openat2() is None:
            pytest.skip("this platform has no openat2 (Linux 5.6, x86_64 or aarch64)")
    return str(request.param)
