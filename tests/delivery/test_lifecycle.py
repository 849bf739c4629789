"""Lifecycle: the manifest every delivery carries, hostc-apply replacing an older build,
and hostc-revert removing everything, run with sh on host trees (HOSTC_ROOT: files
only, no systemctl).  The booted-VM tests run the same scripts on a real Debian."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import attrs
import pytest

from hostc import api
from hostc.artifact import Artifact, ArtifactKind
from hostc.delivery.effects import stopped_units
from hostc.plan.kernelargs import kernel_args
from hostc.plan.model import IrqOwner, Plan
from hostc.targets import lifecycle

from conftest import ROOT, need_tool
from delivery_read import ignition_files

DGX = ROOT / "examples" / "dgx-h100-inference" / "node.toml"
KUBEADM = ROOT / "examples" / "h100-kubeadm" / "node.toml"


def plan_of(spec: Path) -> Plan:
    return api.compile_file(spec)[0]


def delivered(plan: Plan) -> list[Artifact]:
    """What the rootfs delivery installs (the tree, without apply.sh)."""
    return [a for a in api.emit(plan, ["rootfs"]) if a.kind is ArtifactKind.FILE]


def install(root: Path, files: list[Artifact]) -> None:
    for a in files:
        dest = root / a.relpath
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(a.data)
        dest.chmod(a.mode)


def run_script(root: Path, script: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOSTC_ROOT": str(root)}
    return subprocess.run(
        ["sh", str(root / script.lstrip("/"))], capture_output=True, text=True, env=env, check=False
    )


def tree(root: Path) -> set[str]:
    return {"/" + str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_every_delivery_records_each_file_it_installs_with_its_sha256() -> None:
    plan = plan_of(DGX)
    files = delivered(plan)
    manifest = next(a for a in files if a.path == lifecycle.NEW_MANIFEST).text
    recorded = {
        line.split()[2]: line.split()[1]
        for line in manifest.splitlines()
        if line.startswith("file ")
    }
    want = {
        a.path: hashlib.sha256(a.data).hexdigest()
        for a in files
        if a.path != lifecycle.NEW_MANIFEST
    }
    assert recorded == want
    text = api.emit(plan, ["cloud-init"])[0].text
    assert lifecycle.NEW_MANIFEST in text and lifecycle.APPLY in text and lifecycle.REVERT in text
    ign = api.emit(plan, ["ignition"])[0].text
    assert f'"path": "{lifecycle.NEW_MANIFEST}"' not in ign and lifecycle.REVERT in ign
    assert f'"path": "{lifecycle.MANIFEST}"' in ign  # installed as current: nothing applies it


def test_the_manifest_lists_the_units_the_build_stops() -> None:
    plan = plan_of(DGX)
    assert plan.runtime.irq is not None and plan.runtime.irq.owner is IrqOwner.HOSTC
    assert list(stopped_units(plan)) == sorted(
        {s.unit for s in plan.runtime.services_off} | {"irqbalance.service"}
    )


def test_a_manifest_word_with_a_space_is_refused() -> None:
    from hostc.targets._escape import UnsafeValue

    plan = plan_of(DGX)
    bad = attrs.evolve(delivered(plan)[0], path="/etc/a b.conf")
    with pytest.raises(UnsafeValue):
        lifecycle.manifest_text(plan, [bad])


def test_apply_script_runs_last_in_every_delivery() -> None:
    """hostc-apply records the build as applied only once every step ran: a delivery cut
    off before it leaves the old manifest, so the next one runs the same steps again."""
    steps = [s.command for s in api.apply_steps(plan_of(DGX), delivered(plan_of(DGX)))]
    assert steps[-1] == (lifecycle.APPLY,)
    grub = (lifecycle.APPLY, "--changed", "/etc/default/grub.d/90-hostc.cfg", "--", "update-grub")
    assert steps.index(grub) < len(steps) - 1


def build(plan: Plan, new: dict[str, bytes] | None = None) -> list[Artifact]:
    """The host files of `plan` with some files' bytes replaced (by path), and the
    lifecycle files made from them."""
    new = new or {}
    files = [
        attrs.evolve(a, data=new.get(a.path, a.data))
        for a in api.emit(plan, ["all"])
        if a.kind is ArtifactKind.FILE
    ]
    assert set(new) <= {a.path for a in files}
    return files + lifecycle.artifacts(plan, files)


def guard(root: Path, how: str, path: str, env: dict[str, str] | None = None) -> str:
    """hostc-apply's verdict on a step of `path` (HOSTC_ROOT: it says, runs nothing)."""
    script = root / lifecycle.APPLY.lstrip("/")
    env = {**os.environ, "HOSTC_ROOT": str(root), **(env or {})}
    argv = ["sh", str(script), how, path, "--", "true"]
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().removeprefix("hostc-apply: ").split(":")[0]


