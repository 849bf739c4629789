"""The kubelet artifacts do not hurt a live node: pods spanning NUMA nodes are admitted,
the configuration is read, checkpoints are cleared only when their settings changed and
no pod runs, containers are not confined to the housekeeping CPUs, and the knowledge
tables behind these say what their sources say."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hostc import api, vocab
from hostc.artifact import Action, Activation
from hostc.check import topology_hints as th
from hostc.knowledge import kubelet as ko
from hostc.knowledge import runtime as runtimefacts
from hostc.plan.kubelet import managers_stamp
from hostc.plan.model import Plan
from hostc.spec import model as m
from hostc.targets import kubelet as tk
from hostc.targets.lifecycle import STAGED

from conftest import ROOT
from topogen import machine

V = ko.KubeVersion(1, 33)

RKE2 = ROOT / "examples" / "dgx-h100-rke2" / "node.toml"
KUBEADM = ROOT / "examples" / "h100-kubeadm" / "node.toml"
TP = vocab.TopologyPolicy


def _by_path(plan: Plan) -> dict[str, str]:
    """The kubelet files by the path they take effect at (the config is installed staged)."""
    return {a.path.removeprefix(STAGED): a.text for a in api.emit(plan, ["kubelet"])}


def _plan(**kubelet: object) -> Plan:
    spec = m.HostSpec(
        host=m.Host(name="k", role=m.Role.INFERENCE),
        cpu=m.Cpu(housekeeping_per_node=1, isolate="rest"),
        kubelet=m.Kubelet(**{"flavor": "kubeadm", "version": "1.33", **kubelet}),  # type: ignore[arg-type]
    )
    plan, _ = api.compile_plan(spec, machine(gpus_per_node=2), spec_file="k.toml")
    return plan


# The topology manager's merge, mirrored from policy.go


def test_merged_hint_is_preferred_only_when_every_affinity_is_equal() -> None:
    both, zero = frozenset({0, 1}), frozenset({0})
    assert th.merge_permutation(both, [th.Hint(both, True), th.Hint(zero, True)]) == th.Hint(
        zero, False
    )
    assert th.merge_permutation(both, [th.Hint(zero, True), th.Hint(zero, True)]) == th.Hint(
        zero, True
    )
    assert th.merge_permutation(both, [th.Hint(both, True), th.Hint(both, False)]) == th.Hint(
        both, False
    )
    # a provider without preference neither narrows nor spoils the merge
    assert th.merge_permutation(both, [th.Hint(None, True), th.Hint(zero, True)]) == th.Hint(
        zero, True
    )


def test_provider_hints_prefer_the_narrowest_sets() -> None:
    hints = th.provider_hints(4, {0: 4, 1: 4})
    assert th.Hint(frozenset({0}), True) in hints
    assert th.Hint(frozenset({0, 1}), False) in hints
    assert th.provider_hints(8, {0: 4, 1: 4}) == (th.Hint(frozenset({0, 1}), True),)


@pytest.mark.parametrize(
    ("policy", "admitted"),
    [(TP.NONE, True), (TP.BEST_EFFORT, True), (TP.RESTRICTED, False), (TP.SINGLE_NUMA_NODE, False)],
)
def test_eight_gpu_pod_with_one_node_of_cpus_is_admitted_only_by_lax_policies(
    policy: vocab.TopologyPolicy, admitted: bool
) -> None:
    gpus = th.provider_hints(8, {0: 4, 1: 4})
    cpus = th.provider_hints(16, {0: 104, 1: 104})
    assert th.admits(policy, [0, 1], [gpus, cpus]) is admitted
    # a pod that also needs both nodes' CPUs merges to a preferred {0,1}: restricted passes
    wide = th.provider_hints(150, {0: 104, 1: 104})
    assert th.admits(TP.RESTRICTED, [0, 1], [gpus, wide])


def test_gpu_pods_spanning_nodes_default_to_best_effort() -> None:
    plan, found = api.compile_file(RKE2)
    assert plan.kubelet is not None and plan.kubelet.topology is not None
    assert plan.kubelet.topology.policy == "best-effort"
    assert not [d for d in found if str(d.path).startswith("kubelet")]
    flags = yaml.safe_load(_by_path(plan)[tk.rancher_path(vocab.Flavor.RKE2)])["kubelet-arg+"]
    assert "topology-manager-policy=best-effort" in flags
    # without max_gpus_per_pod beyond one node, hostc leaves the kubelet's default
    assert _plan(max_gpus_per_pod=2).kubelet.topology is None  # type: ignore[union-attr]


# kubeadm: the drop-in directory is read


def test_kubeadm_kubelet_runs_with_config_dir_without_touching_extra_args() -> None:
    plan, _ = api.compile_file(KUBEADM)
    arts = {a.path: a for a in api.emit(plan, ["kubelet"])}
    dropin = arts[tk.KUBELET_DROPIN]
    lines = [x for x in dropin.text.splitlines() if not x.startswith("#")]
    assert lines == [
        "[Service]",
        'Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml '
        '--config-dir=/etc/kubernetes/kubelet.conf.d"',
    ]
    assert "KUBELET_EXTRA_ARGS=" not in dropin.text
    assert Activation(Action.DAEMON_RELOAD) in dropin.activation
    # the configuration it makes the kubelet read lives in that directory (once
    # hostc-kubelet-reset put it there from where it is installed)
    assert any(p.startswith(ko.CONFIG_DIR + "/") for p in _by_path(plan))
    # rke2 and old kubeadm have no such drop-in
    assert tk.KUBELET_DROPIN not in _by_path(api.compile_file(RKE2)[0])
    assert tk.KUBELET_DROPIN not in _by_path(_plan(version="1.29"))


# The reset step, run against a fake root


class Node:
    """A fake host: systemctl and sleep stubs on PATH, the kubelet's directory under root."""

    def __init__(self, tmp: Path, script: bytes, active: bool, pid: int = 0) -> None:
        self.root = tmp / "root"
        (self.root / "var/lib/kubelet").mkdir(parents=True)
        self.file(ko.STAMP).parent.mkdir(parents=True)
        self.log = tmp / "log"
        self.log.touch()
        bindir = tmp / "bin"
        bindir.mkdir()
        (bindir / "systemctl").write_text(
            f'#!/bin/sh\necho "systemctl $*" >> {self.log}\n'
            f'case "$1" in is-active) exit {0 if active else 3};; '
            f"show) echo {pid};; esac\nexit 0\n"
        )
        (bindir / "sleep").write_text("#!/bin/sh\nexit 0\n")
        for f in bindir.iterdir():
            f.chmod(0o755)
        self.script = tmp / "reset"
        self.script.write_bytes(script)
        self.env = {
            **os.environ,
            "PATH": f"{bindir}:{os.environ['PATH']}",
            "HOSTC_ROOT": str(self.root),
        }

    def file(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", str(self.script), *args],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )

    def calls(self) -> list[str]:
        return [c for c in self.log.read_text().splitlines() if "is-active" not in c]


def _reset(path: Path = RKE2) -> tuple[bytes, str]:
    plan, _ = api.compile_file(path)
    assert plan.kubelet is not None
    art = next(a for a in api.emit(plan, ["kubelet"]) if a.path == tk.RESET)
    return art.data, managers_stamp(plan.kubelet)


def _checkpoints(
    node: Node, cpu: str = "static", memory: str = "Static", entries: bool = False
) -> None:
    extra = ',"entries":{"pod":{"c":"4-5"}}' if entries else ""
    node.file(ko.CPU_STATE).write_text(
        f'{{"policyName":"{cpu}","defaultCpuSet":"0-3"{extra},"checksum":1}}'
    )
    node.file(ko.MEMORY_STATE).write_text(
        f'{{"policyName":"{memory}","machineState":{{}},"checksum":2}}'
    )


def test_unchanged_reapply_on_a_live_node_removes_and_restarts_nothing(tmp_path: Path) -> None:
    script, stamp = _reset()
    node = Node(tmp_path, script, active=True)
    _checkpoints(node, entries=True)
    node.file(ko.STAMP).write_text(stamp + "\n")
    r = node.run()
    assert r.returncode == 0, r.stderr
    assert node.file(ko.CPU_STATE).exists() and node.file(ko.MEMORY_STATE).exists()
    assert not [c for c in node.calls() if c.split()[1] in ("stop", "start", "restart")]


def test_changed_settings_under_running_pods_wait_for_the_next_boot(tmp_path: Path) -> None:
    script, _ = _reset()
    node = Node(tmp_path, script, active=True)
    _checkpoints(node, entries=True)
    node.file(ko.STAMP).write_text("cpu=none\n")
    r = node.run()
    assert r.returncode == 0, r.stderr
    assert "goes into place at the next boot, with the checkpoints cleared" in r.stderr
    assert node.file(ko.CPU_STATE).exists() and node.calls() == []
    # --now refuses while a checkpoint still holds exclusive CPUs
    r = node.run("--now")
    assert r.returncode == 1 and "drain the node first" in r.stderr
    assert node.file(ko.CPU_STATE).exists()
    # forced on a node the operator drained by hand: stop, clear, start, then verify
    r = node.run("--now", "--force")
    assert not node.file(ko.CPU_STATE).exists()
    assert node.calls()[:2] == [
        "systemctl stop rke2-agent.service",
        "systemctl start rke2-agent.service",
    ]
    assert r.returncode == 1 and "did not take effect" in r.stderr  # the fake kubelet wrote none
    assert node.run("--bogus").returncode == 2


def test_boot_clears_the_checkpoints_before_the_kubelet_at_every_boot(tmp_path: Path) -> None:
    """OpenShift's kubelet-cleanup.service (MCO PR #4124): no pod survives a reboot, and
    a checkpoint of the same settings may still be rejected after a CPU topology change
    (review K10); a stamp that matches keeps nothing."""
    script, stamp = _reset()
    node = Node(tmp_path, script, active=False)
    _checkpoints(node, entries=True)
    r = node.run("--boot")
    assert r.returncode == 0, r.stderr
    assert not node.file(ko.CPU_STATE).exists() and not node.file(ko.MEMORY_STATE).exists()
    assert node.file(ko.STAMP).read_text() == stamp + "\n"
    _checkpoints(node)  # the kubelet wrote fresh ones; the next boot clears them too
    assert node.run("--boot").returncode == 0 and not node.file(ko.CPU_STATE).exists()


def test_stopped_kubelet_without_pods_is_cleared_on_apply(tmp_path: Path) -> None:
    script, stamp = _reset()
    node = Node(tmp_path, script, active=False)
    _checkpoints(node, cpu="none", memory="None")
    assert node.run().returncode == 0
    assert not node.file(ko.CPU_STATE).exists()
    assert node.file(ko.STAMP).read_text() == stamp + "\n"


def test_reset_fails_loudly_when_the_kubelet_ignores_the_policy(tmp_path: Path) -> None:
    script, stamp = _reset()
    node = Node(tmp_path, script, active=True)
    _checkpoints(node, cpu="none")
    node.file(ko.STAMP).write_text(stamp + "\n")
    r = node.run()
    assert r.returncode == 1
    assert "FAILED" in r.stderr and "did not take effect" in r.stderr


def test_reset_fails_loudly_when_kubeadm_kubelet_lacks_config_dir(tmp_path: Path) -> None:
    script, stamp = _reset(KUBEADM)
    with subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)", "--config-dir=/x"]
    ) as p:
        try:
            node = Node(tmp_path, script, active=True, pid=p.pid)
            _checkpoints(node)
            node.file(ko.STAMP).write_text(stamp + "\n")
            r = node.run()
            assert r.returncode == 1 and "runs without --config-dir" in r.stderr
        finally:
            p.kill()
    flag = f"--config-dir={ko.CONFIG_DIR}"
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", flag]) as p:
        try:
            node = Node(tmp_path / "b", script, active=True, pid=p.pid)
            _checkpoints(node)
            node.file(ko.STAMP).write_text(stamp + "\n")
            r = node.run()
            assert r.returncode == 0, r.stderr
        finally:
            p.kill()


