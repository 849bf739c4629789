"""`hostc audit`'s new rows (issue 52): the runtime settings in place before the pods
started (hostc-tuning.service, or the wait for TuneD's profile), and the kubelet's
reserved CPUs as the kubelet shows them (its Node object, else its CPU checkpoint).

Each on a host tree where the Plan took effect (tests/helpers/audit_host.py) with one
thing changed; systemd's answers are the `systemctl show` files a capture stores.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from audit_host import perfect_host, put, show
from tuned_variant import variant

from hostc import api
from hostc.audit.findings import Finding, Status
from hostc.audit.reserved import NODE_CPU, millicores
from hostc.cpuset import CpuSet
from hostc.knowledge.kubelet import CPU_STATE
from hostc.plan.model import Plan

from conftest import ROOT

KUBEADM = ROOT / "examples" / "h100-kubeadm" / "node.toml"  # strict-cpu-reservation (1.33)
RKE2 = ROOT / "examples" / "dgx-h100-rke2" / "node.toml"  # without it
ORDER = {"hostc-tuning.service": "runtime tuning before pods"}
ORDER["hostc-tuned-ready.service"] = "TuneD profile before pods"


def finding(plan: Plan, root: Path, setting: str) -> Finding:
    return {f.setting: f for f in api.audit(plan, root)}[setting]


@pytest.fixture(params=["systemd", "tuned"])
def owner(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Plan, Path, str]:
    """A kubelet node with hostc's tuning, or with TuneD's (the same example)."""
    if request.param == "systemd":
        plan = api.compile_file(KUBEADM)[0]
        first = "hostc-tuning.service"
    else:
        plan = api.compile_file(variant(tmp_path / "spec", "h100-kubeadm"))[0]
        first = "hostc-tuned-ready.service"
    return plan, perfect_host(plan, tmp_path / "root"), first


def test_the_tuning_finished_before_the_kubelet_started(owner: tuple[Plan, Path, str]) -> None:
    plan, root, first = owner
    f = finding(plan, root, ORDER[first])
    assert (f.status, f.expected) == (Status.APPLIED, f"{first} finished first")
    assert "kubelet.service" in f.note


def test_a_kubelet_that_started_first_and_is_not_ordered_after_it_differs(
    owner: tuple[Plan, Path, str],
) -> None:
    plan, root, first = owner
    show(root, "kubelet.service", {"InactiveExitTimestampMonotonic": "3500000", "After": ""})
    f = finding(plan, root, ORDER[first])
    assert f.status is Status.DIFFERS
    assert f.found == f"kubelet.service started 1.5 s before {first} finished"
    assert f.note == f"kubelet.service is not ordered after {first}"


def test_a_later_run_of_the_tuning_unit_is_no_drift_where_systemd_orders_them(
    owner: tuple[Plan, Path, str],
) -> None:
    """hostc-apply or a NIC event re-runs hostc-tuning after the kubelet started: its
    stamp moves past the kubelet's, but the kubelet is After= it, so every boot orders
    them; not observable, never drift."""
    plan, root, first = owner
    show(root, first, {"ActiveEnterTimestampMonotonic": "90000000"})
    f = finding(plan, root, ORDER[first])
    assert f.status is Status.NOT_OBSERVABLE
    assert "ran again since" in f.note and "every boot orders them" in f.note


def test_a_failed_tuning_unit_differs_and_one_not_run_yet_is_not_observable(
    owner: tuple[Plan, Path, str],
) -> None:
    plan, root, first = owner
    show(root, first, {"ActiveState": "failed", "Result": "exit-code"})
    f = finding(plan, root, ORDER[first])
    assert (f.status, f.found) == (Status.DIFFERS, f"{first} failed (exit-code)")
    show(root, first, {"ActiveState": "inactive", "ActiveEnterTimestampMonotonic": "0"})
    f = finding(plan, root, ORDER[first])
    assert f.status is Status.NOT_OBSERVABLE and "next boot" in f.note


def test_the_strict_checkpoint_names_the_kubelet_reserved_set(tmp_path: Path) -> None:
    """With strict-cpu-reservation the reserved CPUs are the online ones in neither the
    shared pool nor an exclusive set (the kubelet's own validateState rule)."""
    plan = api.compile_file(KUBEADM)[0]
    assert plan.kubelet is not None
    res = plan.kubelet.cpu.reserved
    root = perfect_host(plan, tmp_path)
    f = finding(plan, root, "kubelet reserved CPUs")
    assert (f.status, f.found) == (Status.APPLIED, f"{len(res)} CPUs ({res})")
    # a kubelet started with a smaller reservation: its shared pool holds a reserved CPU
    doc = json.loads((root / CPU_STATE.lstrip("/")).read_text())
    shared = f"{doc['defaultCpuSet']},{res.min()}"
    put(root, CPU_STATE, json.dumps({**doc, "defaultCpuSet": shared}))
    f = finding(plan, root, "kubelet reserved CPUs")
    assert (
        f.status is Status.DIFFERS
        and f.found == f"{len(res) - 1} CPUs ({res - CpuSet([res.min()])})"
    )


def test_without_strict_reservation_a_reserved_cpu_given_exclusively_differs(
    tmp_path: Path,
) -> None:
    plan = api.compile_file(RKE2)[0]
    assert plan.kubelet is not None
    res = plan.kubelet.cpu.reserved
    root = perfect_host(plan, tmp_path)
    f = finding(plan, root, "kubelet reserved CPUs")
    assert f.status is Status.APPLIED and "shared pool" in f.found
    doc = json.loads((root / CPU_STATE.lstrip("/")).read_text())
    doc["entries"] = {"pod1": {"c": str(res.min())}}
    put(root, CPU_STATE, json.dumps(doc))
    assert finding(plan, root, "kubelet reserved CPUs").status is Status.DIFFERS


def test_the_node_object_is_the_kubelet_s_own_count_where_it_was_asked(tmp_path: Path) -> None:
    """capacity − allocatable CPU (NTO e2e 28528), from a capture's stored answer: it wins
    over the checkpoint, and a kubelet that reserves another count differs."""
    plan = api.compile_file(RKE2)[0]
    assert plan.kubelet is not None
    n = len(plan.kubelet.cpu.reserved)
    root = perfect_host(plan, tmp_path)
    put(root, NODE_CPU, f"224 {224 - n}\n")
    f = finding(plan, root, "kubelet reserved CPUs")
    assert (f.status, f.found) == (Status.APPLIED, f"{n} CPUs")
    assert "the Node object" in f.note
    put(root, NODE_CPU, "224 222500m\n")
    f = finding(plan, root, "kubelet reserved CPUs")
    assert (f.status, f.found) == (Status.DIFFERS, "1.5 CPUs")


def test_cpu_quantities_as_the_api_server_prints_them() -> None:
    assert [millicores(x) for x in ("64", "61500m", "1.5", "x", "")] == [
        64000,
        61500,
        1500,
        None,
        None,
    ]