SYSCTL = "/etc/sysctl.d/90-hostc.conf"
SERVE_A = "/etc/systemd/system/serve-a.service.d/90-hostc.conf"
GRUB = "/etc/default/grub.d/90-hostc.cfg"


def test_a_step_runs_only_when_its_own_files_changed(tmp_path: Path) -> None:
    """N2: a one-line sysctl change runs `sysctl --system` and restarts no workload; a
    workload's own drop-in restarts it; a delivery that rewrote a file by hand-made
    drift (HOSTC_CHANGED) runs its steps too; a first delivery runs everything."""
    plan, root = plan_of(DGX), tmp_path / "host"
    v1 = build(plan)
    install(root, v1)
    assert guard(root, "--changed", SYSCTL) == "would run"  # no build applied before
    assert guard(root, "--restart", SERVE_A) == "skipped"  # its kernel arguments: a reboot
    assert run_script(root, lifecycle.APPLY).returncode == 0
    install(root, v1)  # the same build again
    assert guard(root, "--changed", SYSCTL) == "skipped"
    assert guard(root, "--changed", SYSCTL, {"HOSTC_CHANGED": f" /x {SYSCTL}"}) == "would run"
    sysctl = next(a for a in v1 if a.path == SYSCTL).data + b"vm.swappiness = 2\n"
    install(root, build(plan, {SYSCTL: sysctl}))
    assert guard(root, "--changed", SYSCTL) == "would run"
    assert guard(root, "--restart", SERVE_A) == "skipped"
    assert guard(root, "--changed", "/etc/systemd/system/hostc-tuning.service") == "skipped"
    dropin = next(a for a in v1 if a.path == SERVE_A).data + b"# changed\n"
    install(root, build(plan, {SERVE_A: dropin}))
    assert guard(root, "--restart", SERVE_A) == "would run"


def test_no_workload_restarts_while_a_reboot_is_owed(tmp_path: Path) -> None:
    """The reboot brings the new drop-in: a restart before it is a second outage.  The
    kernel arguments change (one more housekeeping core: the isolated CPUs move), so the
    disruption owes a reboot; the GRUB step still runs (the reboot needs it)."""
    plan, root = plan_of(DGX), tmp_path / "host"
    v1 = build(plan)
    install(root, v1)
    assert run_script(root, lifecycle.APPLY).returncode == 0
    spec = tmp_path / "node.toml"
    text = DGX.read_text().replace("housekeeping_per_node = 4", "housekeeping_per_node = 5")
    spec.write_text(
        text.replace('topology = "topology.toml"', f'topology = "{DGX.parent}/topology.toml"')
    )
    install(root, build(plan_of(spec)))
    assert guard(root, "--restart", SERVE_A) == "skipped"
    assert guard(root, "--changed", GRUB) == "would run"
    # bytes of the GRUB drop-in alone (a comment) change no kernel argument: no reboot
    install(root, v1)
    assert run_script(root, lifecycle.APPLY).returncode == 0
    old = {a.path: a.data for a in v1}
    install(root, build(plan, {SERVE_A: old[SERVE_A] + b"# x\n", GRUB: old[GRUB] + b"# x\n"}))
    assert guard(root, "--restart", SERVE_A) == "would run"