def test_boot_unit_runs_before_the_kubelet_once_per_boot() -> None:
    for path, unit in ((RKE2, "rke2-agent.service"), (KUBEADM, "kubelet.service")):
        plan, _ = api.compile_file(path)
        art = next(a for a in api.emit(plan, ["kubelet"]) if a.path == tk.RESET_UNIT_PATH)
        assert f"Before={unit}\n" in art.text
        assert "RemainAfterExit=yes\n" in art.text
        assert f"ExecStart={tk.RESET} --boot\n" in art.text
        assert Activation(Action.ENABLE, tk.RESET_UNIT) in art.activation
        assert not any(a.action in (Action.START, Action.RESTART) for a in art.activation)


# The container runtime keeps every CPU


@pytest.mark.parametrize(
    ("path", "runtime"),
    [(KUBEADM, "containerd.service"), (RKE2, "rke2-agent.service")],
)
def test_container_runtime_keeps_every_cpu_on_kubelet_nodes(path: Path, runtime: str) -> None:
    plan, _ = api.compile_file(path)
    arts = {a.path: a for a in api.emit(plan, ["all"])}
    assert "/etc/systemd/system.conf.d/90-hostc-cpuaffinity.conf" in arts  # the manager's mask
    dropin = arts[f"/etc/systemd/system/{runtime}.d/90-hostc-cpuaffinity.conf"]
    assert f"CPUAffinity={plan.partition.online}\n" in dropin.text
    assert f"AllowedCPUs={plan.partition.housekeeping}\n" in dropin.text
    assert Activation(Action.REBOOT) in dropin.activation  # no runtime restart on apply


