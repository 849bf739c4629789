"""K5: on an NVSwitch host a GPU workload must not start before Fabric Manager has trained
the fabric (CUDA fails with cudaErrorSystemNotReady), nor before persistenced; on other
hosts nothing changes.  The switch is read from the link matrix: a GPU's NV# links to its
peers add up past what one GPU has."""

from __future__ import annotations

import itertools

import attrs
import pytest

from hostc import api
from hostc.knowledge.gpu import MAX_NVLINKS_PER_GPU, nvswitch
from hostc.spec import model as m
from hostc.topology.model import Link, Topology

from conftest import ROOT
from topogen import machine

FM = "nvidia-fabricmanager.service"
PERSISTENCED = "nvidia-persistenced.service"
DROPIN = "/etc/systemd/system/serve.service.d/90-hostc.conf"


def _host(kind: str | None, pairs: str = "all") -> Topology:
    topo = machine(packages=2, cores_per_node=8, gpus_per_node=2, cpu_vendor="intel")
    names = [g.name for g in topo.gpus]
    if kind is None:
        return topo
    links = [Link(a, b, kind) for a, b in itertools.combinations(names, 2)]
    if pairs == "one":  # an NVLink bridge between two PCIe cards
        links = links[:1]
    return attrs.evolve(topo, links=links)


def _dropin(topo: Topology) -> str:
    spec = m.HostSpec(
        host=m.Host(name="t", role=m.Role.INFERENCE),
        workload=[m.Workload("serve", ["GPU0", "GPU1"])],
    )
    plan = api.compile_plan(spec, topo)[0]
    return next(a.text for a in api.emit(plan, ["systemd"]) if a.path == DROPIN)


def _after(text: str) -> list[str]:
    return [u for line in text.splitlines() if line.startswith("After=") for u in line[6:].split()]


def test_nvswitch_host_orders_workloads_after_fabric_manager_and_persistenced() -> None:
    text = _dropin(_host("NV18"))  # 4 GPUs all at NV18: 3 x 18 links > 18
    assert FM in _after(text) and PERSISTENCED in _after(text)
    assert "cudaErrorSystemNotReady" in text
    # ordered only: a host without Fabric Manager is not held or failed by it
    assert f"Wants={FM}" not in text and "Requires=" not in text


@pytest.mark.parametrize(
    ("kind", "pairs"),
    [
        (None, "all"),  # no link matrix
        ("NV6", "all"),  # HGX 4-GPU board: direct NVLinks, 3 x 6 = 18 links
        ("NV12", "one"),  # H100 NVL pair over an NVLink bridge
        ("PIX", "all"),  # PCIe only
    ],
)
def test_hosts_without_nvswitch_keep_workloads_free_of_gpu_daemon_ordering(
    kind: str | None, pairs: str
) -> None:
    after = _after(_dropin(_host(kind, pairs)))
    assert FM not in after and PERSISTENCED not in after


def test_nvswitch_rule_is_links_past_one_gpu() -> None:
    assert nvswitch({"GPU0": {"GPU1": 18, "GPU2": 18}})
    assert not nvswitch({"GPU0": {"GPU1": 6, "GPU2": 6, "GPU3": 6}})
    assert not nvswitch({"GPU0": {"GPU1": MAX_NVLINKS_PER_GPU + 1}})  # one peer: a bridge


def test_dgx_examples_wait_for_fabric_manager() -> None:
    golden = ROOT / "golden" / "dgx-h100-inference" / "systemd" / "etc" / "systemd" / "system"
    text = (golden / "serve-a.service.d" / "90-hostc.conf").read_text()
    assert FM in _after(text) and PERSISTENCED in _after(text)
