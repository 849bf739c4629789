"""The booted-VM check of the kubelet files (tests/helpers/kubelet_readback.py, used by
tests/vm/test_vm.py) fails when the guest lacks what the kubelet would read: it is run
here on what a guest shows with hostc's build installed, and without it."""

from __future__ import annotations

import shlex

import pytest

from hostc import api
from hostc.knowledge import kubelet as ko
from hostc.plan.model import Plan
from hostc.targets import kubelet as kt

import kubelet_readback
from conftest import ROOT

SPEC = ROOT / "tests" / "vm" / "v1-kubelet.toml"
KUBEADM_ARGS = ["--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
                "--kubeconfig=/etc/kubernetes/kubelet.conf"]  # fmt: skip


@pytest.fixture(scope="module")
def plan() -> Plan:
    return api.compile_file(SPEC)[0]


def _guest(plan: Plan) -> tuple[str, str, str]:
    """What step2.sh reads back on a guest with the build installed: the drop-in folder's
    *.conf, the unit's DropInPaths, and the kubelet's arguments (kubeadm's
    $KUBELET_KUBECONFIG_ARGS, then $KUBELET_CONFIG_ARGS as hostc's drop-in sets it)."""
    built = kubelet_readback.built(plan)
    assert plan.kubelet is not None
    (env,) = (line for line in built[kt.KUBELET_DROPIN].splitlines() if line.startswith("Env"))
    name, value = shlex.split(env.split("=", 1)[1])[0].split("=", 1)
    assert name == ko.KUBEADM_CONFIG_ARGS
    unit = f"DropInPaths={kubelet_readback.KUBEADM_DROPIN} {kt.KUBELET_DROPIN}\n"
    args = "".join(f"{a}\n" for a in [*KUBEADM_ARGS, *value.split()])
    return built[kt.delivered(plan.kubelet)], unit, args


def test_kubelet_vm_readback_accepts_the_builds_drop_in_and_kubelet_arguments(
    plan: Plan,
) -> None:
    assert kubelet_readback.problems(plan, *_guest(plan)) == []


def test_kubelet_vm_readback_fails_without_the_drop_in(plan: Plan) -> None:
    _, unit, args = _guest(plan)
    conf = "cat: '/etc/kubernetes/kubelet.conf.d/*.conf': No such file or directory\n"
    found = kubelet_readback.problems(plan, conf, unit, args)
    assert any("does not hold the build's" in p for p in found), found


def test_kubelet_vm_readback_fails_when_kubeadms_config_args_win(plan: Plan) -> None:
    """Without hostc's kubelet.service drop-in the kubelet runs with --config alone and
    never reads the drop-in folder."""
    conf, _, _ = _guest(plan)
    unit = f"DropInPaths={kubelet_readback.KUBEADM_DROPIN}\n"
    args = "".join(f"{a}\n" for a in [*KUBEADM_ARGS, f"--config={ko.KUBEADM_CONFIG}"])
    found = kubelet_readback.problems(plan, conf, unit, args)
    assert any("--config-dir" in p for p in found), found
    assert any(kt.KUBELET_DROPIN in p for p in found), found


def test_kubelet_vm_readback_fails_without_the_plans_eviction_thresholds(plan: Plan) -> None:
    """Review N6: a 1.30+ drop-in without imagefs.inodesFree (the kubelet's own default,
    dropped when evictionHard is set) is the Plan's no longer."""
    conf, unit, args = _guest(plan)
    assert "  imagefs.inodesFree: 5%\n" in conf
    found = kubelet_readback.problems(
        plan, conf.replace("  imagefs.inodesFree: 5%\n", ""), unit, args
    )
    assert any("evictionHard" in p for p in found), found
    assert any("imagefs.inodesFree is missing" in p for p in found), found