def test_applying_a_new_build_removes_what_only_the_old_one_installed(tmp_path: Path) -> None:
    root = tmp_path / "host"
    v1 = delivered(plan_of(DGX))
    install(root, v1)
    first = run_script(root, lifecycle.APPLY)
    assert first.returncode == 0, first.stderr
    assert (root / lifecycle.MANIFEST.lstrip("/")).exists()
    v2 = delivered(plan_of(KUBEADM))  # no workloads, no modprobe.d, irqbalance owns IRQs
    install(root, v2)
    second = run_script(root, lifecycle.APPLY)
    assert second.returncode == 0, second.stderr
    left = tree(root)
    v1_only = {a.path for a in v1} - {a.path for a in v2}
    assert v1_only and not (left & v1_only), left & v1_only
    assert {a.path for a in v2} - {lifecycle.NEW_MANIFEST} <= left
    assert "hostc-apply: removed /etc/modprobe.d/90-hostc.conf" in second.stdout
    # a blacklist unloads nothing: its removal waits for the next boot (R5); the other
    # build's kernel arguments and the manager's CPU affinity owe the reboot
    assert "reboot needed" in second.stdout and "kernel arguments" in second.stdout
    assert "module" not in second.stdout.split("reboot needed")[1].split("\n")[0]
    manifest = (root / lifecycle.MANIFEST.lstrip("/")).read_text()
    assert manifest == next(a for a in v2 if a.path == lifecycle.NEW_MANIFEST).text


def ignition_installed(plan: Plan) -> list[Artifact]:
    """The files an Ignition config writes, read back from the config itself."""
    doc = json.loads(api.emit(plan, ["ignition"])[0].text)
    return [Artifact("ignition", p, data, mode) for p, (mode, data) in ignition_files(doc).items()]


def test_a_delivery_after_ignition_removes_what_only_ignition_installed(
    tmp_path: Path,
) -> None:
    """Ignition never runs hostc-apply: its manifest is installed as current, so the next
    delivery (an Ansible push, a rootfs tree) knows what it replaces.  With the manifest
    left as manifest.new, the next delivery overwrote it and removed nothing."""
    root = tmp_path / "host"
    v1 = ignition_installed(plan_of(DGX))
    install(root, v1)
    assert (root / lifecycle.MANIFEST.lstrip("/")).is_file()
    assert not (root / lifecycle.NEW_MANIFEST.lstrip("/")).exists()
    recorded = {
        line.split()[2]
        for line in (root / lifecycle.MANIFEST.lstrip("/")).read_text().splitlines()
        if line.startswith("file ")
    }
    assert recorded == {a.path for a in v1} - {lifecycle.MANIFEST}  # no GRUB drop-in
    v2 = delivered(plan_of(KUBEADM))
    install(root, v2)
    done = run_script(root, lifecycle.APPLY)
    assert done.returncode == 0, done.stderr
    v1_only = {a.path for a in v1} - {a.path for a in v2} - {lifecycle.MANIFEST}
    assert v1_only and not (tree(root) & v1_only), tree(root) & v1_only
    assert "hostc-apply: removed /etc/modprobe.d/90-hostc.conf" in done.stdout


def test_revert_after_ignition_removes_every_file_and_kernel_argument_it_set(
    tmp_path: Path,
) -> None:
    """Ignition's kernelArguments have no file of hostc's to remove: the manifest lists
    them (`karg`), and revert takes them out with rpm-ostree (HOSTC_ROOT: says it would)."""
    root = tmp_path / "host"
    plan = plan_of(DGX)
    v1 = ignition_installed(plan)
    install(root, v1)
    done = run_script(root, lifecycle.REVERT)
    assert done.returncode == 0, done.stderr
    assert not tree(root), tree(root)
    args = " ".join(str(a) for a in kernel_args(plan))
    assert args and f"would remove the kernel arguments Ignition set: {args}\n" in done.stdout


def test_revert_of_a_build_without_kernel_arguments_names_none(tmp_path: Path) -> None:
    root = tmp_path / "host"
    install(root, delivered(plan_of(DGX)))
    assert run_script(root, lifecycle.APPLY).returncode == 0
    done = run_script(root, lifecycle.REVERT)
    assert done.returncode == 0 and "kernel arguments Ignition" not in done.stdout


def test_applying_the_same_build_twice_removes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "host"
    v1 = delivered(plan_of(DGX))
    for _ in range(2):
        install(root, v1)
        done = run_script(root, lifecycle.APPLY)
        assert done.returncode == 0 and "removed" not in done.stdout
    assert "applied; no reboot needed" in done.stdout


