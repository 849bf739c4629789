"""The API's types (issue 17): paths as str or os.PathLike, a list where a list belongs,
HostcError (never AttributeError or TypeError) for anything else, and specs from text or
data through the loader's one converter."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from hostc import api
from hostc.diagnostics import HostcError
from hostc.spec.load import from_data, load, to_data
from hostc.spec.model import Host, HostSpec, Kernel, Thp
from hostc.topology.model import Topology

from topogen import H100_KW, machine

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "h100-kubeadm" / "node.toml"
TOPO: Topology = machine(**H100_KW)  # type: ignore[arg-type]


class PathLike(os.PathLike[str]):
    def __init__(self, p: Path) -> None:
        self.p = p

    def __fspath__(self) -> str:
        return str(self.p)


def host() -> Host:
    return Host(name="x", role="inference", kernel="6.8")  # type: ignore[arg-type]


@pytest.mark.parametrize("as_", [str, PathLike, Path])
def test_every_path_argument_takes_str_and_pathlike(as_: Callable[[Path], object]) -> None:
    plan, _ = api.compile_file(as_(EXAMPLE))  # type: ignore[arg-type]
    spec, _ = api.load_spec(as_(EXAMPLE))  # type: ignore[arg-type]
    topo = api.read_topology(as_(api.topology_path(spec, as_(EXAMPLE))))  # type: ignore[arg-type]
    assert isinstance(topo, Topology) and plan.host.name


def test_a_spec_built_from_python_strings_compiles() -> None:
    spec = HostSpec(host=host(), kernel=Kernel(transparent_hugepage="always"))  # type: ignore[arg-type]
    plan, _ = api.compile_plan(spec, TOPO)
    assert plan.thp is not None and plan.thp.value == Thp.ALWAYS


@pytest.mark.parametrize(
    "call",
    [
        lambda: api.compile_plan("node.toml", TOPO),  # type: ignore[arg-type]
        lambda: api.compile_plan(HostSpec(host=host()), "topology.toml"),  # type: ignore[arg-type]
        lambda: api.compile_plan(
            HostSpec(host=host(), kernel=Kernel(transparent_hugepage="bogus")),  # type: ignore[arg-type]
            TOPO,
        ),
        lambda: api.compile_plan(HostSpec(host=host(), workload=5), TOPO),  # type: ignore[arg-type]
        lambda: api.compile_plan(HostSpec(host=host(), sysctl={"vm.swappiness": 1.5}), TOPO),  # type: ignore[dict-item]
        lambda: api.emit(api.compile_plan(HostSpec(host=host()), TOPO)[0], "sysctl"),
        lambda: api.emit(api.compile_plan(HostSpec(host=host()), TOPO)[0], [1]),  # type: ignore[list-item]
        lambda: api.emit("plan", ["all"]),  # type: ignore[arg-type]
        lambda: api.load_spec(3),  # type: ignore[arg-type]
        lambda: api.compile_file(b"node.toml"),  # type: ignore[arg-type]
        lambda: api.loads_spec(b"[host]"),  # type: ignore[arg-type]
        lambda: api.spec_from_data([1]),  # type: ignore[arg-type]
        lambda: api.write([], 5),  # type: ignore[arg-type]
        lambda: api.read_topology(None),  # type: ignore[arg-type]
        lambda: api.probe(3),  # type: ignore[arg-type]
        lambda: api.import_source("lscpu", b"x", file="x"),  # type: ignore[arg-type]
    ],
)
def test_a_wrong_type_is_a_hostc_error(call: Callable[[], object]) -> None:
    with pytest.raises(HostcError):
        call()


def test_api_diagnostics_do_not_speak_of_cli_flags() -> None:
    plan, _ = api.compile_plan(HostSpec(host=host()), TOPO)
    with pytest.raises(HostcError) as e:
        api.emit(plan, ["nope"])
    assert "--" not in str(e.value)
    with pytest.raises(HostcError) as e:
        api.topology_path(HostSpec(host=host()), "node.toml")
    assert "--topology" not in str(e.value)


def test_loads_spec_and_spec_from_data_agree_with_the_loader() -> None:
    text = EXAMPLE.read_text()
    spec, _ = load(EXAMPLE)
    assert api.loads_spec(text, path=EXAMPLE) == spec
    import tomllib

    assert api.spec_from_data(tomllib.loads(text)) == spec


@pytest.mark.parametrize("example", sorted((ROOT / "examples").glob("*/node.toml")))
def test_a_spec_round_trips_through_its_data(example: Path) -> None:
    spec, _ = load(example)
    assert from_data(to_data(spec)) == spec


def _plan_and_arts() -> tuple[api.Plan, list[api.Artifact]]:
    plan, _ = api.compile_plan(HostSpec(host=host()), TOPO)
    return plan, api.emit(plan, ["sysctl"])


@pytest.mark.parametrize(
    "call",
    [
        lambda p, a: api.apply_steps("x", a),  # type: ignore[arg-type]
        lambda p, a: api.apply_steps(p, "x"),  # type: ignore[arg-type]
        lambda p, a: api.apply_manifest(p, [1]),  # type: ignore[list-item]
        lambda p, a: api.needs_reboot("x"),  # type: ignore[arg-type]
        lambda p, a: api.diff("x", "/tmp"),  # type: ignore[arg-type]
        lambda p, a: api.manifest(a[0], None),  # type: ignore[arg-type]
        lambda p, a: api.write(a, "/nonexistent-dir/out", "/tmp/x"),  # type: ignore[arg-type]
        lambda p, a: api.dumps_snapshot("x"),  # type: ignore[arg-type]
        lambda p, a: api.import_source("lscpu", "x", file="f", arch=5),  # type: ignore[arg-type]
        lambda p, a: api.probe("/", nvidia_smi_topo=5),  # type: ignore[arg-type]
        lambda p, a: api.target_warnings(None, ["all"]),  # type: ignore[arg-type]
    ],
)
def test_every_api_function_refuses_a_wrong_type_with_a_hostc_error(
    call: Callable[[api.Plan, list[api.Artifact]], object],
) -> None:
    plan, arts = _plan_and_arts()
    with pytest.raises(HostcError):
        call(plan, arts)
