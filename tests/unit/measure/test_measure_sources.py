"""The /proc parsers of `hostc measure` on real text: this development machine's files,
the kernel documentation's examples and arm64 hosts from public sources (samples/README.md
names each), plus round trips of the kernel's format and the bad input a copy may hold."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostc.diagnostics import HostcError
from hostc.knowledge.noise import NoiseKind
from hostc.measure import sources
from hostc.measure.attribute import kind_of
from hostc.measure.run import delta

from measure_host import ARCH, SOFTIRQS, Host, Irq, interrupts, softirqs

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def kinds(table: sources.PerCpuTable) -> dict[str, NoiseKind]:
    return {r.key: kind_of(r.key, r.name, r.device) for r in table.rows if not r.glob}


def test_dev_machine_interrupts_name_every_line_and_count_forward() -> None:
    before = sources.parse_interrupts(sample("x86-2cpu-dev-interrupts.before"))
    after = sources.parse_interrupts(sample("x86-2cpu-dev-interrupts.after"))
    assert before.cpus == after.cpus == (0, 1)
    devices = [r for r in after.rows if r.device]
    assert {r.name for r in devices} >= {"ttyS0", "ACPI:Ged", "virtio1-req.0", "virtio3-tx"}
    assert all(r.chip and r.name for r in devices)
    ttys = after.row("26")
    assert ttys is not None and ttys.chip == "IO-APIC 4-edge"
    k = kinds(after)
    assert (k["LOC"], k["RES"], k["CAL"], k["TLB"], k["IWI"], k["NMI"]) == (
        NoiseKind.TICK, NoiseKind.RESCHED, NoiseKind.CALL,
        NoiseKind.TLB, NoiseKind.IRQ_WORK, NoiseKind.NMI,
    )  # fmt: skip
    assert k["HYP"] is NoiseKind.ARCH and after.row("HYP").name == "Hypervisor callback interrupts"  # type: ignore[union-attr]
    err = after.row("ERR")
    assert err is not None and err.glob
    for cpu in (0, 1):
        grew = delta(before, after, "LOC", cpu)
        assert grew is not None and grew > 0  # 3 s of a running machine's ticks


def test_dev_machine_softirqs_vmstat_and_uptime() -> None:
    before = sources.parse_softirqs(sample("x86-2cpu-dev-softirqs.before"))
    after = sources.parse_softirqs(sample("x86-2cpu-dev-softirqs.after"))
    assert [r.key for r in after.rows] == list(SOFTIRQS)  # the kernel's order
    assert (delta(before, after, "TIMER", 0) or 0) > 0
    vm = sources.parse_vmstat(sample("x86-2cpu-dev-vmstat.after"))
    assert "numa_pte_updates" in vm and "numa_hint_faults" in vm
    up0 = sources.parse_uptime(sample("x86-2cpu-dev-uptime.before"))
    up1 = sources.parse_uptime(sample("x86-2cpu-dev-uptime.after"))
    assert 2.5 < up1 - up0 < 30


def test_kernel_doc_examples_old_formats() -> None:
    """Documentation/filesystems/proc.rst: a 2.4 uniprocessor (chip then name, no trigger
    word) and an SMP machine whose NMI and LOC rows carry no label and ERR one count."""
    up = sources.parse_interrupts(sample("kernel-doc-up-1cpu-interrupts"))
    assert up.cpus == (0,)
    mouse = up.row("12")
    assert mouse is not None and (mouse.chip, mouse.name) == ("XT-PIC", "PS/2 Mouse")
    smp = sources.parse_interrupts(sample("kernel-doc-smp-2cpu-interrupts"))
    eth = smp.row("17")
    assert eth is not None and (eth.chip, eth.name, eth.counts) == (
        "IO-APIC-level", "eth0", (30564, 30414),
    )  # fmt: skip
    assert kinds(smp)["LOC"] is NoiseKind.TICK and kinds(smp)["NMI"] is NoiseKind.NMI
    loc = smp.row("LOC")
    assert loc is not None and loc.name == "Local timer interrupts"
    err = smp.row("ERR")
    assert err is not None and err.glob and err.counts == ()
    soft = sources.parse_softirqs(sample("kernel-doc-4cpu-softirqs"))  # tabs, no IRQ_POLL
    rcu = soft.row("RCU")
    assert soft.cpus == (0, 1, 2, 3) and rcu is not None and rcu.counts == (1678, 1769, 2178, 2250)


def test_arm64_rows_tick_ipis_and_names_with_spaces() -> None:
    """arm64 prints its IPIs as `IPIn:` rows labelled by arch/arm64/kernel/smp.c's
    ipi_types, its tick as the device row `arch_timer`, and `Err:` with one count."""
    t = sources.parse_interrupts(sample("arm64-asahi-8cpu-interrupts"))
    assert t.cpus == tuple(range(8))
    k = kinds(t)
    assert k["35"] is NoiseKind.TICK  # arch_timer
    assert (k["IPI0"], k["IPI1"], k["IPI4"], k["IPI5"]) == (
        NoiseKind.RESCHED, NoiseKind.CALL, NoiseKind.TICK, NoiseKind.IRQ_WORK,
    )  # fmt: skip
    assert k["IPI2"] is NoiseKind.ARCH and t.row("IPI2").name == "CPU stop interrupts"  # type: ignore[union-attr]
    assert k["51"] is NoiseKind.DEVICE
    named = {r.key: (r.chip, r.name) for r in t.rows if r.device}
    assert named["52"] == ("AIC2 66089 Level", "apple-dart fault handler, apple-dart fault handler")
    assert named["104"] == ("PCIe MSI 526336 Edge", "bcm4377")
    assert named["97"] == ("PCIe 12 Edge", "Link up")
    err = t.row("Err")
    assert err is not None and err.glob
    k3 = sources.parse_interrupts(sample("arm64-ti-k3-4cpu-interrupts"))
    dma = k3.row("116")
    assert dma is not None and dma.name == "485c0100.dma-controller chan6"
    assert kinds(k3)["11"] is NoiseKind.TICK


_NAME = st.text(
    alphabet=st.characters(min_codepoint=33, max_codepoint=126, exclude_characters=":"),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(
    cpus=st.lists(st.integers(0, 300), min_size=1, max_size=40, unique=True).map(sorted),
    names=st.lists(st.lists(_NAME, min_size=1, max_size=3).map(" ".join), min_size=1, max_size=6),
    count=st.integers(0, 2**40),
)
def test_kernel_format_round_trips_for_any_cpus_and_names(
    cpus: list[int], names: list[str], count: int
) -> None:
    """Any online CPUs (offline ones have no column), any action names (spaces inside)."""
    irqs = {str(24 + i): Irq("PCI-MSIX-0000:00:01.0   1-edge", n) for i, n in enumerate(names)}
    host = Host(cpus=tuple(cpus), irqs=irqs).add("24", cpus[-1], count).add("LOC", cpus[0], 5)
    t = sources.parse_interrupts(interrupts(host))
    assert t.cpus == tuple(cpus)
    assert [t.row(k).name for k in irqs] == names  # type: ignore[union-attr]
    row = t.row("24")
    assert row is not None and row.counts[-1] >= count
    assert {r.key for r in t.rows} >= {key for key, _ in ARCH}
    soft = sources.parse_softirqs(softirqs(host))
    assert soft.cpus == tuple(cpus)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "is empty"),
        ("  0: 1 2 IO-APIC timer\n", "no header of CPU columns"),
        ("  CPU0  CPU1\n 0: 1 IO-APIC 2-edge timer\n", "has 1 counts for 2 CPUs"),
        ("  CPU0\nLOC: 1 Local\nLOC: 2 Local\n", "appears twice"),
        ("  CPU0\nthis is no row\n", "is not `KEY: counts"),
    ],
)
def test_bad_interrupts_name_the_file(text: str, why: str) -> None:
    with pytest.raises(HostcError) as e:
        sources.parse_interrupts(text, "/copy/proc/interrupts")
    d = e.value.diagnostics[0]
    assert d.file == "/copy/proc/interrupts" and why in d.message


def test_bad_softirqs_schedstat_vmstat_uptime() -> None:
    with pytest.raises(HostcError, match="one count per CPU"):
        sources.parse_softirqs("  CPU0 CPU1\nHI: 1\n")
    with pytest.raises(HostcError, match="version N"):
        sources.parse_schedstat("cpu0 1 2 3\n")
    with pytest.raises(HostcError, match="no field 9"):
        sources.parse_schedstat("version 15\ntimestamp 1\ncpu0 1 2\n")
    assert sources.parse_schedstat("version 99\ncpu0 0 0 0 0 0 0 0 0 7\n") is None
    assert sources.parse_schedstat("version 15\ntimestamp 9\ncpu3 0 0 5 1 2 3 4 5 42\n") == {3: 42}
    with pytest.raises(HostcError, match="name value"):
        sources.parse_vmstat("not a vmstat\n")
    with pytest.raises(HostcError, match="SECONDS IDLE"):
        sources.parse_uptime("up\n")


def test_task_stat_with_any_comm_and_a_kernel_thread() -> None:
    tail = "S 1 1 1 0 -1 {} 0 0 0 0 7 3 0 0 20 0 1 0 5 0 0 " + "0 " * 14 + "{} 0 0 0 0 0"
    user = sources.parse_task_stat("42 (a b) (c)) " + tail.format(0x400100, 5))
    assert user is not None and (user.tid, user.comm, user.cpu, user.cputime) == (
        42,
        "a b) (c)",
        5,
        10,
    )
    assert not user.kthread
    kthread = sources.parse_task_stat("9 (ksoftirqd/3) " + tail.format(0x00208040, 3))
    assert kthread is not None and kthread.kthread
    assert sources.parse_task_stat("42 (trunc") is None  # a thread that exited mid-read
    assert sources.parse_task_stat("") is None
    assert sources.parse_task_schedstat("1000 2000 17\n") == 17
    assert sources.parse_task_schedstat("garbage") is None


def test_cgroup_unit_prefers_the_unified_line() -> None:
    assert sources.parse_cgroup_unit("0::/system.slice/demo.service\n") == "demo.service"
    v1 = "9:name=systemd:/user.slice/session-3.scope\n0::/system.slice/x.service/sub\n"
    assert sources.parse_cgroup_unit(v1) == "x.service"
    assert sources.parse_cgroup_unit("0::/\n") is None
    assert sources.status_field("Name:\tsh\nCpus_allowed_list:\t7\n", "Cpus_allowed_list") == "7"