VM_V2 = ROOT / "tests" / "vm" / "v2.toml"  # a manifest that ends with a `file` line


@pytest.mark.parametrize("spec", [KUBEADM, VM_V2], ids=["kubelet", "no-kubelet"])
def test_revert_removes_every_file_hostc_installed_and_the_kubelet_checkpoints(
    spec: Path, tmp_path: Path
) -> None:
    root = tmp_path / "host"
    (root / "etc/default/grub.d").mkdir(parents=True)
    (root / "etc/default/grub.d/50-cloud.cfg").write_text("GRUB_TIMEOUT=1\n")
    (root / "etc/hostc").mkdir(parents=True)
    (root / "etc/hostc/kargs").write_text("nohz_full=2-3\n")  # grubby's state
    before = tree(root)
    install(root, delivered(plan_of(spec)))
    assert run_script(root, lifecycle.APPLY).returncode == 0
    for f in ("var/lib/kubelet/cpu_manager_state", "var/lib/kubelet/memory_manager_state"):
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("{}")
    done = run_script(root, lifecycle.REVERT)
    assert done.returncode == 0, done.stderr
    if spec == VM_V2:  # not hostc's checkpoints: the kubelet's own, kept
        before |= {"/var/lib/kubelet/cpu_manager_state", "/var/lib/kubelet/memory_manager_state"}
    assert tree(root) == before - {"/etc/hostc/kargs"}
    assert "removed hostc's kernel arguments from the boot entries (grubby)" in done.stdout


def test_revert_without_a_manifest_says_so_and_fails(tmp_path: Path) -> None:
    root = tmp_path / "host"
    arts = {a.path: a for a in delivered(plan_of(DGX))}
    install(root, [arts[lifecycle.REVERT]])
    done = run_script(root, lifecycle.REVERT)
    assert done.returncode == 1 and "nothing hostc installed is recorded" in done.stderr


@pytest.mark.parametrize("script", [lifecycle.APPLY, lifecycle.REVERT])
def test_lifecycle_scripts_pass_shellcheck(script: str, tmp_path: Path) -> None:
    tool = need_tool("shellcheck")
    for spec in (DGX, KUBEADM):
        art = next(a for a in delivered(plan_of(spec)) if a.path == script)
        path = tmp_path / "s.sh"
        path.write_bytes(art.data)
        done = subprocess.run(
            [tool, "-s", "sh", str(path)], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout


def test_a_changed_sysctl_applies_live_and_a_dropped_one_waits_for_the_next_boot(
    tmp_path: Path,
) -> None:
    """A sysctl whose value changes is applied by `sysctl --system`: no reboot is owed
    for it (the VM shows the value taken live).  One the next build no longer sets keeps
    its running value until the next boot, and hostc-apply names it (the manifests list
    the keys): hostc.delivery.disruption's `later`, the same rule."""
    vm = ROOT / "tests" / "vm"
    root = tmp_path / "host"
    install(root, delivered(plan_of(vm / "v1.toml")))
    assert run_script(root, lifecycle.APPLY).returncode == 0
    install(root, delivered(plan_of(vm / "v1-sysctl.toml")))
    done = run_script(root, lifecycle.APPLY)
    assert done.returncode == 0, done.stderr
    assert "applied; no reboot needed" in done.stdout
    assert "keeps its running value" not in done.stdout
    # v1-sysctl without busy_poll: the dropped key keeps its running value until the
    # next boot; nothing else changes, so no reboot subsumes it
    spec = tmp_path / "v1-dropped.toml"
    spec.write_text((vm / "v1.toml").read_text().replace('"net.core.busy_poll" = 50\n', ""))
    (tmp_path / "topology.toml").write_text((vm / "topology.toml").read_text())
    install(root, delivered(plan_of(spec)))
    done = run_script(root, lifecycle.APPLY)
    assert done.returncode == 0, done.stderr
    assert "applied; no reboot needed" in done.stdout, done.stdout
    later = [x for x in done.stdout.splitlines() if "until the next boot" in x]
    assert later == [
        "hostc-apply: later: net.core.busy_poll keeps its running value until the next boot"
    ], done.stdout
