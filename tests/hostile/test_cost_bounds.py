"""What is allowed stays cheap: checks linear in the workloads, one warning per
cause and node, importers refusing early what no snapshot could hold.  Bounds are
generous (a shared CI core); the old behaviour missed them by orders of magnitude."""

from __future__ import annotations

import time
from typing import Any

import pytest

from hostc import api
from hostc.diagnostics import HostcError
from hostc.topology.model import Topology

from topogen import H100_KW, machine

TOPO: Topology = machine(**H100_KW)  # type: ignore[arg-type]


def many(n: int, share: bool) -> dict[str, Any]:
    return {
        "version": 1,
        "host": {"name": "t", "role": "inference", "kernel": "6.8"},
        # nohz_full is opt-in; named here, every workload's isolated CPUs are tickless
        "cpu": {
            "isolate": "workload",
            "mechanisms": ["isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"],
        },
        "workload": [
            {"name": f"w{i}", "gpus": [f"GPU{i % 4}"], "share_cpus": share} for i in range(n)
        ],
    }


@pytest.mark.parametrize("share", [True, False])
def test_two_thousand_workloads_compile_fast_with_one_warning_per_node(share: bool) -> None:
    start = time.perf_counter()
    plan, warnings = api.compile_plan(api.spec_from_data(many(2000, share)), TOPO)
    arts = api.emit(plan, ["systemd"])
    took = time.perf_counter() - start
    assert took < 30, f"{took:.1f}s for 2000 workloads"
    assert len(arts) > 2000
    shared = [w for w in warnings if "share isolated CPUs" in w.message]
    assert 1 <= len(shared) <= len(TOPO.nodes), [w.message for w in shared]


def test_a_duplicate_workload_name_is_found_in_one_pass() -> None:
    data = many(3000, True)
    data["workload"].append({"name": "w7", "gpus": ["GPU0"]})
    start = time.perf_counter()
    with pytest.raises(HostcError) as e:
        api.compile_plan(api.spec_from_data(data), TOPO)
    assert time.perf_counter() - start < 30
    assert "defined twice (also workload[7])" in str(e.value)


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("lscpu", "# CPU,Core,Socket,Node\n" + "0,0,0,0\n" * 1_500_000),
        ("numactl", "available: 1 nodes (0)\n" + "node 0 size: 100 MB\n" * 400_000),
        ("nvidia-smi", "\tGPU0\n" + "GPU0\tX\n" * 2_000_000),
    ],
)
def test_an_import_no_snapshot_could_hold_is_refused_at_once(kind: str, text: str) -> None:
    start = time.perf_counter()
    with pytest.raises(HostcError, match="too many"):
        api.import_source(kind, text, file=f"{kind}.txt")
    assert time.perf_counter() - start < 5
