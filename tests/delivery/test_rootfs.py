"""rootfs tree, apply.sh and rootfs.tar: the same host files, byte for byte and mode.

The tarball is byte-reproducible (two builds, any artifact order, any filesystem);
apply.sh passes shellcheck, installs every file as root:root with its mode (run
for real under DESTDIR) and spells exactly the apply steps of `hostc.delivery.activation`.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import shlex
import subprocess
import tarfile
from pathlib import Path

import pytest

from hostc import api
from hostc.artifact import ArtifactKind
from hostc.delivery.activation import needs_reboot, steps
from hostc.delivery.owned import RECORD
from hostc.targets import rootfs, rootfs_tar

from conftest import EXAMPLE_NAMES, ROOT, example_plan, need_tool
from delivery_read import as_files, host_files, hostc_cli, need_root, tar_files, tree_files


def _spec(name: str) -> str:
    return str(ROOT / "examples" / name / "node.toml")


_hostc = hostc_cli


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_rootfs_tree_is_every_host_file(name: str, tmp_path: Path) -> None:
    plan = example_plan(name)
    files = host_files(plan)
    arts = api.emit(plan, ["rootfs"])
    tree = [a for a in arts if a.kind is ArtifactKind.FILE]
    assert [(a.path, a.mode, a.data, a.activation) for a in tree] == [
        (a.path, a.mode, a.data, a.activation) for a in files
    ]
    assert {a.target for a in arts} == {"rootfs"}
    assert [a.path for a in arts if a.kind is ArtifactKind.DELIVERABLE] == ["apply.sh"]
    r = _hostc(
        "build", str(ROOT / "examples" / name / "node.toml"), "-t", "rootfs", "--out", str(tmp_path)
    )
    assert r.returncode == 0, r.stderr
    assert tree_files(tmp_path / "rootfs", skip=("/apply.sh",)) == as_files(files)
    assert (tmp_path / "rootfs" / "apply.sh").stat().st_mode & 0o777 == 0o755


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_tarball_holds_the_same_files(name: str) -> None:
    plan = example_plan(name)
    (art,) = api.emit(plan, ["rootfs-tar"])
    assert art.path == "rootfs.tar"
    files, dirs = tar_files(art.data)
    # the rootfs target's tree: the host files and apply.sh at its top (issue 54, P1)
    (script,) = [a for a in api.emit(plan, ["rootfs"]) if a.path == "apply.sh"]
    assert files == as_files(host_files(plan)) | {"/apply.sh": (0o755, script.data)}
    parents = {str(Path(p).parent) for p in files}
    want = {p for f in parents for p in [f, *map(str, Path(f).parents)] if p != "/"}
    assert dirs == dict.fromkeys(want, 0o755)
    with tarfile.open(fileobj=io.BytesIO(art.data)) as tar:
        names = tar.getnames()
    assert names == sorted(names)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_tarball_is_reproducible(name: str, tmp_path: Path) -> None:
    """Two CLI builds (stdout and --out) give the same bytes; input order does not matter."""
    spec = str(ROOT / "examples" / name / "node.toml")
    a = _hostc("build", spec, "-t", "rootfs-tar")
    b = _hostc("build", spec, "-t", "rootfs-tar", "--out", str(tmp_path))
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert a.stdout == (tmp_path / "rootfs-tar" / "rootfs.tar").read_bytes()
    plan = example_plan(name)
    files = host_files(plan)
    rng = random.Random(name)
    for _ in range(5):
        shuffled = files[:]
        rng.shuffle(shuffled)
        apply = rootfs_tar.tree(plan, files)[-1]  # apply.sh, in the build's file order
        assert rootfs_tar.tarball([*shuffled, apply]) == a.stdout


def test_tarball_does_not_follow_the_filesystem(tmp_path: Path) -> None:
    """Built from the artifacts, never from a directory: umask, mtime, owner do not leak."""
    files = host_files(example_plan(EXAMPLE_NAMES[0]))
    before = rootfs_tar.tarball(files)
    for a in files:
        p = tmp_path / a.relpath
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(a.data)
        p.chmod(0o600)
    assert rootfs_tar.tarball(list(reversed(files))) == before


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_apply_script_passes_shellcheck(name: str, tmp_path: Path) -> None:
    exe = need_tool("shellcheck")
    (art,) = [a for a in api.emit(example_plan(name), ["rootfs"]) if a.path == "apply.sh"]
    path = tmp_path / "apply.sh"
    path.write_bytes(art.data)
    r = subprocess.run(
        [exe, "--shell=sh", "--severity=style", str(path)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_shellcheck_can_fail(tmp_path: Path) -> None:
    exe = need_tool("shellcheck")
    path = tmp_path / "bad.sh"
    path.write_text("#!/bin/sh\nset -eu\nsrc=$(dirname $0)\ncp $src/x /etc/x\n")
    assert subprocess.run([exe, str(path)], capture_output=True).returncode != 0


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_apply_script_spells_the_apply_steps(name: str) -> None:
    plan = example_plan(name)
    files = host_files(plan)
    (art,) = [a for a in api.emit(plan, ["rootfs"]) if a.path == "apply.sh"]
    lines = [ln for ln in art.text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert lines[0] == "set -eu"
    installs = [shlex.split(ln) for ln in lines if ln.startswith("put ")]
    assert [(w[1], w[2]) for w in installs] == [(f"{a.mode:04o}", a.path) for a in files]
    # the steps follow the DESTDIR guard's `fi`; a live step carries `|| { … }`, and the
    # closing `if [ -n "$hostc_failed" ] … fi` reports them
    guard = next((i for i, ln in enumerate(lines) if "DESTDIR is set" in ln), None)
    after = lines[lines.index("fi", guard) + 1 :] if guard is not None else []
    skip = ("echo ", "hostc_failed", "}", 'if [ -n "$hostc_failed" ]', "exit 1", "fi")
    commands = [
        shlex.split(ln.removesuffix(" || {")) for ln in after if not ln.lstrip().startswith(skip)
    ]
    wanted = steps(files, plan.host.os_family)
    assert commands == [list(s.command) for s in wanted]
    live = [shlex.split(ln.removesuffix(" || {")) for ln in after if ln.endswith(" || {")]
    assert live == [list(s.command) for s in wanted if s.live]
    # with steps, hostc-apply (the last) says whether a reboot is owed, and for which
    # files, from the two manifests: a static line would say it on every re-run
    assert ("reboot to apply" in art.text) == (needs_reboot(files) and not wanted)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_apply_script_installs_the_tree(name: str, tmp_path: Path) -> None:
    """Run for real with DESTDIR: files land root:root with their modes; no step runs."""
    need_root()
    plan = example_plan(name)
    out = tmp_path / "out"
    r = _hostc(
        "build", str(ROOT / "examples" / name / "node.toml"), "-t", "rootfs", "--out", str(out)
    )
    assert r.returncode == 0, r.stderr
    dest = tmp_path / "image"
    script = out / "rootfs" / "apply.sh"
    env = {"DESTDIR": str(dest), "PATH": "/usr/bin:/bin"}
    if rootfs.enabled_units(host_files(plan)):
        need_tool("systemctl")  # under DESTDIR it enables the units in the image
    # the distribution's units the steps enable (irqbalance, tuned), as the image has them
    dist = dest / "usr/lib/systemd/system"
    dist.mkdir(parents=True)
    for unit in rootfs.enabled_units(host_files(plan)):
        if not any(a.path.endswith("/" + unit) for a in host_files(plan)):
            (dist / unit).write_text(
                "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
            )
    for _ in range(2):  # safe to run twice
        run = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env)
        assert run.returncode == 0, run.stderr
    found = {
        p: f
        for p, f in tree_files(dest).items()
        if not p.startswith(("/usr/lib/systemd/", "/etc/systemd/system/multi-user.target.wants/"))
    }
    assert found == as_files(host_files(plan))
    assert all(p.lstat().st_uid == 0 and p.lstat().st_gid == 0 for p in dest.rglob("*"))
    if steps(host_files(plan), plan.host.os_family):
        assert "steps were not run" in run.stderr


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_json_manifest_lists_apply_steps_and_reboot(name: str, tmp_path: Path) -> None:
    """`--json` rows match the files `--out` wrote; apply/reboot come from delivery.activation."""
    spec = _spec(name)
    out = tmp_path / name
    r = _hostc("build", spec, "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    plan = example_plan(name)
    arts = api.emit(plan, ["all"])
    files = [a for a in arts if a.kind is ArtifactKind.FILE]
    assert doc["apply"] == [
        {"argv": list(s.command), "why": s.why, "live": s.live, "package": s.package}
        for s in steps(files, plan.host.os_family)
    ]
    assert doc["reboot"] is needs_reboot(files)
    written = {p for p in out.rglob("*") if p.is_file() and p != out / RECORD}
    assert {Path(row["written"]) for row in doc["artifacts"]} == written
    for row in doc["artifacts"]:
        p = Path(row["written"])
        assert f"{p.stat().st_mode & 0o7777:04o}" == row["mode"]
        assert hashlib.sha256(p.read_bytes()).hexdigest() == row["sha256"]
    r2 = _hostc("build", spec, "--json", "-t", "cloud-init")
    doc2 = json.loads(r2.stdout)
    assert doc2["apply"] == [] and doc2["reboot"] is False  # no host file in the selection


def test_a_failed_live_step_still_regenerates_the_boot_configuration(tmp_path: Path) -> None:
    """hostc-tuning exits non-zero when the kernel refuses a write; apply.sh must still
    run the steps after it (update-grub among them) and report the failure at the end."""
    script = next(
        a for a in api.emit(example_plan("dgx-h100-inference"), ["rootfs"]) if a.path == "apply.sh"
    ).data.decode()
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "calls"
    for cmd in ("install", "systemctl", "sysctl", "update-initramfs", "update-grub", "apply"):
        fail = (
            'case "$*" in *"restart hostc-tuning"*) exit 1 ;; esac\n' if cmd == "systemctl" else ""
        )
        (stubs / cmd).write_text(f'#!/bin/sh\necho "{cmd} $*" >> "{log}"\n{fail}exit 0\n')
        (stubs / cmd).chmod(0o755)
    # hostc-apply: runs the command after `--` of a guarded step (a first apply: every
    # file is new), records the build when called alone
    (stubs / "apply").write_text(
        f'#!/bin/sh\n[ $# -gt 0 ] || {{ echo "apply" >> "{log}"; exit 0; }}\n'
        'while [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n'
    )
    script = script.replace("/usr/local/sbin/hostc-apply", str(stubs / "apply"))
    # no DESTDIR (the steps run only on a live host): each file goes to the `install`
    # stub instead of hostc_put, which would write this machine's /etc
    put = '    hostc_put "${DESTDIR:-}" "$2" "$1" "$src$2"\n'
    assert script.count(put) == 1
    script = script.replace(put, '    install "$1" "$2"\n    hostc_changed=yes\n')
    done = subprocess.run(
        ["sh", "-c", script],
        env={"PATH": f"{stubs}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    calls = log.read_text().splitlines()
    assert done.returncode == 1, done.stderr
    assert "systemctl restart hostc-tuning.service" in calls
    assert [c.strip() for c in calls[-2:]] == ["update-grub", "apply"], calls[-3:]
    assert "failed: systemctl restart hostc-tuning.service" in done.stderr