def test_crio_node_gets_its_runtime_dropins_on_crio_service() -> None:
    """K11: on a CRI-O node the CPU affinity and memlock drop-ins go to crio.service, the
    unit whose conmon and runc start the containers; a containerd drop-in would be inert
    there and leave Burstable pods confined to the housekeeping CPUs."""
    plan = _plan(runtime="crio")
    assert plan.kubelet is not None and plan.kubelet.runtime_unit == "crio.service"
    paths = {a.path: a.text for a in api.emit(plan, ["all"])}
    assert not [p for p in paths if "containerd.service.d" in p]
    dropin = paths["/etc/systemd/system/crio.service.d/90-hostc-cpuaffinity.conf"]
    assert f"CPUAffinity={plan.partition.online}\n" in dropin
    assert "LimitMEMLOCK=" in paths["/etc/systemd/system/crio.service.d/90-hostc-limits.conf"]
    default = _plan()  # unset: containerd, as before the key existed
    assert default.kubelet is not None and default.kubelet.runtime_unit == "containerd.service"
    assert ko.runtime_unit(vocab.Flavor.RKE2, None, vocab.ContainerRuntime.CRIO) == "crio.service"


# Eviction and CPU reservation


def test_rke2_eviction_restates_the_distributions_defaults() -> None:
    plan, _ = api.compile_file(RKE2)
    flags = yaml.safe_load(_by_path(plan)[tk.rancher_path(vocab.Flavor.RKE2)])["kubelet-arg+"]
    evict = [f for f in flags if f.startswith("eviction-hard=")]
    assert evict == [
        "eviction-hard=imagefs.available<5%,memory.available<500Mi,nodefs.available<5%"
    ]


