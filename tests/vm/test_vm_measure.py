"""Booted-VM test: `hostc measure` (issue 53) on the lifecycle VM's untuned first boot and
its tuned second boot (tests/vm/steps/measure-untuned.sh, measure-tuned.sh; results under
measure/).

The VM is emulated (TCG): its timings mean nothing, so only counts and the verdicts drawn
from them are asserted, and only those the effect prototype saw hold in every window
(../shared/reference/effect-prototype.md: background tasks switched onto a tuned
isolated CPU exactly 0 against hundreds untuned; a planted IRQ seen 22-120 times, named
by its line; ticks on nohz_full CPUs a small fraction of a loaded CPU's).  Each of them
must hold in all three repeats:

- untuned (v1's spec, nothing of it booted), under a background load: every window breaks
  the Plan's promises (exit 1), among them nohz_full (ticks on the isolated CPUs) and the
  services' placement (the load's shells switched in there: one started on the isolated
  CPUs, which nothing untuned keeps a service off, one left to the scheduler);
- tuned, with the serial console's IRQ moved onto isolated CPU 6 and a shell pinned to
  isolated CPU 7: the IRQ is found by its line (ttyS0) under the IRQ owner and the shell by
  its name under the services' placement, and nothing else breaks a promise;
- tuned, clean, under the same load: every count on an isolated CPU is attributed (a
  Plan setting or a named kernel mechanism) and none breaks a promise (exit 0).

`-m "not vm"` leaves it out; without root, QEMU, vm-boot or its image it skips (locally)
or fails (CI=true).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_vm import _read, lifecycle_vm, vm_lane

pytestmark = pytest.mark.vm
__all__ = ["lifecycle_vm", "vm_lane"]  # the fixtures, used by name

REPEATS = (1, 2, 3)
ISOLATED = {2, 3, 6, 7}
#: what a row on an isolated CPU may be judged, each with the kind of cause it carries
SETTING_VERDICTS = {"excess", "own", "left-out"}
MECHANISM_VERDICTS = {"kernel", "allowed"}


def _doc(results: Path, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_read(results / "measure", name))
    assert doc["schema"] == "hostc-measure/1"
    return doc


def _rows(doc: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(c["cpu"], r) for c in doc["cpus"] if c["cpu"] in ISOLATED for r in c["rows"]]


def _excess(doc: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(cpu, r) for cpu, r in _rows(doc) if r["verdict"] == "excess"]


def _attributed(doc: dict[str, Any]) -> list[str]:
    """Rows on an isolated CPU without exactly one cause of the right kind (none expected)."""
    bad = []
    for cpu, r in _rows(doc):
        c = r["cause"]
        kind = "setting" if r["verdict"] in SETTING_VERDICTS else "mechanism"
        if r["verdict"] not in SETTING_VERDICTS | MECHANISM_VERDICTS or c["kind"] != kind:
            bad.append(f"CPU {cpu} {r['source']} {r['key']}: {r['verdict']} by {c['kind']}")
        elif not (c["id"] and c["why"]) or (kind == "setting" and not c["source"]):
            bad.append(f"CPU {cpu} {r['source']} {r['key']}: no named cause")
    return bad


def test_vm_measure_untuned_boot_breaks_the_plans_promises(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    for n in REPEATS:
        err = _read(results / "measure", f"untuned-{n}.err")
        assert _read(results / "measure", f"untuned-{n}.rc").strip() == "1", err
        doc = _doc(results, f"untuned-{n}.json")
        assert _attributed(doc) == []
        ids = {r["cause"]["id"] for _, r in _excess(doc)}
        assert {"nohz_full", "service-cpus"} <= ids, (n, sorted(ids))


def test_vm_measure_tuned_boot_finds_the_planted_irq_and_task_each_time(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    for n in REPEATS:
        plant = _read(results / "measure", f"plant-{n}.txt")
        err = _read(results / "measure", f"plant-{n}.err")
        assert " now 6 " in plant and "Cpus_allowed_list:\t7" in plant, plant
        assert _read(results / "measure", f"plant-{n}.rc").strip() == "1", err + plant
        doc = _doc(results, f"plant-{n}.json")
        assert _attributed(doc) == []
        excess = _excess(doc)
        irqs = [r for cpu, r in excess if cpu == 6 and r["source"] == "irq"]
        assert [(r["name"], r["cause"]["id"], r["cause"]["source"]) for r in irqs] == [
            ("ttyS0", "irq-owner", "irq.owner")
        ], (n, plant)
        assert irqs[0]["count"] >= 1
        shells = [
            r for cpu, r in excess if cpu == 7 and r["source"] == "task" and r["name"] == "sh"
        ]
        assert shells and {r["cause"]["id"] for r in shells} == {"service-cpus"}, (n, excess)
        # nothing else breaks a promise: the secondary noise is the plants' own setting
        assert {r["cause"]["id"] for _, r in excess} == {"irq-owner", "service-cpus"}, excess
        assert {cpu for cpu, _ in excess} <= {6, 7}
        assert "restored 0-1,4-5" in plant


def test_vm_measure_tuned_boot_keeps_every_promise_under_load(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    for n in REPEATS:
        err = _read(results / "measure", f"clean-{n}.err")
        doc = _doc(results, f"clean-{n}.json")
        assert _attributed(doc) == []
        assert _excess(doc) == [], (n, _excess(doc))
        assert _read(results / "measure", f"clean-{n}.rc").strip() == "0", err
        # the load ran from the step's service: none of its shells on an isolated CPU
        assert not [
            r for _, r in _rows(doc) if r["source"] == "task" and r["cause"]["id"] == "service-cpus"
        ]
    record = json.loads(_read(results / "measure", "record.json"))
    assert record["schema"] == "hostc-measure/1" and record["taken"].endswith("Z")
