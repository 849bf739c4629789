"""Ignition config: ignition-validate (warnings fail too) and the real Ignition binary.

`../shared/tools/ignition-apply` runs Ignition's fetch-offline, files and kargs
stages into a directory: every carried file lands with its bytes and mode, and
ROOT/.kargs records exactly the Plan's kernel arguments.  The GRUB drop-in
(Action.BOOTLOADER) is not carried: Ignition has kernelArguments.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from hostc import api
from hostc.artifact import Action, Activation, Artifact
from hostc.plan.kernelargs import kernel_args
from hostc.targets import ignition

from conftest import EXAMPLE_NAMES, example_plan, need_tool, shared
from delivery_read import (
    as_files,
    build_cli,
    host_files,
    ignition_expected,
    ignition_files,
    need_root,
    tree_files,
)

APPLY = "ignition-apply"  # the consumer\'s own harness, ../shared/tools/ignition-apply
#: what Ignition itself writes besides the config's files
IGNITION_OWN = (
    "/etc/.ignition-result.json",
    "/etc/systemd/system-preset/20-ignition.preset",
    "/.kargs",
)


def _carried(plan: api.Plan) -> list[Artifact]:
    """The host files Ignition carries (`ignition_expected`), plus the TuneD profile
    selection it writes in place of `tuned-adm profile` (it runs no command)."""
    files = ignition_expected(plan, host_files(plan))
    return files + ignition.tuned_selection(files)


def _validate(path: Path) -> subprocess.CompletedProcess[str]:
    exe = need_tool("ignition-validate")
    return subprocess.run([exe, str(path)], capture_output=True, text=True, timeout=120)


def _apply(cfg: Path, root: Path) -> None:
    argv = [str(shared("tools", APPLY)), str(cfg), str(root)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def _kargs(root: Path) -> list[str]:
    """What the kargs stage asked the helper for: the --should-exist arguments, in order."""
    path = root / ".kargs"
    if not path.exists():
        return []
    out: list[str] = []
    for line in path.read_text().splitlines():
        words = shlex.split(line)
        for flag, value in zip(words[::2], words[1::2], strict=True):
            assert flag == "--should-exist", line
            out.append(value)
    return out


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_cli_config_passes_ignition_validate(name: str, tmp_path: Path) -> None:
    r = build_cli(name, "ignition")
    assert r.returncode == 0, r.stderr
    path = tmp_path / "config.ign"
    path.write_bytes(r.stdout)
    v = _validate(path)
    assert v.returncode == 0 and v.stdout + v.stderr == "", v.stdout + v.stderr


def test_ignition_validate_can_fail(tmp_path: Path) -> None:
    """A warning alone (kernelArguments before 3.3.0) must fail the test as well."""
    path = tmp_path / "config.ign"
    path.write_text(
        json.dumps({"ignition": {"version": "3.2.0"}, "kernelArguments": {"shouldExist": ["a"]}})
    )
    v = _validate(path)
    assert v.stdout + v.stderr != ""
    path.write_text(json.dumps({"ignition": {"version": "3.3.0"}, "storage": {"files": [
        {"path": "/x", "mode": "0644"}]}}))  # fmt: skip
    assert _validate(path).returncode != 0


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_config_carries_files_and_kargs(name: str) -> None:
    plan = example_plan(name)
    (art,) = api.emit(plan, ["ignition"])
    assert art.path == "config.ign" and art.text.endswith("}\n")
    doc = json.loads(art.text)
    assert doc["ignition"] == {"version": "3.3.0"}
    assert ignition_files(doc) == as_files(_carried(plan))
    want = [str(a) for a in kernel_args(plan)]
    assert doc.get("kernelArguments", {}).get("shouldExist", []) == want
    assert "shouldNotExist" not in doc.get("kernelArguments", {})
    assert not any("grub" in p for p in ignition_files(doc))


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_real_ignition_writes_files_and_kargs(name: str, tmp_path: Path) -> None:
    need_tool("ignition-validate")
    need_root()
    plan = example_plan(name)
    (art,) = api.emit(plan, ["ignition"])
    cfg = tmp_path / "config.ign"
    cfg.write_bytes(art.data)
    root = tmp_path / "root"
    _apply(cfg, root)
    assert tree_files(root, skip=IGNITION_OWN) == as_files(_carried(plan))
    assert _kargs(root) == [str(a) for a in kernel_args(plan)]


def test_units_dropins_enable_and_awkward_bytes(tmp_path: Path) -> None:
    """Units and drop-ins go to systemd.units, ENABLE sets `enabled`; any bytes survive."""
    plan = example_plan(EXAMPLE_NAMES[0])
    unit = "[Unit]\nDescription=t\n[Service]\nType=oneshot\nExecStart=/bin/true\n"
    unit += "[Install]\nWantedBy=multi-user.target\n"
    run = (Activation(Action.RUN),)
    enable = (Activation(Action.DAEMON_RELOAD), Activation(Action.ENABLE, "hostc-t.service"))
    restart = (Activation(Action.RESTART, "irqbalance.service"),)
    boot = (Activation(Action.BOOTLOADER),)
    dropin = "/etc/systemd/system/irqbalance.service.d/10-hostc.conf"
    files = [
        Artifact("x", "/etc/systemd/system/hostc-t.service", unit.encode(), activation=enable),
        Artifact("x", dropin, b"[Service]\nEnvironment=A=1\n", activation=restart),
        Artifact("x", "/etc/hostc/bin", b"\x00\xff%#?+ \r\n", 0o600, activation=run),
        Artifact("x", "/etc/hostc/text", "a b%c#d?e+f ü\n\n".encode(), 0o640, activation=run),
        Artifact("x", "/etc/default/grub.d/x.cfg", b"G=1\n", activation=boot),
    ]
    doc = ignition.config(plan, files)
    units = {u["name"]: u for u in doc["systemd"]["units"]}  # type: ignore[index]
    assert units["hostc-t.service"]["enabled"] is True
    assert "enabled" not in units["irqbalance.service"]
    assert ignition_files(doc) == as_files(files[:4])
    path = tmp_path / "config.ign"
    path.write_text(json.dumps(doc))
    v = _validate(path)
    assert v.returncode == 0 and v.stdout + v.stderr == "", v.stdout + v.stderr
    need_root()
    root = tmp_path / "root"
    _apply(path, root)
    assert tree_files(root, skip=IGNITION_OWN) == as_files(files[:4])
    preset = (root / "etc/systemd/system-preset/20-ignition.preset").read_text()
    assert "enable hostc-t.service" in preset
