"""`hostc measure`'s judgement: each count on an isolated CPU against what the Plan
promises it, attributed to exactly one Plan setting or one named kernel mechanism.

The Plans are the booted VM's (tests/vm/v1.toml: hostc owns IRQs; tests/vm/tuned.toml:
TuneD hands them to irqbalance): CPUs 0-1,4-5 keep house, 2-3 run demo2, 6-7 demo."""

from __future__ import annotations

from collections.abc import Iterable

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.cpuset import CpuSet
from hostc.knowledge.noise import NoiseKind
from hostc.measure.attribute import attribute
from hostc.measure.host import Counters, IrqPlace
from hostc.measure.model import CauseKind, CountRow, Measurement, Verdict
from hostc.measure.promise import Promises, promises
from hostc.measure.run import Window
from hostc.measure.sources import parse_interrupts, parse_softirqs
from hostc.measure.tasks import TaskRun, TaskRuns
from hostc.record import FrozenMap

from conftest import ROOT
from measure_host import ARCH, SOFTIRQS, Host, Irq, interrupts, softirqs

V1 = promises(api.compile_file(ROOT / "tests/vm/v1.toml")[0])
TUNED = promises(api.compile_file(ROOT / "tests/vm/tuned.toml")[0])
RCUO = frozenset({2, 3, 6, 7})
NOHZ = CpuSet.parse("2-3,6-7")
TTY = Irq("IO-APIC   4-edge", "ttyS0", allowed="6")
DISK = Irq("PCI-MSIX-0000:00:03.0   3-edge", "virtio1-req.3", allowed="7")


def counters(h: Host) -> Counters:
    return Counters(
        parse_interrupts(interrupts(h)),
        parse_softirqs(softirqs(h)),
        FrozenMap(h.vmstat),
        None,
        h.uptime,
    )


def window(
    before: Host,
    after: Host,
    runs: Iterable[TaskRun] = (),
    *,
    nohz: CpuSet | None = NOHZ,
    offloaded: frozenset[int] = RCUO,
    managed: dict[str, bool | None] | None = None,
) -> Window:
    places = {
        k: IrqPlace(CpuSet.parse(i.allowed), None, (managed or {}).get(k))
        for k, i in after.irqs.items()
    }
    tasks = TaskRuns(tuple(runs), 3, False, 100, 0, True, offloaded)
    return Window(
        after.uptime - before.uptime,
        counters(before),
        counters(after),
        tasks,
        FrozenMap(places),
        nohz,
        after.numa_balancing,
        "not looked for",
    )


def rows(m: Measurement, cpu: int) -> dict[str, CountRow]:
    return {r.key: r for c in m.cpus if c.cpu == cpu for r in c.rows}


BASE = Host(irqs={"4": TTY, "28": DISK})


def test_planted_irq_and_task_are_named_with_their_settings() -> None:
    """The VM's planted disturbances: ttyS0 moved onto CPU 6, a shell pinned to CPU 7."""
    after = BASE.add("4", 6, 22).add("LOC", 6, 3).add("28", 7, 10).add("LOC", 7, 300)
    after = after.add("RES", 7, 40).add("RCU", 7, 100).add("TIMER", 6, 2).later(5)
    runs = [
        TaskRun(6, 500, 500, "sleep", False, 1, "demo.service", CpuSet.parse("6-7")),
        TaskRun(6, 10, 10, "ksoftirqd/6", True, 1),
        TaskRun(7, 600, 600, "sh", False, 300, "vmtest-step.service", CpuSet.parse("7")),
        TaskRun(7, 601, 601, "kcompactd1", True, 1),
    ]
    m = attribute(V1, window(BASE, after, runs))
    six, seven = rows(m, 6), rows(m, 7)
    tty = six["4"]
    assert (tty.kind, tty.name, tty.count, tty.verdict, tty.cause.id) == (
        NoiseKind.DEVICE, "ttyS0", 22, Verdict.EXCESS, "irq-owner",
    )  # fmt: skip
    assert tty.cause.source == "irq.owner" and "hostc-tuning" in tty.cause.fix
    assert "affinity 6" in tty.cause.why
    assert (six["500"].verdict, six["500"].cause.id) == (Verdict.OWN, "workload-cpus")
    assert (six["10"].verdict, six["10"].cause.id) == (Verdict.KERNEL, "per-cpu-kthread")
    assert (six["LOC"].verdict, six["LOC"].allowed) == (Verdict.ALLOWED, 7)  # 5 s + 2
    assert six["TIMER"].verdict is Verdict.ALLOWED
    sh = seven["600"]
    assert (sh.name, sh.verdict, sh.cause.id) == ("sh", Verdict.EXCESS, "service-cpus")
    assert "vmtest-step.service" in sh.cause.why and "affinity 7" in sh.cause.why
    assert (seven["28"].verdict, seven["28"].cause.id) == (Verdict.KERNEL, "managed-irq")
    assert (seven["601"].verdict, seven["601"].cause.id) == (Verdict.KERNEL, "node-kthread")
    for key in ("LOC", "RES", "RCU"):  # the shell's secondary noise is the shell's setting
        assert (seven[key].verdict, seven[key].cause.id) == (Verdict.EXCESS, "service-cpus")
    assert {c.cpu: c.rows for c in m.cpus}[2] == ()  # nothing on demo2's CPUs
    assert all(
        r.verdict is Verdict.UNPROMISED for c in m.cpus if c.role != "isolated" for r in c.rows
    )


