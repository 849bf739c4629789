"""Booted-VM test: `cpu.offline` on Debian 12's kernel 6.1 (issue 52).

The lifecycle VM's boot 3 (v2 in effect; tests/vm/steps/cpu-offline.sh, results under
cpu-offline/): the hostc-tuning of tests/vm/v2-offline.toml (v2 with core 6-7 offline)
run by hand, twice.  Proves: the kernel takes the core offline through the script's
`cpuN/online` writes; a second run sets and refuses nothing (the offline CPUs' files
read 0, their cpufreq policies, where the guest has any, are skipped); `hostc audit`
reads each CPU back (differs before, applied after) and the online CPUs without them;
the RCU offload kthreads run on housekeeping CPUs (nohz_full hands kthreads the
housekeeping CPUs) and the audit's two RCU rows hold.  The frequency floor has no VM
check: a TCG guest has no cpufreq driver.

`-m "not vm"` leaves it out; without root, QEMU, vm-boot or its image it skips
(locally) or fails (CI=true).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_vm import _read, lifecycle_vm, vm_lane

from hostc.cpuset import CpuSet

pytestmark = pytest.mark.vm
__all__ = ["lifecycle_vm", "vm_lane"]  # the fixtures, used by name

#: v2-offline.toml's housekeeping CPUs (one core per node) and isolated CPUs
HOUSEKEEPING = CpuSet.parse("0-1,4-5")


def _findings(results: Path, name: str) -> dict[str, dict[str, Any]]:
    return {f["setting"]: f for f in json.loads(_read(results, name))["findings"]}


def test_vm_cpu_offline_taken_offline_idempotently_and_audited(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    out = results / "cpu-offline"
    assert _read(out, "online-before").strip() == "0-7"
    before = _findings(out, "audit-before.json")
    assert before["cpu6 online"]["status"] == "differs"
    assert _read(out, "tuning1.rc").strip() == "0", _read(out, "tuning1.log")
    log1 = _read(out, "tuning1.log")
    assert "set /sys/devices/system/cpu/cpu6/online = 0" in log1
    assert "set /sys/devices/system/cpu/cpu7/online = 0" in log1
    assert _read(out, "tuning2.rc").strip() == "0", _read(out, "tuning2.log")
    log2 = _read(out, "tuning2.log")
    assert "hostc-tuning: set" not in log2 and "hostc-tuning: refused" not in log2, log2
    assert _read(out, "online-after").strip() == "0-5"
    assert CpuSet.parse("6-7") <= CpuSet.parse(_read(out, "offline-after").strip())
    assert _read(out, "cpu6-online").strip() == _read(out, "cpu7-online").strip() == "0"
    after = _findings(out, "audit-after.json")
    for setting in ("cpu6 online", "cpu7 online", "online CPUs"):
        assert after[setting]["status"] == "applied", after[setting]
    assert _read(out, "online-restored").strip() == "0-7"


def test_vm_rcu_offload_kthreads_run_on_housekeeping_cpus(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    out = results / "cpu-offline"
    rows = [line.split(" ", 1) for line in _read(out, "rcuo-kthreads").splitlines() if line]
    assert any(comm.startswith(("rcuop/2", "rcuos/2")) for comm, _ in rows), rows
    for comm, cpus in rows:
        assert CpuSet.parse(cpus) <= HOUSEKEEPING, (comm, cpus)
    after = _findings(out, "audit-after.json")
    assert after["RCU callbacks offloaded"]["status"] == "applied"
    assert after["RCU offload kthreads' CPUs"]["status"] == "applied"
