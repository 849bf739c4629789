"""A Topology cannot change, as a loaded spec cannot (issue 55 §5).

`topo.cpus.append(42)` on a snapshot read through `hostc.api` used to succeed, and the
next `compile_plan` failed with a bare AttributeError deep inside lowering (exit 3), or,
on the snapshot `api.compile_file` caches and shares, every later build of the fleet
saw the change.  Now the mutation itself fails, in the caller's code, and the Topology
`compile_plan` is given is the one that was read."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from hostc import api
from hostc.topology.model import LogicalCpu, NumaNode, OsRelease, Topology

from conftest import ROOT
from immutable import mutable_inside

SNAPSHOTS = sorted((ROOT / "examples").rglob("topology.toml"))
DGX = ROOT / "examples" / "dgx-h100-inference"
NUMACTL = (
    "available: 2 nodes (0-1)\nnode 0 cpus: 0 1\nnode 0 size: 200 MB\nnode 1 cpus: 2 3\n"
    "node 1 size: 100 MB\nnode distances:\nnode   0   1\n  0:  10  20\n  1:  20  10\n"
)


@pytest.mark.parametrize("path", SNAPSHOTS, ids=lambda p: p.parent.name)
def test_a_snapshot_read_through_the_api_is_deeply_immutable(path: Path) -> None:
    topo = api.read_snapshot(path)
    assert list(mutable_inside(topo, "topology")) == []
    assert hash(topo) == hash(api.read_snapshot(path))  # hashable all through


def test_an_imported_topology_is_deeply_immutable() -> None:
    topo = api.import_source("numactl", NUMACTL, file="numa.txt", arch="x86_64")
    assert list(mutable_inside(topo, "topology")) == []
    assert topo.nodes[1].distances == (20, 10)


def test_a_topology_cannot_be_changed_by_its_caller() -> None:
    """The review's crash: `topo.cpus.append(42)`, then `compile_plan`.  Each kind of
    change fails where it is written, and the plan is the one of the snapshot as read."""
    spec, _ = api.load_spec(DGX / "node.toml")
    topo = api.read_snapshot(DGX / "topology.toml")
    before, _ = api.compile_plan(spec, topo)
    with pytest.raises(AttributeError):
        topo.cpus.append(42)  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        topo.nodes[0].distances.append(99)  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        topo.kernel_config["CONFIG_NO_HZ_FULL"] = "n"  # type: ignore[index]
    with pytest.raises(TypeError):
        topo.nodes[0].hugepages["1G"] = 4  # type: ignore[index]
    with pytest.raises(TypeError):
        topo.close_peers["GPU0"] = frozenset()  # type: ignore[index]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        topo.cpus = ()  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        topo.cpus[0].online = False  # type: ignore[misc]
    assert topo == api.read_snapshot(DGX / "topology.toml")
    assert api.compile_plan(spec, topo)[0] == before


def test_a_topology_built_in_python_is_frozen_too() -> None:
    """Lists and dicts given to the constructor or to `attrs.evolve` (what tests and API
    callers build) are copied into tuples and FrozenMaps: changing the builder's list
    afterwards changes nothing."""
    cpus = [LogicalCpu(0, core=0, node=0), LogicalCpu(1, core=1, node=0)]
    config = {"CONFIG_NO_HZ_FULL": "y"}
    topo = Topology(
        arch="x86_64",
        cpus=cpus,  # type: ignore[arg-type]
        nodes=[NumaNode(0, 1024, [10], {"2M": 0})],  # type: ignore[arg-type, list-item]
        kernel_config=config,
        unknown=["smt"],  # type: ignore[arg-type]
        os=OsRelease("ubuntu", "22.04", ["debian"]),  # type: ignore[arg-type]
    )
    cpus.append(LogicalCpu(2, node=0))
    config["CONFIG_NO_HZ_FULL"] = "n"
    assert list(mutable_inside(topo, "topology")) == []
    assert len(topo.cpus) == 2 and topo.kernel_config == {"CONFIG_NO_HZ_FULL": "y"}
    evolved = attrs.evolve(topo, notes=["a note"], cpus=cpus)  # type: ignore[arg-type]
    assert list(mutable_inside(evolved, "topology")) == []
    assert evolved.notes == ("a note",) and len(evolved.cpus) == 3
