"""Kubernetes nodes: the kubelet's managers from the same Plan.

Independent readers: the KubeletConfiguration is parsed with PyYAML and held
against a field table written from k8s.io/kubelet/config/v1beta1/types.go;
RKE2/k3s flags against the kubelet's documented flag names (`kubelet --help`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.artifact import Action, Activation
from hostc.cpuset import CpuSet
from hostc.delivery.activation import steps
from hostc.diagnostics import HostcError, Severity
from hostc.knowledge.kubelet import CPU_STATE, MEMORY_STATE, KubeVersion, Quantity, QuantityError
from hostc.lower.kubelet import split_memory
from hostc.plan.model import OsFamily, Plan
from hostc.report import kubelet_view
from hostc.spec import model as m
from hostc.targets.kubelet import RESET
from hostc.targets.lifecycle import STAGED
from hostc.topology.model import Topology

from conftest import ROOT
from strategies import cases
from topogen import machine

RKE2 = ROOT / "examples" / "dgx-h100-rke2" / "node.toml"
KUBEADM = ROOT / "examples" / "h100-kubeadm" / "node.toml"


def _quantity(v: Any) -> bool:
    return isinstance(v, str) and Quantity.parse(v) is not None


def _map(value: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: (
        isinstance(v, dict) and all(isinstance(k, str) and value(x) for k, x in v.items())
    )


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _reservation(v: Any) -> bool:
    """[]MemoryReservation{numaNode int32, limits ResourceList (map of quantities)}."""
    return isinstance(v, list) and all(
        isinstance(r, dict)
        and set(r) == {"numaNode", "limits"}
        and isinstance(r["numaNode"], int)
        and not isinstance(r["numaNode"], bool)
        and 0 <= r["numaNode"] < 2**31
        and _map(_quantity)(r["limits"])
        for r in v
    )


#: KubeletConfiguration (kubelet.config.k8s.io/v1beta1) fields hostc emits, with their Go
#: types from k8s.io/kubelet/config/v1beta1/types.go.
V1BETA1: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "apiVersion": ("string", lambda v: v == "kubelet.config.k8s.io/v1beta1"),
    "kind": ("string", lambda v: v == "KubeletConfiguration"),
    "cpuManagerPolicy": ("string", _str),
    "cpuManagerPolicyOptions": ("map[string]string", _map(_str)),
    "reservedSystemCPUs": ("string", _str),
    "topologyManagerPolicy": ("string", _str),
    "topologyManagerScope": ("string", _str),
    "topologyManagerPolicyOptions": ("map[string]string", _map(_str)),
    "memoryManagerPolicy": ("string", _str),
    "reservedMemory": ("[]MemoryReservation", _reservation),
    "kubeReserved": ("map[string]string", _map(_str)),
    "systemReserved": ("map[string]string", _map(_str)),
    "evictionHard": ("map[string]string", _map(_str)),
    "featureGates": ("map[string]bool", _map(lambda v: isinstance(v, bool))),
}

#: Kubelet flags (`kubelet --help`, cmd/kubelet/app/options) that hostc passes via kubelet-arg.
KUBELET_FLAGS = {
    "reserved-cpus",
    "cpu-manager-policy",
    "cpu-manager-policy-options",
    "topology-manager-policy",
    "topology-manager-scope",
    "topology-manager-policy-options",
    "memory-manager-policy",
    "reserved-memory",
    "kube-reserved",
    "system-reserved",
    "eviction-hard",
    "feature-gates",
}


def assert_v1beta1(doc: dict[str, Any]) -> None:
    for key, value in doc.items():
        assert key in V1BETA1, f"{key} is not a KubeletConfiguration field hostc knows"
        go, ok = V1BETA1[key]
        assert ok(value), f"{key}: {value!r} is not a {go}"


def flag_values(text: str) -> dict[str, list[str]]:
    doc = yaml.safe_load(text)
    assert list(doc) == ["kubelet-arg+"]
    out: dict[str, list[str]] = {}
    for item in doc["kubelet-arg+"]:
        assert isinstance(item, str)
        name, sep, value = item.partition("=")
        assert sep and value, item
        assert name in KUBELET_FLAGS, name
        out.setdefault(name, []).append(value)
    return out


def _kv(text: str) -> dict[str, str]:
    return dict(x.split("=", 1) for x in text.split(","))


def reserved_memory_from_flags(values: list[str]) -> dict[int, Quantity]:
    out = {}
    for v in values:
        node, _, limits = v.partition(":")
        out[int(node)] = Quantity.parse(_kv(limits)["memory"])
    return out


def memory_total_from_flags(f: dict[str, list[str]]) -> Quantity:
    total = 0
    for name in ("kube-reserved", "system-reserved"):
        for v in f.get(name, []):
            total += Quantity.parse(_kv(v).get("memory", "0")).bytes
    evict = dict(x.split("<", 1) for x in f["eviction-hard"][0].split(","))
    return Quantity(total + Quantity.parse(evict["memory.available"]).bytes)


# The examples, as the acceptance criteria state them


def test_rke2_example_reserves_the_housekeeping_set_and_adds_up() -> None:
    plan, _ = api.compile_file(RKE2)
    art, reset, *_ = api.emit(plan, ["kubelet"])
    assert (
        art.path == STAGED + "/etc/rancher/rke2/config.yaml.d/90-hostc.yaml"
    )  # hostc-kubelet-reset puts it in place
    f = flag_values(art.text)
    assert CpuSet.parse(f["reserved-cpus"][0]) == plan.partition.housekeeping
    per_node = reserved_memory_from_flags(f["reserved-memory"])
    assert sum(q.bytes for q in per_node.values()) == memory_total_from_flags(f).bytes
    assert memory_total_from_flags(f) == Quantity.parse("2Gi") + Quantity.parse(
        "4Gi"
    ) + Quantity.parse("500Mi")
    assert f["cpu-manager-policy-options"] == ["full-pcpus-only=true"]
    assert art.activation == (Activation(Action.RUN, RESET),)
    assert (reset.path, reset.mode, reset.activation) == (RESET, 0o755, (Activation(Action.RUN),))
    assert "unit=rke2-agent.service\n" in reset.text
    assert f'rm -f -- "$root"{CPU_STATE} "$root"{MEMORY_STATE}\n' in reset.text


def test_kubeadm_example_is_a_v1beta1_dropin() -> None:
    plan, _ = api.compile_file(KUBEADM)
    art, *_ = api.emit(plan, ["kubelet"])
    assert (
        art.path == STAGED + "/etc/kubernetes/kubelet.conf.d/90-hostc.conf"
    )  # hostc-kubelet-reset puts it in place
    doc = yaml.safe_load(art.text)
    assert_v1beta1(doc)
    assert CpuSet.parse(doc["reservedSystemCPUs"]) == plan.partition.housekeeping
    total = sum(Quantity.parse(r["limits"]["memory"]).bytes for r in doc["reservedMemory"])
    want = sum(Quantity.parse(doc[k]["memory"]).bytes for k in ("kubeReserved", "systemReserved"))
    assert total == want + Quantity.parse(doc["evictionHard"]["memory.available"]).bytes
    assert "featureGates" not in doc  # both options are beta or GA in 1.33


def test_every_wrapper_runs_the_reset_step_once(tmp_path: Path) -> None:
    """The reset step itself decides what to clear (test_kubelet_safety runs it)."""
    plan, _ = api.compile_file(RKE2)
    arts = api.emit(plan, ["all"])
    argv = [s.argv for s in steps(arts, OsFamily.DEBIAN)]
    assert argv.count((RESET,)) == 1  # the config and the script share one step
    user_data = api.emit(plan, ["cloud-init"])[0].text
    doc = yaml.safe_load(user_data.split("\n", 1)[1])
    assert [RESET] in doc["runcmd"]
    assert RESET in {f["path"] for f in doc["write_files"]}


def _kubelet_plan(spec: m.HostSpec, topo: Topology) -> Plan:
    plan, _ = api.compile_plan(spec, topo, spec_file="k.toml")
    return plan


def _spec(**kubelet: Any) -> m.HostSpec:
    defaults: dict[str, Any] = {"flavor": "kubeadm", "version": "1.33"}
    return m.HostSpec(
        host=m.Host(name="k", role=m.Role.INFERENCE),
        cpu=m.Cpu(housekeeping_per_node=1, isolate="rest"),
        kubelet=m.Kubelet(**{**defaults, **kubelet}),
    )


def test_kubeadm_before_130_gets_a_whole_config_file() -> None:
    topo = machine(gpus_per_node=2)
    plan = _kubelet_plan(_spec(version="1.29"), topo)
    art, *_ = api.emit(plan, ["kubelet"])
    assert (
        art.path == STAGED + "/etc/kubernetes/hostc-kubelet-config.yaml"
    )  # hostc-kubelet-reset puts it in place
    assert "--config=/etc/kubernetes/hostc-kubelet-config.yaml" in art.text
    assert_v1beta1(yaml.safe_load(art.text))


def test_alpha_option_needs_the_gate_and_gets_it() -> None:
    topo = machine(gpus_per_node=2)
    spec = _spec(version="1.31", cpu_manager_policy_options=["distribute-cpus-across-numa"])
    with pytest.raises(HostcError) as e:
        _kubelet_plan(spec, topo)
    [d] = e.value.errors
    assert str(d.path) == "kubelet.cpu_manager_policy_options[0]"
    assert 'Alpha-level Options not enabled, but option "distribute-cpus-across-numa"' in (
        d.message
    )
    spec = _spec(
        version="1.31",
        cpu_manager_policy_options=["distribute-cpus-across-numa"],
        allow_alpha_options=True,
    )
    doc = yaml.safe_load(api.emit(_kubelet_plan(spec, topo), ["kubelet"])[0].text)
    assert doc["featureGates"] == {"CPUManagerPolicyAlphaOptions": True}
    assert_v1beta1(doc)
    spec = m.HostSpec(
        host=spec.host,
        cpu=spec.cpu,
        kubelet=m.Kubelet(
            flavor=m.Flavor.K3S,
            role=m.NodeRole.SERVER,
            version="1.31",
            cpu_manager_policy_options=["distribute-cpus-across-numa"],
            allow_alpha_options=True,
        ),
    )
    art, reset, *_ = api.emit(_kubelet_plan(spec, topo), ["kubelet"])
    assert (
        art.path == STAGED + "/etc/rancher/k3s/config.yaml.d/90-hostc.yaml"
    )  # hostc-kubelet-reset puts it in place
    assert flag_values(art.text)["feature-gates"] == ["CPUManagerPolicyAlphaOptions=true"]
    assert "unit=k3s.service\n" in reset.text


def test_topology_options_raise_the_numa_limit_in_both_forms() -> None:
    """A GH200-like host: its GPU memory appears as CPU-less NUMA nodes, 10 in all."""
    topo = machine(gpus_per_node=2, cpuless_nodes=8)
    options = {"max-allowable-numa-nodes": "16", "prefer-closest-numa-nodes": "true"}
    keys = {"topology_manager_policy": "restricted", "topology_manager_policy_options": options}
    plan = _kubelet_plan(_spec(**keys), topo)
    assert plan.kubelet is not None and plan.kubelet.topology is not None
    assert dict(plan.kubelet.topology.options) == options
    shown = "\n".join(kubelet_view.lines(plan))
    assert "options max-allowable-numa-nodes=16,prefer-closest-numa-nodes=true" in shown
    doc = yaml.safe_load(api.emit(plan, ["kubelet"])[0].text)
    assert doc["topologyManagerPolicyOptions"] == options
    assert_v1beta1(doc)
    spec = _spec(flavor="rke2", role="agent", **keys)
    flags = flag_values(api.emit(_kubelet_plan(spec, topo), ["kubelet"])[0].text)
    assert [_kv(v) for v in flags["topology-manager-policy-options"]] == [options]


def test_mismatched_reserved_memory_exits_2_with_the_arithmetic(tmp_path: Path) -> None:
    shutil.copy(KUBEADM.parent / "topology.toml", tmp_path / "topology.toml")
    text = KUBEADM.read_text() + '\n[kubelet.reserved_memory]\n0 = "1Gi"\n1 = "1Gi"\n'
    (tmp_path / "node.toml").write_text(text)
    r = subprocess.run(
        [sys.executable, "-m", "hostc", "build", str(tmp_path / "node.toml"), "--out", "o"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert not (tmp_path / "o").exists()
    assert (
        "kubelet.reserved_memory: reserved memory per NUMA node adds up to 0:1Gi + 1:1Gi = "
        "2048Mi, but kube_reserved.memory 1Gi + system_reserved.memory 1Gi + eviction_hard "
        "memory.available 100Mi (default) = 2148Mi; the kubelet refuses to start: the total "
        'amount "2Gi" of type "memory" is not equal to the value "2148Mi" determined by Node '
        "Allocatable feature"
    ) in r.stderr


# Bad inputs: (kubelet keys, topology, workloads) → (severity, path, message part)

BAD: list[tuple[str, dict[str, Any], dict[str, Any], Severity, str, str]] = [
    (
        "reserved memory that does not add up",
        {"memory_manager_policy": "Static", "reserved_memory": {0: "1Gi"}},
        {},
        Severity.ERROR,
        "kubelet.reserved_memory",
        "adds up to 0:1Gi = 1024Mi, but",
    ),
    (
        "a memory manager without reservations",
        {"memory_manager_policy": "Static", "eviction_hard": {"memory.available": "0"}},
        {},
        Severity.ERROR,
        "kubelet.memory_manager_policy",
        "the Static memory manager needs memory reserved for the system",
    ),
    (
        "single-numa-node with a workload spanning nodes",
        {"topology_manager_policy": "single-numa-node"},
        {"workload": [m.Workload("svc", ["GPU0", "GPU2"])]},
        Severity.ERROR,
        'workload "svc".gpus',
        "TopologyAffinityError",
    ),
    (
        "single-numa-node cannot admit the largest GPU request",
        {"topology_manager_policy": "single-numa-node", "max_gpus_per_pod": 4},
        {},
        Severity.ERROR,
        "kubelet.topology_manager_policy",
        "no node has more than 2",
    ),
    (
        "restricted rejects pods whose GPUs span nodes but CPUs do not",
        {"topology_manager_policy": "restricted", "max_gpus_per_pod": 4},
        {},
        Severity.WARNING,
        "kubelet.topology_manager_policy",
        "no merged hint is preferred",
    ),
    (
        "hostc's best-effort for spanning GPU pods on a host past the NUMA limit",
        {"max_gpus_per_pod": 4},
        {"cpuless_nodes": 8},
        Severity.ERROR,
        "kubelet.topology_manager_policy",
        "hostc's choice for GPU pods spanning nodes",
    ),
    (
        "distribute-cpus-across-numa under single-numa-node",
        {
            "topology_manager_policy": "single-numa-node",
            "cpu_manager_policy_options": ["distribute-cpus-across-numa"],
        },
        {},
        Severity.WARNING,
        "kubelet.cpu_manager_policy_options[0]",
        "does nothing under topology_manager_policy single-numa-node",
    ),
    (
        "full-pcpus-only without SMT",
        {"cpu_manager_policy_options": ["full-pcpus-only"]},
        {"smt": 1},
        Severity.WARNING,
        "kubelet.cpu_manager_policy_options[0]",
        "no effect on a host without SMT",
    ),
    (
        "an option this kubelet does not know yet",
        {"version": "1.30", "cpu_manager_policy_options": ["strict-cpu-reservation"]},
        {},
        Severity.ERROR,
        "kubelet.cpu_manager_policy_options[0]",
        "arrived in kubelet 1.32",
    ),
    (
        "strict CPU reservation asked of a kubelet that lacks it",
        {"version": "1.31", "strict_cpu_reservation": True},
        {},
        Severity.ERROR,
        "kubelet.strict_cpu_reservation",
        "arrived in kubelet 1.32",
    ),
    (
        "strict CPU reservation where it is alpha, without the gate",
        {"version": "1.32", "strict_cpu_reservation": True},
        {},
        Severity.ERROR,
        "kubelet.strict_cpu_reservation",
        "alpha in kubelet 1.32",
    ),
    (
        "strict CPU reservation off and named as an option",
        {"strict_cpu_reservation": False, "cpu_manager_policy_options": ["strict-cpu-reservation"]},
        {},
        Severity.ERROR,
        "kubelet.strict_cpu_reservation",
        "names strict-cpu-reservation",
    ),
    (
        "strict CPU reservation under the none policy",
        {"strict_cpu_reservation": False, "cpu_manager_policy": "none"},
        {},
        Severity.ERROR,
        "kubelet.strict_cpu_reservation",
        "belongs to the static policy",
    ),
    (
        "an unknown option",
        {"cpu_manager_policy_options": ["full-pcpus"]},
        {},
        Severity.ERROR,
        "kubelet.cpu_manager_policy_options[0]",
        "unknown CPU-manager option 'full-pcpus'",
    ),
    (
        "options the kubelet refuses together",
        {
            "version": "1.33",
            "allow_alpha_options": True,
            "cpu_manager_policy_options": ["full-pcpus-only", "distribute-cpus-across-cores"],
        },
        {},
        Severity.ERROR,
        "kubelet.cpu_manager_policy_options",
        "refuses full-pcpus-only and distribute-cpus-across-cores together",
    ),
    (
        "an unknown topology-manager option",
        {"topology_manager_policy": "restricted", "topology_manager_policy_options": {"x": "1"}},
        {},
        Severity.ERROR,
        "kubelet.topology_manager_policy_options.x",
        "unknown topology-manager option 'x'",
    ),
    (
        "a topology-manager option this kubelet does not know yet",
        {
            "version": "1.30",
            "topology_manager_policy": "restricted",
            "topology_manager_policy_options": {"max-allowable-numa-nodes": "16"},
        },
        {},
        Severity.ERROR,
        "kubelet.topology_manager_policy_options.max-allowable-numa-nodes",
        "arrived in kubelet 1.31",
    ),
    (
        "a topology-manager option still alpha",
        {
            "version": "1.27",
            "topology_manager_policy": "restricted",
            "topology_manager_policy_options": {"prefer-closest-numa-nodes": "true"},
        },
        {},
        Severity.ERROR,
        "kubelet.topology_manager_policy_options.prefer-closest-numa-nodes",
        "is alpha in kubelet 1.27",
    ),
    (
        "max-allowable-numa-nodes below the kubelet's floor",
        {
            "topology_manager_policy": "restricted",
            "topology_manager_policy_options": {"max-allowable-numa-nodes": "4"},
        },
        {},
        Severity.ERROR,
        "kubelet.topology_manager_policy_options.max-allowable-numa-nodes",
        "a count of at least 8",
    ),
    (
        "topology-manager options under the policy none",
        {"topology_manager_policy_options": {"prefer-closest-numa-nodes": "true"}},
        {},
        Severity.WARNING,
        "kubelet.topology_manager_policy_options",
        "change nothing under the policy none",
    ),
    (
        "more than 8 NUMA nodes (GPU-memory nodes count) under a topology policy",
        {"topology_manager_policy": "restricted"},
        {"cpuless_nodes": 8},
        Severity.ERROR,
        "kubelet.topology_manager_policy",
        "this host has 10 NUMA nodes (CPU-less memory nodes count too) and the topology "
        "manager allows 8",
    ),
    (
        "more than 8 NUMA nodes on a kubelet that cannot raise the limit",
        {"version": "1.30", "topology_manager_policy": "best-effort"},
        {"cpuless_nodes": 8},
        Severity.ERROR,
        "kubelet.topology_manager_policy",
        "the kubelet refuses to start with policy best-effort",
    ),
    (
        "a raised limit still below the host's nodes",
        {
            "topology_manager_policy": "restricted",
            "topology_manager_policy_options": {"max-allowable-numa-nodes": "9"},
        },
        {"cpuless_nodes": 8},
        Severity.ERROR,
        "kubelet.topology_manager_policy",
        "the topology manager allows 9",
    ),
    (
        "rke2 without a role",
        {"flavor": "rke2"},
        {},
        Severity.ERROR,
        "kubelet.role",
        "say which",
    ),
    (
        "memory.available as a percentage",
        {"eviction_hard": {"memory.available": "5%"}},
        {},
        Severity.ERROR,
        'kubelet.eviction_hard."memory.available"',
        "'5%' is not a quantity",
    ),
    (
        "a static CPU manager with nothing isolated",
        {},
        {"isolate": "none"},
        Severity.ERROR,
        "cpu.isolate",
        "leave none for pods",
    ),
    (
        "a kubelet too old",
        {"version": "1.20"},
        {},
        Severity.ERROR,
        "kubelet.version",
        "hostc writes for kubelet 1.22 and later",
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input(case: tuple[str, dict[str, Any], dict[str, Any], Severity, str, str]) -> None:
    _, keys, extra, severity, path, part = case
    topo = machine(
        gpus_per_node=2, smt=extra.get("smt", 2), cpuless_nodes=extra.get("cpuless_nodes", 0)
    )
    spec = _spec(**keys)
    spec = m.HostSpec(
        host=spec.host,
        cpu=m.Cpu(housekeeping_per_node=1, isolate=extra.get("isolate", "rest")),
        workload=extra.get("workload", []),
        kubelet=spec.kubelet,
    )
    try:
        _, found = api.compile_plan(spec, topo, spec_file="k.toml")
    except HostcError as e:
        found = list(e.diagnostics)
    hits = [
        d for d in found if d.severity is severity and str(d.path) == path and part in d.message
    ]
    assert hits, "\n".join(d.render() for d in found)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1G", "decimal SI suffix 'G'"),
        ("1.5Gi", "has a fraction"),
        ("500m", "milli-units"),
        ("1e9", "exponent"),
        ("2Pi", "not Pi or Ei"),
        ("-1Gi", "without a sign"),
        ("lots", "is not a quantity"),
    ],
)
def test_quantity_refusals(text: str, message: str) -> None:
    with pytest.raises(QuantityError, match=message):
        Quantity.parse(text)


def test_quantity_round_trip() -> None:
    assert str(Quantity.parse("2148Mi")) == "2148Mi"
    assert str(Quantity.parse("1024Mi")) == "1Gi"
    assert Quantity.parse(1073741824) == Quantity.parse("1Gi")
    assert str(Quantity(1000)) == "1000"
    assert KubeVersion.parse("v1.31.4") == KubeVersion(1, 31)


def test_decimal_quantity_refused_at_load(tmp_path: Path) -> None:
    (tmp_path / "node.toml").write_text(
        'version = 1\n[host]\nname = "k"\nrole = "inference"\n[kubelet]\nflavor = "kubeadm"\n'
        'version = "1.33"\n[kubelet.system_reserved]\nmemory = "1G"\n'
    )
    with pytest.raises(HostcError) as e:
        api.load_spec(tmp_path / "node.toml")
    [d] = e.value.errors
    assert str(d.path) == "kubelet.system_reserved.memory"
    assert "decimal SI suffix 'G'" in d.message and "write 1Gi" in d.message


def test_split_memory_is_exact_and_proportional() -> None:
    rows = split_memory(Quantity.parse("2148Mi"), {0: 2, 1: 2})
    assert [(r.node, str(r.memory)) for r in rows] == [(0, "1074Mi"), (1, "1074Mi")]
    rows = split_memory(Quantity.parse("100Mi"), {0: 1, 1: 1, 2: 1})
    assert [str(r.memory) for r in rows] == ["34Mi", "33Mi", "33Mi"]
    rows = split_memory(Quantity(1001), {0: 4, 3: 0})
    assert [(r.node, r.memory.bytes) for r in rows] == [(0, 1001)]


# Property: every accepted case reads back to the Plan's sets and the kubelet's equation


@st.composite
def kube_cases(draw: st.DrawFn) -> tuple[Topology, m.HostSpec]:
    topo, spec = draw(cases())
    mib = st.integers(0, 4096).map(lambda n: Quantity.mib(n))
    reserved = st.one_of(st.none(), st.builds(m.KubeletReserved, memory=mib))
    flavor = draw(st.sampled_from(list(m.Flavor)))
    kubelet = m.Kubelet(
        flavor=flavor,
        version=draw(st.sampled_from(["1.29", "1.31", "1.33", "1.35"])),
        role=None if flavor is m.Flavor.KUBEADM else m.NodeRole.AGENT,
        memory_manager_policy=draw(st.sampled_from([None, m.MemoryManagerPolicy.STATIC])),
        kube_reserved=draw(reserved),
        system_reserved=draw(reserved),
        eviction_hard=draw(
            st.one_of(
                st.just({}), mib.map(lambda q: {"memory.available": str(q) if q.bytes else "0"})
            )
        ),
    )
    return topo, m.HostSpec(
        host=spec.host, cpu=spec.cpu, workload=spec.workload, hugepages=spec.hugepages,
        kubelet=kubelet,
    )  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kube_cases())
def test_kubelet_reads_back_to_the_plan(case: tuple[Topology, m.HostSpec]) -> None:
    topo, spec = case
    try:
        plan, _ = api.compile_plan(spec, topo, spec_file="prop.toml")
    except HostcError as e:
        assert e.errors
        return
    k = plan.kubelet
    assert k is not None
    art, *_ = api.emit(plan, ["kubelet"])
    if k.flavor is m.Flavor.KUBEADM:
        doc = yaml.safe_load(art.text)
        assert_v1beta1(doc)
        reserved = CpuSet.parse(doc["reservedSystemCPUs"])
        rows = {
            r["numaNode"]: Quantity.parse(r["limits"]["memory"])
            for r in doc.get("reservedMemory", [])
        }
        total = (
            sum(
                Quantity.parse(doc.get(f, {}).get("memory", "0")).bytes
                for f in ("kubeReserved", "systemReserved")
            )
            + Quantity.parse(doc["evictionHard"]["memory.available"]).bytes
        )
    else:
        f = flag_values(art.text)
        reserved = CpuSet.parse(f["reserved-cpus"][0])
        rows = reserved_memory_from_flags(f.get("reserved-memory", []))
        total = memory_total_from_flags(f).bytes
    assert reserved == plan.partition.housekeeping
    for w in plan.workloads:
        assert not (w.cpus & reserved), w.name
    if k.memory_manager_static:
        assert sum(q.bytes for q in rows.values()) == total > 0
        assert set(rows) <= {n.id for n in plan.nodes if n.memory_mib != 0}
    else:
        assert rows == {}
    assert art.activation == (Activation(Action.RUN, RESET),)
