"""How the wrappers make the files take effect: cloud-init's merging and first boot,
the initramfs of every kernel, TuneD installed and running when it owns the runtime,
irqbalance enabled when it owns interrupts.  The activation steps are data
(`hostc.delivery.activation`); these tests read them through the real outputs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hostc import api
from hostc.artifact import Action, Activation, Artifact, ArtifactKind
from hostc.delivery.activation import needs_reboot, steps
from hostc.plan.model import OsFamily, Plan
from hostc.targets import cloud_init
from hostc.targets.lifecycle import APPLY

from conftest import EXAMPLE_NAMES, ROOT, example_plan, need_tool
from delivery_read import host_files, user_data

#: steps that only make the running system take a file now
LIVE = (["systemctl", "daemon-reexec"], ["sysctl", "--system"])


def _doc(plan: Plan) -> dict[str, object]:
    (art,) = api.emit(plan, ["cloud-init"])
    doc: dict[str, object] = user_data(art.text)
    return doc


def _commands(run: list[list[str]]) -> list[list[str]]:
    """The runcmd's commands without hostc-apply's guard (`hostc-apply --changed FILE…
    -- COMMAND`: COMMAND only when a FILE changed)."""
    return [argv[argv.index("--") + 1 :] if argv[0] == APPLY and "--" in argv else argv
            for argv in run]  # fmt: skip


def _apply_sh(plan: Plan) -> str:
    (art,) = [a for a in api.emit(plan, ["rootfs"]) if a.path == "apply.sh"]
    return art.text


# --- cloud-init: hostc's part appends to vendor and base parts ----------------------


def test_user_data_declares_how_it_merges_with_other_parts() -> None:
    doc = _doc(example_plan("h100-4gpu-inference"))
    assert doc["merge_how"] == [
        {"name": "list", "settings": ["append"]},
        {"name": "dict", "settings": ["no_replace", "recurse_list"]},
    ]


def test_real_cloud_init_merger_keeps_a_vendor_runcmd_and_files(tmp_path: Path) -> None:
    """cloud-init's own mergers (the system's cloud-init package): with hostc's merge_how
    the vendor's runcmd and write_files survive and hostc's follow them."""
    python = Path("/usr/bin/python3")
    probe = subprocess.run([str(python), "-c", "import cloudinit.mergers"], check=False)
    if probe.returncode != 0:
        need_tool("cloud-init-mergers-for-python3")  # skips locally, fails under CI
    (art,) = api.emit(example_plan("h100-4gpu-inference"), ["cloud-init"])
    ud = tmp_path / "user-data"
    ud.write_text(art.text)
    script = """
