"""cloud-init user-data: the real schema validator and the real cloud-init modules.

`cloud-init schema` over every example; `../shared/tools/cloud-init-apply` runs
cloud-init 22.4's own write_files and runcmd modules (in a private mount
namespace): every file it writes equals the file target's artifact byte for byte
and mode, and the runcmd script it makes is the apply sequence for the host's OS
family.  Under CI=true a missing tool fails (conftest.need_tool).
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from hostc import api
from hostc.artifact import Action, Activation, Artifact
from hostc.delivery.activation import Step, needs_reboot, steps
from hostc.targets import cloud_init

from conftest import EXAMPLE_NAMES, example_plan, need_tool, shared
from delivery_read import (
    as_files,
    build_cli,
    host_files,
    need_root,
    tree_files,
    user_data,
    user_data_files,
)

APPLY = "cloud-init-apply"  # the consumer\'s own harness, ../shared/tools/cloud-init-apply


def _user_data(name: str) -> tuple[api.Plan, str]:
    plan = example_plan(name)
    (art,) = api.emit(plan, ["cloud-init"])
    assert art.path == "user-data" and art.target == "cloud-init"
    return plan, art.text


def first_boot_steps(plan: api.Plan, files: list[Artifact]) -> list[Step]:
    """What runcmd runs: every step, or, when a reboot follows, none of the live ones."""
    return steps(files, plan.host.os_family, live=not needs_reboot(files))


def _schema(path: Path) -> subprocess.CompletedProcess[str]:
    exe = need_tool("cloud-init")
    return subprocess.run(
        [exe, "schema", "--config-file", str(path)], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_cli_user_data_passes_cloud_init_schema(name: str, tmp_path: Path) -> None:
    """The acceptance command: `hostc build … --target cloud-init > user-data`."""
    r = build_cli(name, "cloud-init")
    assert r.returncode == 0, r.stderr
    path = tmp_path / "user-data"
    path.write_bytes(r.stdout)
    assert r.stdout == _user_data(name)[1].encode()
    v = _schema(path)
    assert v.returncode == 0 and f"Valid cloud-config: {path}" in v.stdout, v.stdout + v.stderr


def test_cloud_init_schema_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "user-data"
    bad.write_text(
        "#cloud-config\nwrite_files:\n- path: /x\n  permissions: 0644\n  content: x\n"
        "power_state: {mode: restart}\n"
    )
    r = _schema(bad)
    assert r.returncode != 0 and "power_state.mode" in r.stdout + r.stderr


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_user_data_carries_every_file_and_step(name: str) -> None:
    plan, text = _user_data(name)
    files = host_files(plan)
    doc = user_data(text)
    assert user_data_files(doc) == as_files(files)
    keys = ("merge_how", "packages", "write_files", "runcmd", "power_state")
    assert list(doc) == [k for k in keys if k in doc]
    want = [list(s.command) for s in first_boot_steps(plan, files)]
    assert doc.get("runcmd", []) == want
    assert all("reboot" not in argv and "shutdown" not in argv for argv in want)
    if needs_reboot(files):
        ps = doc["power_state"]
        assert ps["mode"] == "reboot" and ps["condition"] is True
    else:
        assert "power_state" not in doc
    assert "&id" not in text and "*id" not in text, "no YAML anchors or aliases"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_real_cloud_init_writes_the_files_and_the_runcmd(name: str, tmp_path: Path) -> None:
    need_tool("cloud-init")
    need_root()
    plan, text = _user_data(name)
    ud = tmp_path / "user-data"
    ud.write_text(text)
    out = tmp_path / "out"
    r = subprocess.run(
        [str(shared("tools", APPLY)), str(ud), str(out), "write_files", "runcmd"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    files = host_files(plan)
    assert tree_files(out, skip=("/var/lib/cloud/",)) == as_files(files)
    (script,) = list(out.glob("var/lib/cloud/instances/*/scripts/runcmd"))
    lines = script.read_text().splitlines()
    assert lines[0] == "#!/bin/sh"
    assert [shlex.split(ln) for ln in lines[1:]] == [
        list(s.command) for s in first_boot_steps(plan, files)
    ]


ODD: dict[str, tuple[bytes, int]] = {
    "/etc/hostc/no-newline": (b"last line without newline", 0o640),
    "/etc/hostc/blank-tail": (b"a\n\n\n", 0o600),
    "/etc/hostc/lead": (b"  indented first line\nx\n", 0o644),
    "/etc/hostc/trailing": (b"spaces   \n\ttab\n", 0o644),
    "/etc/hostc/bin": (b"\x00\xff\xfe\r\n", 0o755),
    "/etc/hostc/crlf": (b"dos\r\nline\r\n", 0o644),
    "/etc/hostc/yaml": (b"key: 'v'\n- [a, b] # c\n&x *y !z\n---\n", 0o644),
    "/etc/hostc/utf8": ("ünïcödé → ✓\n".encode(), 0o644),
    "/etc/hostc/empty": (b"", 0o644),
}


def _odd_files() -> list[Artifact]:
    run = (Activation(Action.RUN),)
    return [Artifact("x", p, data, mode, activation=run) for p, (data, mode) in ODD.items()]


def test_awkward_contents_survive_byte_for_byte(tmp_path: Path) -> None:
    """Trailing newlines, leading spaces, CRLF, binary, YAML syntax: exact, by the real tool."""
    plan = example_plan(EXAMPLE_NAMES[0])
    files = _odd_files()
    text = cloud_init.user_data(plan, files)
    doc = user_data(text)
    assert user_data_files(doc) == as_files(files)
    entries = {e["path"]: e for e in doc["write_files"]}
    assert "encoding" not in entries["/etc/hostc/no-newline"]  # readable where exact
    assert "encoding" not in entries["/etc/hostc/utf8"]
    assert entries["/etc/hostc/bin"]["encoding"] == "b64"
    assert "  content: |" in text
    path = tmp_path / "user-data"
    path.write_text(text)
    v = _schema(path)
    assert v.returncode == 0, v.stdout + v.stderr
    need_root()
    out = tmp_path / "out"
    r = subprocess.run(
        [str(shared("tools", APPLY)), str(path), str(out), "write_files"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert tree_files(out, skip=("/var/lib/cloud/",)) == as_files(files)
