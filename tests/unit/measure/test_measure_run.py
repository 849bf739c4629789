"""The window without waiting: a fake clock and a sleep that changes the fake host (or a
second copy of it), the thread sampler's bookkeeping and bounds, and what is not visible."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hostc import api
from hostc.api import measure as m
from hostc.cpuset import CpuSet
from hostc.diagnostics import HostcError
from hostc.measure import host as host_mod
from hostc.measure.host import ProcRoot
from hostc.measure.model import Verdict
from hostc.measure.run import window
from hostc.measure.sources import TaskStat
from hostc.measure.tasks import Sampler

from conftest import ROOT
from measure_host import Host, Irq, Task, write

PLAN = api.compile_file(ROOT / "tests/vm/v1.toml")[0]
ISOLATED = CpuSet.parse("2-3,6-7")
SH = Task(600, "sh", 7, 10, unit="vmtest-step.service", allowed="7")
START = Host(
    irqs={"4": Irq("IO-APIC   4-edge", "ttyS0", allowed="6")},
    tasks=(SH, Task(11, "rcuop/7", 0, 5, kthread=True)),
    switches=dict.fromkeys(range(8), 100),
)


class Clock:
    """A clock that moves only when slept on; each sleep may change the host."""

    def __init__(self, root: Path, states: list[Host]) -> None:
        self.now, self.root, self.states, self.slept = 0.0, root, states, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        if self.states:
            write(self.root, self.states.pop(0))


def test_a_window_on_one_root_counts_what_changed_while_it_slept(tmp_path: Path) -> None:
    write(tmp_path, START)
    later = START.add("4", 6, 22).add("LOC", 7, 5).later(3)
    later = replace(later, tasks=(replace(SH, runs=310), START.tasks[1]))
    later = replace(later, switches={**dict.fromkeys(range(8), 100), 7: 420})
    clock = Clock(tmp_path, [later])
    w = window(ProcRoot(tmp_path, live=False), 3.0, ISOLATED, clock=clock, sleep=clock.sleep)
    assert sum(clock.slept) == pytest.approx(3.0) and max(clock.slept) <= 1.0
    assert w.seconds == pytest.approx(3.0)  # from /proc/uptime
    assert w.tasks.scans >= 3 and w.tasks.offloaded == frozenset({7})
    [run] = w.tasks.runs
    assert (run.cpu, run.comm, run.runs, run.unit, run.allowed) == (
        7, "sh", 300, "vmtest-step.service", CpuSet.parse("7"),
    )  # fmt: skip
    assert w.places["4"].allowed == CpuSet.parse("6")
    assert w.nohz_full == ISOLATED


def test_two_copies_need_no_wait(tmp_path: Path) -> None:
    a = write(tmp_path / "a", START)
    b = write(tmp_path / "b", START.add("4", 6, 22).later(5))

    def never(_: float) -> None:
        raise AssertionError("slept")

    found = m.measure(PLAN, 0, a, b, sleep=never)
    assert found.seconds == 5.0
    [excess] = found.excess
    assert (excess.cpu, excess.key, excess.name, excess.cause.id) == (6, "4", "ttyS0", "irq-owner")
    seven = next(c for c in found.cpus if c.cpu == 7)
    assert (seven.switches, seven.booked) == (0, 0)


def test_the_sampler_books_runs_new_threads_and_exits() -> None:
    s = Sampler(CpuSet.parse("6-7"), lambda pid: ("x.service", CpuSet.parse("7")))

    def scan(*tasks: tuple[int, int, int]) -> None:
        s.begin()
        for tid, cpu, runs in tasks:
            s.feed(TaskStat(tid, f"t{tid}", 0, runs, cpu), tid, runs)
        s.end(partial=False, offloaded=frozenset())

    scan((1, 7, 10), (2, 0, 5), (3, 6, 1))
    scan((1, 7, 15), (2, 6, 5), (4, 6, 2))  # 3 exited, 4 born, 2 moved without running
    scan((1, 0, 16), (4, 6, 2))  # 1 ran once more, now on a housekeeping CPU
    r = s.result()
    assert [(t.tid, t.cpu, t.runs) for t in r.runs] == [(4, 6, 2), (1, 7, 5)]
    assert (r.scans, r.exited, r.most, r.by_switches) == (3, 2, 3, True)


def test_without_schedstat_a_thread_counts_once_per_interval_with_cpu_time() -> None:
    s = Sampler(CpuSet.parse("7"), lambda pid: (None, None))
    for cputime in (10, 10, 12, 15):
        s.begin()
        s.feed(TaskStat(1, "t", 0, cputime, 7), 1, None)
        s.end(partial=False, offloaded=frozenset())
    r = s.result()
    assert not r.by_switches and [t.runs for t in r.runs] == [2]


def test_a_scan_stops_at_its_limit_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = tuple(Task(100 + i, "sleep", 6, i) for i in range(10))
    write(tmp_path, replace(START, tasks=tasks))
    monkeypatch.setattr(host_mod, "TASK_LIMIT", 4)
    fed: list[int] = []
    scan = ProcRoot(tmp_path, live=False).scan(lambda t, pid, runs: fed.append(t.tid))
    assert scan.partial and scan.count == 4 and len(fed) == 4


def test_what_a_copy_lacks_is_named_not_raised(tmp_path: Path) -> None:
    write(tmp_path, START)
    for f in ("proc/softirqs", "proc/vmstat", "proc/schedstat", "proc/uptime"):
        (tmp_path / f).unlink()
    found = m.measure(PLAN, 0, tmp_path)
    assert any("/proc/softirqs: not visible" in n for n in found.not_visible)
    assert any("CONFIG_SCHEDSTATS" in n for n in found.not_visible)
    assert "tracefs not visible" in found.osnoise
    assert all(c.switches is None for c in found.cpus)


def test_no_proc_at_all_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(HostcError, match="nothing to count"):
        m.measure(PLAN, 0, tmp_path)
    with pytest.raises(HostcError, match="no such directory"):
        m.measure(PLAN, 0, tmp_path / "missing")
    with pytest.raises(HostcError, match="must be 0 to 600"):
        m.measure(PLAN, 601, tmp_path)


def test_a_host_that_is_not_the_plans_says_so(tmp_path: Path) -> None:
    write(tmp_path, replace(START, cpus=(0, 1)))
    found = m.measure(PLAN, 0, tmp_path)
    assert [c.cpu for c in found.cpus if not c.here] == [2, 3, 4, 5, 6, 7]
    assert any("CPUs 2-7 of the Plan have no counters here" in n for n in found.not_visible)
    assert all(r.verdict is not Verdict.EXCESS for c in found.cpus for r in c.rows)


def test_the_default_record_is_roots_on_the_live_host_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 0)
    assert m.default_record("/") == m.RECORD
    assert m.default_record(ROOT) is None  # a copy: never by default
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    assert m.default_record("/") is None


def test_a_copys_links_are_not_followed_out_of_it(tmp_path: Path) -> None:
    """A copy handed by someone else: its /proc a link to the live /proc reads nothing of
    this machine, and a thread folder reached through a link is not read."""
    other = write(tmp_path / "other", START)
    root = tmp_path / "root"
    root.mkdir()
    (root / "proc").symlink_to("/proc")  # inside the copy: root/proc, which is this link
    assert ProcRoot(root, live=False).scan(lambda t, pid, runs: None).count == 0
    (root / "proc").unlink()
    (root / "proc" / "100").mkdir(parents=True)
    (root / "proc" / "100" / "task").symlink_to(other / "proc" / "600" / "task")
    assert ProcRoot(root, live=False).scan(lambda t, pid, runs: None).count == 0
    assert ProcRoot(other, live=False).scan(lambda t, pid, runs: None).count == 2
