"""Did the runtime settings come first at boot?  hostc's tuning (hostc-tuning.service)
or the wait for TuneD's profile (hostc-tuned-ready.service) against every container
runtime, kubelet and workload that started this boot (issue 52, F3; NTO e2e 74767).

Read from systemd's own per-unit timestamps (`systemctl show`, monotonic µs since boot,
one clock): the first unit's ActiveEnterTimestampMonotonic (a oneshot is active once its
command exited) against each other unit's InactiveExitTimestampMonotonic (when its start
began, before ExecStartPre=).  systemd keeps the latest of each, so a unit restarted
later shows its later start, which only makes the order easier to meet; but a run of the
tuning unit after them (hostc-apply restarts hostc-tuning, a NIC event re-runs it) moves
its stamp past theirs.  Such a run is told from a missing order by the unit's `After=`:
where it holds the tuning unit, systemd starts them in that order at every boot, and the
row is not observable rather than drift.
"""

from __future__ import annotations

from collections.abc import Callable

from hostc.audit.host import HostReader
from hostc.audit.observe import Expect, Look
from hostc.audit.seen import Seen, absent


def _stamp(props: dict[str, str], key: str) -> int:
    value = props.get(key, "")
    return int(value) if value.isdigit() else 0


def started_before(host: HostReader, e: Expect) -> Seen:
    """args: the unit that must finish first, then the units that must start after it."""
    first, units = e.args[0], e.args[1:]
    t = host.show(first)
    if t is None:
        return absent("systemd cannot be asked here (no systemd running)")
    if t.get("LoadState") == "not-found":
        return absent(f"{first} is not installed")
    if t.get("ActiveState") == "failed":
        return Seen(f"{first} failed ({t.get('Result') or 'no result'})", False)
    done = _stamp(t, "ActiveEnterTimestampMonotonic")
    if not done:
        return absent(f"{first} has not finished since this boot began (the next boot runs it)")
    started: list[str] = []
    early: list[tuple[str, int, bool]] = []
    for unit in units:
        p = host.show(unit)
        if p is None or p.get("LoadState") == "not-found":
            continue
        at = _stamp(p, "InactiveExitTimestampMonotonic")
        if not at:
            continue
        started.append(unit)
        if at < done:
            early.append((unit, at, first in p.get("After", "").split()))
    if not started:
        return absent(f"none of {', '.join(units)} has started this boot")
    if not early:
        return Seen(e.expected, True, f"started after it: {', '.join(started)}")
    unordered = [(u, at) for u, at, ordered in early if not ordered]
    if unordered:
        unit, at = unordered[0]
        found = f"{unit} started {(done - at) / 1e6:.1f} s before {first} finished"
        return Seen(found, False, f"{unit} is not ordered after {first}")
    names = ", ".join(u for u, _, _ in early)
    return absent(
        f"{first} last finished after {names} started: it ran again since (hostc-apply, a "
        f"NIC event) or was first applied live; {names} is After= it, so every boot orders them"
    )


OBSERVERS: dict[Look, Callable[[HostReader, Expect], Seen]] = {
    Look.STARTED_BEFORE: started_before,
}
