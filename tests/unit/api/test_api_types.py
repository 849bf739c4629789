"""The API's types: paths as str or os.PathLike, a list where a list belongs,
HostcError (never AttributeError or TypeError) for anything else, and specs from text or
data through the loader's one converter."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.diagnostics import HostcError
from hostc.spec.load import from_data, load, to_data
from hostc.spec.model import Cpu, Host, HostSpec, Hugepages, Kernel, Kubelet, ThpMode
from hostc.topology.model import Topology

from conftest import ROOT
from topogen import H100_KW, machine

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
    assert plan.thp is not None and plan.thp.value == ThpMode.ALWAYS


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


_WORDS = st.sampled_from(
    [
        "inference",
        "training",
        "general",
        "always",
        "madvise",
        "never",
        "workload",
        "rest",
        "none",
        "0-3",
        "2M",
        "1G",
        "1Gi",
        "512Mi",
        "1.31",
        "static",
        "single-numa-node",
        "pod",
        "Static",
        " rest ",
        "",
        "-1",
        "0-",
        "$x",
        "a\x00",
    ]
)
_TEXT = st.one_of(_WORDS, st.text(max_size=6))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    role=_TEXT,
    thp=st.one_of(st.none(), _TEXT, st.sampled_from(list(ThpMode))),
    isolate=st.one_of(st.none(), _TEXT),
    size=st.one_of(st.none(), _TEXT),
    mechanisms=st.one_of(st.none(), st.lists(_TEXT, max_size=2)),
    kubelet=st.one_of(st.none(), st.tuples(_TEXT, _TEXT, _TEXT, _TEXT)),
)
def test_a_spec_built_from_any_strings_compiles_or_is_a_hostc_error(
    role: str,
    thp: str | ThpMode | None,
    isolate: str | None,
    size: str | None,
    mechanisms: list[str] | None,
    kubelet: tuple[str, str, str, str] | None,
) -> None:
    """Strings where enums, cpulists, sizes, versions and quantities belong: the spec
    compiles as the loader would type it, or the caller gets a HostcError (exit 2), never
    an AttributeError from deep inside `lower`."""
    spec = HostSpec(
        host=Host(name="t", role=role, kernel="6.8"),  # type: ignore[arg-type]
        kernel=Kernel(transparent_hugepage=thp),  # type: ignore[arg-type]
        cpu=Cpu(isolate=isolate, mechanisms=mechanisms),  # type: ignore[arg-type]
        hugepages=None if size is None else Hugepages(size=size, total=2),  # type: ignore[arg-type]
        kubelet=None
        if kubelet is None
        else Kubelet(
            flavor=kubelet[3],  # type: ignore[arg-type]
            version=kubelet[0],  # type: ignore[arg-type]
            cpu_manager_policy=kubelet[1],  # type: ignore[arg-type]
            reserved_memory={0: kubelet[2]},  # type: ignore[dict-item]
        ),
    )
    try:
        plan, _ = api.compile_plan(spec, TOPO)
    except HostcError as e:
        assert e.diagnostics
        return
    assert plan.host.role == role.strip() or plan.host.role == role


def test_a_spec_from_a_string_is_not_reported_as_node_toml() -> None:
    """first-day-4 E1: `loads_spec(text)` without a name names no file it did not read."""
    with pytest.raises(api.HostcError) as e:
        api.loads_spec("version = 1\n[host\nname='x'")
    assert str(e.value).startswith("error: <string>:2: "), str(e.value)
    with pytest.raises(api.HostcError) as e:
        api.loads_spec("version = 1\n[host\nname='x'", "mine.toml")
    assert str(e.value).startswith("error: mine.toml:2: "), str(e.value)