import importlib.util, json, sys, yaml
from cloudinit import mergers
doc = yaml.safe_load(open(sys.argv[1]))
vendor = {"runcmd": [["echo", "vendor"]], "write_files": [{"path": "/etc/vendor"}]}
merged = mergers.construct(mergers.dict_extract_mergers(doc)).merge(vendor, doc)
print(json.dumps([merged["runcmd"][0], merged["write_files"][0]["path"], len(merged["runcmd"])]))
"""
    r = subprocess.run(
        [str(python), "-c", script, str(ud)], capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stderr
    first, first_file, count = __import__("json").loads(r.stdout)
    assert first == ["echo", "vendor"] and first_file == "/etc/vendor"
    assert count == 1 + len(user_data(art.text)["runcmd"])


# --- first boot: files and boot configuration, then one reboot ----------------------


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_first_boot_that_reboots_runs_no_live_steps(name: str) -> None:
    plan = example_plan(name)
    doc = _doc(plan)
    assert "power_state" in doc  # every example changes the kernel command line
    run = doc.get("runcmd", [])
    assert isinstance(run, list)
    for argv in run:
        assert argv not in LIVE, argv
        assert argv[:2] not in (["systemctl", "restart"], ["systemctl", "try-restart"]), argv


def test_without_a_reboot_the_user_data_activates_live() -> None:
    plan = example_plan("h100-4gpu-inference")
    files = [
        a
        for a in host_files(plan)
        if a.kind is ArtifactKind.FILE and not any(x.action is Action.REBOOT for x in a.activation)
    ]
    assert not needs_reboot(files)
    doc = user_data(cloud_init.user_data(plan, files))
    run = _commands(doc["runcmd"])
    assert ["sysctl", "--system"] in run
    assert ["systemctl", "restart", "hostc-tuning.service"] in run
    assert "power_state" not in doc


@pytest.mark.parametrize(
    ("family", "want"),
    [
        (OsFamily.DEBIAN, ["update-initramfs", "-u", "-k", "all"]),
        (OsFamily.RHEL, ["dracut", "-f", "--regenerate-all"]),
    ],
)
def test_initramfs_is_rebuilt_for_every_installed_kernel(family: OsFamily, want: list[str]) -> None:
    art = Artifact(
        "modprobe", "/etc/modprobe.d/x.conf", b"", activation=(Activation(Action.INITRAMFS),)
    )
    assert [list(s.argv) for s in steps([art], family)] == [want]


# --- TuneD owns the runtime: installed, running, then the profile --------------------


def test_tuned_owner_installs_and_starts_tuned_before_selecting_the_profile() -> None:
    plan = example_plan("epyc-1s-training")
    doc = _doc(plan)
    assert doc["packages"] == ["tuned"]
    run = _commands(doc["runcmd"])
    assert isinstance(run, list)
    start = run.index(["systemctl", "enable", "--now", "--no-reload", "tuned.service"])
    assert start < run.index(["tuned-adm", "profile", "hostc"])


def test_apply_sh_refuses_before_installing_anything_without_tuned_adm(tmp_path: Path) -> None:
    """PATH holds only what the guard needs (no tuned-adm, no install): if the guard did
    not stop it, the script would die on `install`, not on the guard's message."""
    need_tool("sh")
    script = tmp_path / "apply.sh"
    script.write_text(_apply_sh(example_plan("epyc-1s-training")))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname",):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    env = {k: v for k, v in os.environ.items() if k != "DESTDIR"} | {"PATH": str(bin_dir)}
    sh = shutil.which("sh")
    assert sh is not None
    r = subprocess.run([sh, str(script)], capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "tuned-adm is missing: install the tuned package first" in r.stderr
    assert "nothing was changed" in r.stderr


def test_apply_sh_without_tuned_needs_no_tuned_adm() -> None:
    assert "tuned-adm" not in _apply_sh(example_plan("h100-4gpu-inference"))


# --- irqbalance owns interrupts: enabled and started, whatever was there before ------


def test_irqbalance_owner_enables_and_starts_irqbalance() -> None:
    text = _apply_sh(example_plan("h100-4gpu-inference"))
    assert "\nsystemctl enable --no-reload irqbalance.service\n" in text
    guard = f"{APPLY} --restart /etc/systemd/system/irqbalance.service.d/90-hostc.conf --"
    assert f"\n{guard} systemctl restart irqbalance.service || {{\n" in text  # a live step
    assert "try-restart irqbalance" not in text
    doc = _doc(example_plan("h100-4gpu-inference"))  # first boot: enabled for the next boot
    assert ["systemctl", "enable", "--no-reload", "irqbalance.service"] in doc["runcmd"]  # type: ignore[operator]


def test_a_preset_that_disabled_irqbalance_is_removed_unless_rewritten(tmp_path: Path) -> None:
    preset = "/etc/systemd/system-preset/90-hostc.preset"
    plan = example_plan("h100-4gpu-inference")
    assert f"\nrm -f -- {preset}\n" in _apply_sh(plan)
    # a build that disables other services writes its own preset: nothing to remove
    src = ROOT / "examples/h100-4gpu-inference"
    shutil.copy(src / "topology.toml", tmp_path / "topology.toml")
    text = (src / "node.toml").read_text() + '\n[services]\ndisable = ["cups.service"]\n'
    (tmp_path / "node.toml").write_text(text)
    with_preset, _ = api.compile_file(tmp_path / "node.toml")
    script = _apply_sh(with_preset)
    assert f"rm -f -- {preset}" not in script
    assert preset in script  # installed instead


def test_ignition_selects_the_tuned_profile_and_enables_tuned() -> None:
    """Ignition runs no tuned-adm: it writes what tuned-adm would, for TuneD's start."""
    import json

    (art,) = api.emit(example_plan("epyc-1s-training"), ["ignition"])
    doc = json.loads(art.text)
    files = {f["path"]: f["contents"]["source"] for f in doc["storage"]["files"]}
    assert files["/etc/tuned/active_profile"] == "data:,hostc%0A"
    assert files["/etc/tuned/profile_mode"] == "data:,manual%0A"
    units = {u["name"]: u for u in doc["systemd"]["units"]}
    assert units["tuned.service"]["enabled"] is True


def test_json_manifest_marks_live_steps_and_needed_packages() -> None:
    """A provisioning pipeline follows the same first-boot rule as cloud-init."""
    from hostc.delivery.manifest import apply_manifest

    plan = example_plan("epyc-1s-training")
    rows = apply_manifest(host_files(plan), plan.host.os_family)["apply"]
    assert isinstance(rows, list)
    by_argv = {tuple(_commands([r["argv"]])[0]): r for r in rows}
    assert by_argv[("sysctl", "--system")]["live"] is True
    assert by_argv[("tuned-adm", "profile", "hostc")] == {
        "argv": [
            APPLY,
            "--changed",
            "/etc/tuned/hostc/tuned.conf",
            "--",
            "tuned-adm",
            "profile",
            "hostc",
        ],
        "why": "TuneD applies profile hostc",
        "live": False,
        "package": "tuned",
    }


# --- Debian's tuned lacks the perf module its [scheduler] and [irqbalance] import ------


def _debian_tuned() -> Plan:
    """tests/vm/tuned.toml: Debian 12, TuneD owner, isolated CPUs, irqbalance banned."""
    return api.compile_file(ROOT / "tests" / "vm" / "tuned.toml")[0]


def test_debian_tuned_owner_installs_linux_perf_and_checks_perf_before_the_profile() -> None:
    """Found in a booted Debian 12 VM (tests/vm/test_vm_tuned.py): without linux-perf TuneD
    2.20 logs "failed to initialize plugin scheduler" (and irqbalance), leaves
    isolated_cores and banned_cpus unapplied, and `tuned-adm verify` still succeeds."""
    doc = _doc(_debian_tuned())
    assert doc["packages"] == ["linux-perf", "tuned"]
    run = _commands(doc["runcmd"])
    assert isinstance(run, list)
    assert run.index(["python3", "-c", "import perf"]) < run.index(
        ["tuned-adm", "profile", "hostc"]
    )


def test_apply_sh_refuses_before_installing_anything_without_the_perf_module(
    tmp_path: Path,
) -> None:
    need_tool("sh")
    script = tmp_path / "apply.sh"
    script.write_text(_apply_sh(_debian_tuned()))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    dirname = shutil.which("dirname")
    assert dirname is not None
    (bin_dir / "dirname").symlink_to(dirname)
    (bin_dir / "tuned-adm").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "python3").write_text("#!/bin/sh\nexit 1\n")  # `import perf` fails
    for stub in ("tuned-adm", "python3"):
        (bin_dir / stub).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "DESTDIR"} | {"PATH": str(bin_dir)}
    sh = shutil.which("sh")
    assert sh is not None
    r = subprocess.run([sh, str(script)], capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert (
        "the perf Python module is missing: install the linux-perf package first "
        "(apt-get install linux-perf); nothing was changed"
    ) in r.stderr


def test_a_tuned_owner_outside_debian_needs_no_linux_perf() -> None:
    doc = _doc(example_plan("epyc-1s-training"))  # Ubuntu: not verified, so nothing is added
    assert doc["packages"] == ["tuned"]
