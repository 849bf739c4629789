"""The audit rows of issue 52, against fake host trees (tests/helpers/audit_host.py): RCU's
offload kthreads (each offloaded CPU has one; they run on housekeeping CPUs only, NTO's
e2e 34358), the CPUs `cpu.offline` takes offline, and the frequency floor.  Each row is
applied on a host where the Plan took effect, and a tampered host shows exactly it."""

from __future__ import annotations

import shutil
from pathlib import Path

from audit_host import perfect_host, put, rcu_kthreads

from hostc import api
from hostc.audit.findings import Finding, Status
from hostc.cpuset import CpuSet
from hostc.plan.model import Plan

from conftest import ROOT

DGX = ROOT / "examples" / "dgx-h100-inference" / "node.toml"  # min_perf_pct, rcu_nocbs
H100 = ROOT / "examples" / "h100-4gpu-inference" / "node.toml"  # cpu.offline 56-63,120-127
OFFLOADED = "RCU callbacks offloaded"
KTHREADS = "RCU offload kthreads' CPUs"


def audit(plan: Plan, root: Path) -> dict[str, Finding]:
    return {f.setting: f for f in api.audit(plan, root)}


def plan_of(spec: Path) -> Plan:
    return api.compile_file(spec)[0]


def test_rcu_rows_hold_where_every_offload_kthread_is_on_housekeeping(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    found = audit(plan, perfect_host(plan, tmp_path))
    assert found[OFFLOADED].status is Status.APPLIED
    assert found[KTHREADS].status is Status.APPLIED
    assert found[KTHREADS].expected == str(plan.partition.housekeeping)


def test_an_offload_kthread_allowed_on_isolated_cpus_is_drift(tmp_path: Path) -> None:
    """What a kernel without nohz_full does when nobody moves them: kthreadd hands the
    rcuo kthreads every CPU."""
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path)
    cpu = plan.partition.isolated.min()
    rcu_kthreads(root, CpuSet([cpu]), plan.partition.online)
    f = audit(plan, root)[KTHREADS]
    assert f.status is Status.DIFFERS
    assert f.found == f"rcuop/{cpu} on {plan.partition.online}"


def test_an_offloaded_cpu_without_its_kthread_is_drift(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path)
    cpu = max(plan.partition.isolated)
    shutil.rmtree(root / f"proc/{3000 + cpu}")
    f = audit(plan, root)[OFFLOADED]
    assert f.status is Status.DIFFERS and f"none for {cpu}" in f.note


def test_no_offload_kthread_at_all_is_not_observable_not_drift(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path)
    for d in (root / "proc").iterdir():
        if d.name.isdigit() and (d / "comm").exists():
            shutil.rmtree(d)
    found = audit(plan, root)
    assert found[OFFLOADED].status is Status.NOT_OBSERVABLE
    assert found[KTHREADS].status is Status.NOT_OBSERVABLE


def test_an_offline_cpu_back_online_is_drift_and_nothing_else(tmp_path: Path) -> None:
    plan = plan_of(H100)
    root = perfect_host(plan, tmp_path)
    before = audit(plan, root)
    rows = [s for s in before if s.endswith(" online") and s.startswith("cpu")]
    assert len(rows) == 16 and all(before[s].status is Status.APPLIED for s in rows)
    put(root, "/sys/devices/system/cpu/cpu57/online", "1\n")
    after = audit(plan, root)
    changed = [s for s in after if after[s].status is not before[s].status]
    assert changed == ["cpu57 online"] and after["cpu57 online"].status is Status.DIFFERS


def test_a_lowered_frequency_floor_is_drift(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path)
    assert audit(plan, root)["min_perf_pct"].status is Status.APPLIED
    put(root, "/sys/devices/system/cpu/intel_pstate/min_perf_pct", "37\n")
    f = audit(plan, root)["min_perf_pct"]
    assert (f.status, f.found) == (Status.DIFFERS, "37")