def test_kubeadm_eviction_restatement_keeps_imagefs_inodes_free_from_kubelet_130() -> None:
    """N6: setting evictionHard replaces the kubelet's whole default map; from 1.30 that
    map has imagefs.inodesFree (PR #121834), so the restatement must too."""
    four = {
        "imagefs.available": "15%",
        "memory.available": "100Mi",
        "nodefs.available": "10%",
        "nodefs.inodesFree": "5%",
    }
    doc = yaml.safe_load(_by_path(_plan())[tk.DROPIN])
    assert doc["evictionHard"] == {**four, "imagefs.inodesFree": "5%"}
    new = _plan().kubelet
    assert (
        new is not None
        and "kubelet 1.33's default hard eviction thresholds (its table since 1.30)"
        in new.eviction.reason.why
    )
    old = _plan(version="1.29").kubelet
    assert old is not None and dict(old.eviction.others) == {
        k: v for k, v in four.items() if k != "memory.available"
    }
    assert "(its table since 1.22)" in old.eviction.reason.why
    assert "PR #121834" in ko.DEFAULT_EVICTION_OTHERS.source(ko.KubeVersion(1, 30))


def test_reserved_cpus_are_kept_from_pods_from_kubelet_133() -> None:
    doc = yaml.safe_load(_by_path(_plan(version="1.33"))[tk.DROPIN])
    assert doc["cpuManagerPolicyOptions"]["strict-cpu-reservation"] == "true"
    assert "featureGates" not in doc
    old = _plan(version="1.32")
    assert old.kubelet is not None
    assert "strict-cpu-reservation" not in old.kubelet.cpu.options
    assert "Burstable and BestEffort pods share it" in old.kubelet.cpu.reserved_reason.why
    assert "pods get the isolated CPUs" not in old.kubelet.cpu.reserved_reason.why
    # offered on 1.32, where it is alpha, with the gate
    alpha = _plan(
        version="1.32",
        cpu_manager_policy_options=["strict-cpu-reservation"],
        allow_alpha_options=True,
    )
    doc = yaml.safe_load(_by_path(alpha)[tk.DROPIN])
    assert doc["cpuManagerPolicyOptions"] == {"strict-cpu-reservation": "true"}
    assert doc["featureGates"] == {"CPUManagerPolicyAlphaOptions": True}


