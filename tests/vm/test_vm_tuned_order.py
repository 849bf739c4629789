"""Booted-VM test: TuneD's profile applied before a kubelet starts (issue 52, F3).

The lifecycle VM's TuneD scenario (tests/vm/test_vm_tuned.py): at boot 5, after the
TuneD owner's tree (tests/vm/tuned.toml) and its apply.sh, tests/vm/steps/tuned-order.sh
installs a stand-in kubelet.service with no ordering of its own and empties tuned.log;
at boot 6 systemd starts TuneD, hostc-tuned-ready.service and the stand-in, which
records what it finds as it starts.

Proves, on Debian 12's TuneD 2.20 and systemd 252: when the kubelet started, TuneD had
already logged "static tuning from profile 'hostc' applied" this boot, answered on
D-Bus with the hostc profile, and its THP defrag value was in place; the wait unit
finished before the kubelet began to start, after tuned.service became active, with its
own "applied" line in the journal; the kubelet's only order against TuneD is the wait
unit's Before=; and hostc-verify's and `hostc audit`'s new start-order row read it back
as applied.

`-m "not vm"` leaves it out; without the VM's prerequisites it skips (locally) or
fails (CI=true), as tests/vm/test_vm_tuned.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_vm import _read, lifecycle_vm, vm_lane

pytestmark = pytest.mark.vm
__all__ = ["lifecycle_vm", "vm_lane"]  # the fixtures, used by name

ROW = "TuneD profile before pods"


def _show(results: Path, unit: str) -> dict[str, str]:
    text = _read(results, f"show-{unit}")
    return dict(line.partition("=")[::2] for line in text.splitlines() if "=" in line)


def test_vm_tuned_profile_applied_before_a_stand_in_kubelet_starts(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    order = results / "tuned-order"
    assert _read(order, "install.rc").strip() == "0", _read(order, "install.log")
    # what the kubelet found as systemd started it
    assert _read(order, "ready-at-kubelet").strip() == "active"
    assert _read(order, "tuned-at-kubelet").strip() == "active"
    assert _read(order, "profile-at-kubelet").strip() == 's "hostc"'
    assert int(_read(order, "applied-at-kubelet").strip()) >= 1  # this boot's own line
    assert "[defer+madvise]" in _read(order, "defrag-at-kubelet")  # the profile's [vm]
    # systemd's stamps: TuneD active, then the wait done, then the kubelet's start
    tuned, ready = _show(order, "tuned.service"), _show(order, "hostc-tuned-ready.service")
    kubelet = _show(order, "kubelet.service")
    assert ready["ActiveState"] == "active" and ready["Result"] == "success"
    t_tuned = int(tuned["ActiveEnterTimestampMonotonic"])
    t_ready = int(ready["ActiveEnterTimestampMonotonic"])
    t_kubelet = int(kubelet["InactiveExitTimestampMonotonic"])
    assert 0 < t_tuned <= t_ready <= t_kubelet, (t_tuned, t_ready, t_kubelet)
    assert "hostc-tuned-ready.service" in kubelet["After"].split()
    assert "tuned.service" not in kubelet["After"].split()  # only the wait orders it
    assert "TuneD has applied profile hostc" in _read(order, "ready.log")
    assert "static tuning from profile 'hostc' applied" in _read(order, "applied.log")


def test_vm_audit_and_verify_read_the_start_order_back(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    tuned = results / "tuned"
    rows = {f["setting"]: f for f in json.loads(_read(tuned, "audit.json"))["findings"]}
    row = rows[ROW]
    assert row["status"] == "applied", row
    assert "kubelet.service" in row["note"] and "demo.service" in row["note"]
    assert f"ok {ROW} = hostc-tuned-ready.service finished first" in _read(tuned, "verify.log")
