"""An image built offline (issue 54 P1/P2): `DESTDIR=IMAGE sh apply.sh`, from the rootfs
tree or the unpacked rootfs.tar, installs the files and enables the units in the image,
as `systemctl enable` does on a running host; `systemctl --root=IMAGE is-enabled` sees
them.  Before issue 54 apply.sh enabled nothing under DESTDIR and rootfs.tar had no
apply.sh: both tests fail there.

Needs systemctl (apply.sh calls `systemctl --root`, and the test asks it): a failure
under CI=true (CI installs systemd), a skip with the reason elsewhere.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from hostc import api
from hostc.targets import rootfs

from conftest import EXAMPLE_NAMES, example_plan, need_tool
from delivery_read import host_files

#: a distribution unit the steps enable (irqbalance.service, tuned.service) as an
#: image that has its package holds it
DIST_UNIT = "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"


def _image(tmp: Path, units: list[str], carried: set[str]) -> Path:
    image = tmp / "image"
    dist = image / "usr/lib/systemd/system"
    dist.mkdir(parents=True)
    for unit in units:
        if f"/etc/systemd/system/{unit}" not in carried:
            (dist / unit).write_text(DIST_UNIT)
    return image


def _stage_tree(tmp: Path, name: str) -> Path:
    stage = tmp / "tree"
    for a in api.emit(example_plan(name), ["rootfs"]):
        p = stage / a.path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(a.data)
    return stage


def _stage_tar(tmp: Path, name: str) -> Path:
    (art,) = api.emit(example_plan(name), ["rootfs-tar"])
    stage = tmp / "tar"
    with tarfile.open(fileobj=io.BytesIO(art.data)) as tar:
        tar.extractall(stage, filter="data")
    return stage


@pytest.mark.parametrize("stage", [_stage_tree, _stage_tar], ids=["tree", "tar"])
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_destdir_install_enables_the_units_in_the_image(name, stage, tmp_path: Path) -> None:
    systemctl = need_tool("systemctl")
    plan = example_plan(name)
    files = host_files(plan)
    units = rootfs.enabled_units(files)
    assert units, "every example enables hostc-verify.service at least"
    image = _image(tmp_path, units, {a.path for a in files})
    script = stage(tmp_path, name) / "apply.sh"
    assert script.is_file(), "the tree and the tarball both carry apply.sh"
    env = {"DESTDIR": str(image), "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}
    run = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    for unit in units:
        state = subprocess.run(
            [systemctl, f"--root={image}", "is-enabled", unit], capture_output=True, text=True
        )
        assert state.stdout.strip() == "enabled", (unit, state.stdout, state.stderr)
    assert "steps were not run" in run.stderr
    # nothing enabled outside the image: the links are the image's, below DESTDIR
    wants = image / "etc/systemd/system/multi-user.target.wants"
    assert sorted(p.name for p in wants.iterdir()) == sorted(
        u for u in units if "multi-user.target" in _wanted_by(image, u)
    )


def _wanted_by(image: Path, unit: str) -> str:
    for d in ("etc/systemd/system", "usr/lib/systemd/system"):
        if (image / d / unit).is_file():
            return (image / d / unit).read_text()
    return ""


def test_destdir_without_the_image_unit_fails_naming_it(tmp_path: Path) -> None:
    """A unit the steps enable that the image lacks (its package not installed) is an
    error naming it, as `systemctl enable` fails on a running host."""
    need_tool("systemctl")
    name = next(
        n
        for n in EXAMPLE_NAMES
        if any(u == "irqbalance.service" for u in rootfs.enabled_units(host_files(example_plan(n))))
    )
    script = _stage_tree(tmp_path, name) / "apply.sh"
    env = {"DESTDIR": str(tmp_path / "bare"), "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}
    run = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env)
    assert run.returncode == 1 and "cannot enable irqbalance.service" in run.stderr, run.stderr