def test_strict_cpu_reservation_can_be_turned_off_and_on() -> None:
    """Off: Burstable and BestEffort pods may share the reserved CPUs (a small node), and
    the reasons say so; on: asked for on 1.32 with the alpha gate, as the option would be."""
    off = _plan(version="1.35", strict_cpu_reservation=False)
    assert off.kubelet is not None
    assert "strict-cpu-reservation" not in off.kubelet.cpu.options
    doc = yaml.safe_load(_by_path(off)[tk.DROPIN])
    assert "strict-cpu-reservation" not in doc.get("cpuManagerPolicyOptions", {})
    assert "strict_cpu_reservation = false" in off.kubelet.cpu.reason.why
    assert str(off.kubelet.cpu.reason.source) == "kubelet, kubelet.strict_cpu_reservation"
    assert "Burstable and BestEffort pods share it" in off.kubelet.cpu.reserved_reason.why
    on = _plan(version="1.32", strict_cpu_reservation=True, allow_alpha_options=True)
    doc = yaml.safe_load(_by_path(on)[tk.DROPIN])
    assert doc["cpuManagerPolicyOptions"] == {"strict-cpu-reservation": "true"}
    assert doc["featureGates"] == {"CPUManagerPolicyAlphaOptions": True}
    assert on.kubelet is not None
    assert "from kubelet.strict_cpu_reservation" in on.kubelet.cpu.reason.why
    # unset: the default by release, the same as before the key existed
    assert "strict-cpu-reservation" in _plan(version="1.33").kubelet.cpu.options  # type: ignore[union-attr]


# Knowledge tables, one fact per assertion


def test_kubelet_facts() -> None:
    assert ko.stage("strict-cpu-reservation", ko.KubeVersion(1, 32)) is ko.Stage.ALPHA
    assert ko.stage("strict-cpu-reservation", ko.KubeVersion(1, 33)) is ko.Stage.BETA
    assert ko.stage("strict-cpu-reservation", ko.KubeVersion(1, 35)) is ko.Stage.GA
    assert ko.KubeVersion(1, 33) == ko.STRICT_RESERVATION_DEFAULT_SINCE
    assert ko.KubeVersion(1, 30) == ko.CONFIG_DIR_SINCE
    assert ko.eviction_others(vocab.Flavor.RKE2, V) == {
        "imagefs.available": "5%",
        "nodefs.available": "5%",
    }
    assert ko.eviction_others(vocab.Flavor.K3S, V) == ko.eviction_others(vocab.Flavor.RKE2, V)
    assert ko.eviction_others(vocab.Flavor.KUBEADM, V)["imagefs.available"] == "15%"
    assert ko.runtime_unit(vocab.Flavor.KUBEADM, None) == "containerd.service"
    assert ko.runtime_unit(vocab.Flavor.K3S, vocab.NodeRole.AGENT) == "k3s-agent.service"


def test_runtime_facts() -> None:
    assert runtimefacts.kernel_keeps_affinity((6, 1)) is False
    assert runtimefacts.kernel_keeps_affinity((6, 2)) is True
    assert runtimefacts.kernel_keeps_affinity(None) is None
    assert not runtimefacts.runc_resets_affinity((1, 2, 6))
    assert runtimefacts.runc_resets_affinity((1, 2, 7))
    assert not runtimefacts.runc_resets_affinity((1, 3, 0))
    assert runtimefacts.runc_resets_affinity((1, 3, 1))
    assert runtimefacts.runc_resets_affinity((1, 4, 0))
    assert not runtimefacts.runc_resets_affinity((1, 1, 15))
    assert runtimefacts.ALLOWED_CPUS_SINCE == 244