def test_a_clean_window_has_no_excess() -> None:
    after = BASE.add("LOC", 6, 4).add("28", 7, 3).add("BLOCK", 7, 3).add("CAL", 2, 5)
    after = after.add("TLB", 3, 1).add("IWI", 6, 1).later(5)
    m = attribute(V1, window(BASE, after))
    assert m.excess == []
    assert rows(m, 7)["BLOCK"].cause.id == "own-io"
    assert rows(m, 2)["CAL"].cause.id == "call" and rows(m, 3)["TLB"].cause.id == "tlb"


def test_ticks_where_the_kernel_has_no_nohz_full_are_its_excess() -> None:
    after = BASE.add("LOC", 6, 1200).later(5)
    loc = rows(attribute(V1, window(BASE, after, nohz=CpuSet())), 6)["LOC"]
    assert (loc.verdict, loc.cause.id, loc.cause.source) == (
        Verdict.EXCESS, "nohz_full", "cpu.mechanisms",
    )  # fmt: skip
    kept = rows(attribute(V1, window(BASE, after)), 6)["LOC"]  # in effect: timers kept it
    assert (kept.verdict, kept.cause.id) == (Verdict.KERNEL, "tick-kept")


def test_rcu_softirqs_without_an_offload_thread_are_rcu_nocbs() -> None:
    after = BASE.add("RCU", 6, 50).later(5)
    rcu = rows(attribute(V1, window(BASE, after, offloaded=frozenset({2, 3, 7}))), 6)["RCU"]
    assert (rcu.verdict, rcu.cause.id) == (Verdict.EXCESS, "rcu_nocbs")


def test_without_threads_to_look_at_rcu_offload_is_not_judged() -> None:
    """A copy that holds the counters but no /proc/PID: no rcuo thread seen is no proof."""
    after = BASE.add("RCU", 6, 3).add("LOC", 6, 3).later(5)
    w = window(BASE, after, offloaded=frozenset())
    w = attrs.evolve(w, tasks=attrs.evolve(w.tasks, most=0))
    rcu = rows(attribute(V1, w), 6)["RCU"]
    assert (rcu.verdict, rcu.cause.id) == (Verdict.ALLOWED, "residual-tick")


def test_managed_irq_with_a_housekeeping_cpu_in_its_mask_is_isolcpus() -> None:
    host = Host(irqs={"30": Irq("PCI-MSIX-0000:00:04.0 1-edge", "nvme0q3", allowed="1,7")})
    after = host.add("30", 7, 9).later(5)
    irq = rows(attribute(V1, window(host, after, managed={"30": True})), 7)["30"]
    assert (irq.verdict, irq.cause.id) == (Verdict.EXCESS, "isolcpus")
    # debugfs says it is no managed IRQ: the owner should have moved it
    irq = rows(attribute(V1, window(host, after, managed={"30": False})), 7)["30"]
    assert (irq.verdict, irq.cause.id) == (Verdict.EXCESS, "irq-owner")


def test_the_irq_owner_named_is_the_plans() -> None:
    after = BASE.add("4", 6, 5).later(5)
    irq = rows(attribute(TUNED, window(BASE, after)), 6)["4"]
    assert irq.cause.id == "irq-owner" and "TuneD" in irq.cause.what
    assert "tuned-adm" in irq.cause.fix


def test_threads_outside_their_place() -> None:
    runs = [
        TaskRun(2, 700, 700, "sleep", False, 3, "demo.service", CpuSet.parse("2-3")),
        TaskRun(3, 701, 701, "kworker/u16:2-events_unbound", True, 4),
        TaskRun(3, 702, 702, "irq/4-ttyS0", True, 4),
    ]
    after = BASE.add("4", 3, 4).later(5)
    r = rows(attribute(V1, window(BASE, after, runs)), 2) | rows(
        attribute(V1, window(BASE, after, runs)), 3
    )
    assert (r["700"].verdict, r["700"].cause.id) == (Verdict.EXCESS, "workload-cpus")
    assert "demo.service" in r["700"].cause.why
    assert (r["701"].verdict, r["701"].cause.id) == (Verdict.EXCESS, "workqueue-cpumask")
    assert (r["702"].verdict, r["702"].cause.id) == (Verdict.EXCESS, "irq-owner")  # its IRQ's


