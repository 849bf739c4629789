"""Fake host roots for `hostc measure`: the /proc and /sys files it reads, written in the
kernel's own formats from a compact description, so a test says in a few lines what a
window saw (two roots: its start and its end).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

#: softirq vectors in the kernel's order (kernel/softirq.c softirq_to_name)
SOFTIRQS = (
    "HI",
    "TIMER",
    "NET_TX",
    "NET_RX",
    "BLOCK",
    "IRQ_POLL",
    "TASKLET",
    "SCHED",
    "HRTIMER",
    "RCU",
)
#: x86's architecture rows (key, label), a subset in the kernel's order
ARCH = (
    ("NMI", "Non-maskable interrupts"),
    ("LOC", "Local timer interrupts"),
    ("IWI", "IRQ work interrupts"),
    ("RES", "Rescheduling interrupts"),
    ("CAL", "Function call interrupts"),
    ("TLB", "TLB shootdowns"),
)


@dataclass(frozen=True)
class Irq:
    """A device IRQ: its chip as printed, its action name, where it may run."""

    chip: str
    name: str
    allowed: str = "0-1,4-5"
    effective: str | None = None
    managed: bool | None = None  # written to debugfs where not None


@dataclass(frozen=True)
class Task:
    tid: int
    comm: str
    cpu: int
    runs: int  # switch-ins so far
    pid: int | None = None  # the process (default: the thread itself)
    kthread: bool = False
    unit: str | None = None  # its systemd unit (cgroup)
    allowed: str = "0-7"


@dataclass(frozen=True)
class Host:
    """One reading of a host: every count so far, by row and CPU."""

    cpus: tuple[int, ...] = tuple(range(8))
    irqs: dict[str, Irq] = field(default_factory=dict)
    counts: dict[str, dict[int, int]] = field(default_factory=dict)  # row key → CPU → count
    tasks: tuple[Task, ...] = ()
    vmstat: dict[str, int] = field(
        default_factory=lambda: {"numa_pte_updates": 0, "numa_hint_faults": 0}
    )
    uptime: float = 1000.0
    switches: dict[int, int] | None = None  # /proc/schedstat pcount per CPU
    nohz_full: str | None = "2-3,6-7"
    numa_balancing: str = "0"

    def add(self, key: str, cpu: int, n: int) -> Host:
        """This reading with `n` more on row `key`, CPU `cpu`."""
        counts = {k: dict(v) for k, v in self.counts.items()}
        row = counts.setdefault(key, {})
        row[cpu] = row.get(cpu, 0) + n
        return replace(self, counts=counts)

    def later(self, seconds: float) -> Host:
        return replace(self, uptime=self.uptime + seconds)


def _put(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _row(key: str, host: Host) -> str:
    return "".join(f"{host.counts.get(key, {}).get(c, 0):10} " for c in host.cpus)


def interrupts(host: Host) -> str:
    """/proc/interrupts as kernel/irq/proc.c and arch/x86/kernel/irq.c print it."""
    lines = ["    " + "".join(f"CPU{c:<7}" for c in host.cpus)]
    for key, irq in sorted(host.irqs.items(), key=lambda kv: int(kv[0])):
        lines.append(f"{key:>3}: {_row(key, host)} {irq.chip}      {irq.name}")
    for key, label in ARCH:
        lines.append(f"{key}: {_row(key, host)}  {label}")
    lines.append("ERR:          0")
    return "\n".join(lines) + "\n"


def softirqs(host: Host) -> str:
    lines = ["                    " + "".join(f"CPU{c:<7}" for c in host.cpus)]
    lines += [f"{name:>12}: {_row(name, host)}" for name in SOFTIRQS]
    return "\n".join(lines) + "\n"


def write(root: Path, host: Host) -> Path:
    """The files of `host` under `root` (made)."""
    _put(root, "proc/interrupts", interrupts(host))
    _put(root, "proc/softirqs", softirqs(host))
    _put(root, "proc/vmstat", "".join(f"{k} {v}\n" for k, v in host.vmstat.items()))
    _put(root, "proc/uptime", f"{host.uptime:.2f} 100.00\n")
    _put(root, "proc/sys/kernel/numa_balancing", host.numa_balancing + "\n")
    if host.switches is not None:
        body = "".join(f"cpu{c} 0 0 0 0 0 0 0 0 {host.switches.get(c, 0)}\n" for c in host.cpus)
        _put(root, "proc/schedstat", "version 15\ntimestamp 1\n" + body)
    if host.nohz_full is not None:
        _put(root, "sys/devices/system/cpu/nohz_full", host.nohz_full + "\n")
    for key, irq in host.irqs.items():
        _put(root, f"proc/irq/{key}/smp_affinity_list", irq.allowed + "\n")
        if irq.effective is not None:
            _put(root, f"proc/irq/{key}/effective_affinity_list", irq.effective + "\n")
        if irq.managed is not None:
            flags = "IRQD_AFFINITY_MANAGED" if irq.managed else "IRQD_AFFINITY_SET"
            _put(
                root,
                f"sys/kernel/debug/irq/irqs/{key}",
                f"handler:  handle_edge_irq\ndstate:   0x0\n            {flags}\n",
            )
    for t in host.tasks:
        pid = t.pid if t.pid is not None else t.tid
        flags = 0x00200040 if t.kthread else 0x00400100
        stat = (
            f"{t.tid} ({t.comm}) S 1 1 1 0 -1 {flags} 0 0 0 0 {t.runs} 0 0 0 20 0 1 0 5 0 0 "
            + " ".join(["0"] * 14)
            + f" {t.cpu} 0 0 0 0 0\n"
        )
        base = f"proc/{pid}/task/{t.tid}"
        _put(root, f"{base}/stat", stat)
        _put(root, f"{base}/schedstat", f"1000 2000 {t.runs}\n")
        cgroup = f"0::/system.slice/{t.unit}\n" if t.unit else "0::/\n"
        _put(root, f"proc/{pid}/cgroup", cgroup)
        _put(root, f"proc/{pid}/status", f"Name:\t{t.comm}\nCpus_allowed_list:\t{t.allowed}\n")
    return root