def test_nmis_are_the_left_out_watchdog_and_numa_balancing_the_sysctl() -> None:
    after = BASE.add("NMI", 6, 5).later(5)
    after = Host(**{**after.__dict__, "vmstat": {"numa_pte_updates": 40, "numa_hint_faults": 2}})
    m = attribute(V1, window(BASE, after))
    nmi = rows(m, 6)["NMI"]
    assert (nmi.verdict, nmi.cause.id) == (Verdict.LEFT_OUT, "left-out:kernel.nmi_watchdog")
    assert [(r.key, r.verdict, r.cause.id) for r in m.host] == [
        ("numa_pte_updates", Verdict.EXCESS, "sysctl:kernel.numa_balancing"),
        ("numa_hint_faults", Verdict.EXCESS, "sysctl:kernel.numa_balancing"),
    ]


# -- the property ------------------------------------------------------------------


def setting_ids(p: Promises) -> set[str]:
    ids = {s.id for s in (p.irq, p.services, p.workqueue) if s is not None}
    ids |= {w.setting.id for w in p.workloads} | set(p.mechanisms)
    ids |= {f"left-out:{k}" for k in p.left_out} | {f"sysctl:{k}" for k in p.sysctls}
    return ids


ROWS = [k for k, _ in ARCH] + list(SOFTIRQS)
CHIPS = ("IO-APIC   4-edge", "PCI-MSIX-0000:00:03.0   2-edge", "GICv3  30 Level")
COMMS = ("sh", "sleep", "ksoftirqd/{}", "kworker/{}:1", "kworker/u16:0", "kcompactd0", "rcuop/{}")


@st.composite
def windows(draw: st.DrawFn) -> tuple[Window, str, int]:
    """A random window on the VM's 8 CPUs, with one IRQ (`planted`) moved onto an
    isolated CPU (`cpu`) by hand, never managed."""
    cpu = draw(st.sampled_from([2, 3, 6, 7]))
    irqs = {
        str(30 + i): Irq(
            draw(st.sampled_from(CHIPS)),
            f"dev{i}",
            allowed=draw(st.sampled_from(["0-1", "7", "2-3", "6"])),
        )
        for i in range(draw(st.integers(0, 4)))
    }
    irqs["4"] = Irq("IO-APIC   4-edge", "ttyS0", allowed=str(cpu))
    before = Host(irqs=irqs)
    after = before.add("4", cpu, draw(st.integers(1, 500)))
    for _ in range(draw(st.integers(0, 25))):
        key = draw(st.sampled_from(ROWS + list(irqs)))
        after = after.add(key, draw(st.integers(0, 7)), draw(st.integers(1, 3000)))
    runs = [
        TaskRun(
            c := draw(st.integers(0, 7)),
            tid,
            tid,
            draw(st.sampled_from(COMMS)).format(c),
            draw(st.booleans()),
            draw(st.integers(1, 400)),
            draw(st.sampled_from([None, "demo.service", "demo2.service", "cron.service"])),
        )
        for tid in range(100, 100 + draw(st.integers(0, 6)))
    ]
    managed = {k: draw(st.sampled_from([None, True, False])) for k in irqs if k != "4"}
    managed["4"] = draw(st.sampled_from([None, False]))
    w = window(
        before,
        after.later(draw(st.floats(0.5, 60))),
        runs,
        nohz=draw(st.sampled_from([CpuSet.parse("2-3,6-7"), CpuSet(), None])),
        offloaded=draw(st.sampled_from([RCUO, frozenset()])),
        managed=managed,
    )
    return w, "4", cpu


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(windows())
def test_every_count_on_an_isolated_cpu_has_exactly_one_cause(
    drawn: tuple[Window, str, int],
) -> None:
    w, planted, cpu = drawn
    m = attribute(V1, w)
    ids = setting_ids(V1)
    for report in m.cpus:
        for r in report.rows:
            assert r.count > 0 and r.cause.id and r.cause.why
            if report.role != "isolated":
                assert r.verdict is Verdict.UNPROMISED
            elif r.verdict in (Verdict.EXCESS, Verdict.OWN, Verdict.LEFT_OUT):
                assert r.cause.kind is CauseKind.SETTING and r.cause.id in ids, r
                assert r.cause.source and r.cause.what
            else:
                assert r.cause.kind is CauseKind.MECHANISM, r
            if r.verdict is Verdict.ALLOWED:
                assert r.count <= r.allowed
    irq = rows(m, cpu)[planted]  # the planted line is always found, by name, under its owner
    assert (irq.name, irq.verdict, irq.cause.id) == ("ttyS0", Verdict.EXCESS, "irq-owner")
    assert irq.cause.source == "irq.owner"


@pytest.mark.parametrize("seconds", [0.0, 1.0, 5.0, 59.5])
def test_the_residual_tick_allowance_is_one_per_second_plus_two(seconds: float) -> None:
    after = BASE.add("LOC", 6, 1).later(seconds)
    loc = rows(attribute(V1, window(BASE, after)), 6)["LOC"]
    assert loc.allowed == int(-(-seconds // 1)) + 2
