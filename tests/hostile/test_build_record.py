"""A build record (`OUT/.hostc-build.json`) is read back by `build --out`, `hostc changed`
and every fleet build (issue 51 item 5a): a record hostc did not write, however it is
made (brackets nested past any parser, a field of another type, bytes that are not
UTF-8), is one clear error naming it where the command needs it, and a warning naming
it where it only tells a former host's folder apart; never an internal error (exit 3).

- `build --out` (one host, or a host of a fleet) needs it: it says which stale files
  are hostc's to remove.  Ignored, hostc would forget them; overwritten, it would claim
  what it never wrote.  Exit 2 before anything is written.
- `hostc changed` compares with it and has nothing else: exit 2.
- a fleet build reads the records of folders that are none of its hosts, only to find
  a former host's folder: a foreign record is a warning, the folder left alone (never
  pruned), and the hosts are built."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hostc.cli.main import run

from conftest import ROOT

RECORD = ".hostc-build.json"
EXAMPLE = ROOT / "examples" / "h100-4gpu-inference"


def _hostc(*args: str | Path, cwd: Path) -> tuple[int, str, str]:
    """`hostc ARGS` in this process (as the CLI runs it): exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    here = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run([str(a) for a in args])
    finally:
        os.chdir(here)
    return code, out.getvalue(), err.getvalue()


def _spec(tmp: Path, name: str = "node") -> Path:
    (tmp / "topology.toml").write_text((EXAMPLE / "topology.toml").read_text())
    text = (EXAMPLE / "node.toml").read_text()
    spec = tmp / f"{name}.toml"
    spec.write_text(text.replace('"topology.toml"', f'"{tmp / "topology.toml"}"'))
    return spec


def _row(doc: dict[str, Any], key: str, value: object) -> dict[str, Any]:
    doc["files"][0][key] = value
    return doc


def _other(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc["files"][0], "path": "ignition/config\udcff.ign", "host_path": "/\udcff"}


def _set(key: str, value: object) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda doc: {**doc, key: value}


#: a record hostc wrote, made into one it did not: id → the change (text: the whole file)
FOREIGN: dict[str, Callable[[dict[str, Any]], dict[str, Any]] | bytes] = {
    "brackets nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "brackets nested in a row": b'{"hostc_build": 1, "files": [' + b"[" * 50_000 + b"]" * 50_000,
    "files is a number": _set("files", 3),
    "a row is a string": _set("files", ["sysctl/x"]),
    "sha256 is a number": lambda doc: _row(doc, "sha256", 5),
    "activation is a string": lambda doc: _row(doc, "activation", "x"),
    "activation holds a table": lambda doc: _row(doc, "activation", [{"restart": 1}]),
    "mode is a number": lambda doc: _row(doc, "mode", 420),
    "fleet is a string": _set("fleet", "yes"),
    "hostc_build is true": _set("hostc_build", True),
    "facts is a list": _set("facts", []),
    # a file of a target this build does not own is carried into the next record as is
    "a lone surrogate escape": lambda doc: _set("files", [*doc["files"], _other(doc)])(doc),
    "not UTF-8": b'{"hostc_build": 1, "\xff": []}',
}


def _plant(out: Path, how: Callable[[dict[str, Any]], dict[str, Any]] | bytes) -> bytes:
    if isinstance(how, bytes):
        data = how
    else:
        data = json.dumps(how(json.loads((out / RECORD).read_text()))).encode()
    (out / RECORD).write_bytes(data)
    return data


def _files(top: Path) -> dict[str, bytes]:
    return {str(p.relative_to(top)): p.read_bytes() for p in top.rglob("*") if p.is_file()}


@pytest.mark.parametrize("command", ["build", "changed"])
@pytest.mark.parametrize("how", list(FOREIGN), ids=list(FOREIGN))
def test_a_foreign_record_is_one_error_naming_it(tmp_path: Path, how: str, command: str) -> None:
    spec, out = _spec(tmp_path), tmp_path / "out"
    assert _hostc("build", spec, "--out", out, "-q", cwd=tmp_path)[0] == 0
    (out / "sysctl/etc/sysctl.d/90-hostc.conf").unlink()  # a build would write it again
    _plant(out, FOREIGN[how])
    before = _files(out)
    code, _, err = _hostc(command, spec, "--out", out, cwd=tmp_path)
    assert code == 2, err
    assert f"error: {out / RECORD}: " in err, err
    assert "internal error" not in err and "Traceback" not in err, err
    assert len(err) < 2000, "one short error, the record not echoed"
    assert _files(out) == before, "nothing written, nothing removed"


def _fleet(tmp: Path) -> Path:
    hosts = tmp / "hosts"
    hosts.mkdir()
    for name in ("a", "b"):
        _spec(hosts, name)
    (hosts / "topology.toml").rename(tmp / "topology.toml")
    for spec in hosts.glob("*.toml"):
        spec.write_text(spec.read_text().replace(str(hosts / "topology.toml"), "../topology.toml"))
    return hosts


def test_a_foreign_record_in_a_folder_beside_the_fleet_is_a_warning(tmp_path: Path) -> None:
    """Planted in one folder of a fleet's --out that is none of its hosts: every fleet
    build exited 3.  Now: a warning naming the record, that folder left alone (with
    --prune too), every host built."""
    hosts = _fleet(tmp_path)
    out = tmp_path / "out"
    assert _hostc("build", hosts, "--out", out, "-j", "1", "-q", cwd=tmp_path)[0] == 0
    shutil.copytree(out / "b", out / "gone")
    (hosts / "b.toml").unlink()
    planted = _plant(out / "gone", FOREIGN["brackets nested 100,000 deep"])
    gone = _files(out / "gone")
    for extra in ((), ("--prune",), ("--json",)):
        code, stdout, err = _hostc("build", hosts, "--out", out, "-j", "1", *extra, cwd=tmp_path)
        assert code == 0, err
        assert f"warning: {out / 'gone' / RECORD}: " in err, err
        assert "internal error" not in err, err
        assert _files(out / "gone") == gone and (out / "gone" / RECORD).read_bytes() == planted
        assert (out / "a" / RECORD).is_file()
    rows = {r["host"]: r for r in json.loads(stdout)["hosts"]}
    assert rows["gone"]["gone"] and rows["gone"]["warnings"], rows["gone"]
    assert rows["a"]["ok"] and not rows["a"]["warnings"]


def test_a_foreign_record_at_the_fleets_top_fails_its_own_row_only(tmp_path: Path) -> None:
    """OUT's own record (what the fleet wrote in OUT/ansible/): a foreign one failed the
    whole command with exit 3.  Now the `ansible (all hosts)` row fails naming it, exit 2,
    and every host is built."""
    hosts = _fleet(tmp_path)
    out = tmp_path / "out"
    args = ("build", hosts, "--out", out, "-j", "1", "-t", "all", "-t", "ansible")
    assert _hostc(*args, "-q", cwd=tmp_path)[0] == 0
    (out / "a/sysctl/etc/sysctl.d/90-hostc.conf").unlink()
    _plant(out, FOREIGN["brackets nested 100,000 deep"])
    code, _, err = _hostc(*args, cwd=tmp_path)
    assert code == 2, err
    assert f"error: {out / RECORD}: " in err and "internal error" not in err, err
    assert (out / "a/sysctl/etc/sysctl.d/90-hostc.conf").is_file(), "the hosts are built"


def test_a_record_selecting_no_target_is_an_error_naming_the_record(tmp_path: Path) -> None:
    """`hostc changed` rebuilds the targets the record says were asked: a name that is
    no target is the record's error (it was `<input>: targets: unknown target`)."""
    spec, out = _spec(tmp_path), tmp_path / "out"
    assert _hostc("build", spec, "--out", out, "-q", cwd=tmp_path)[0] == 0
    _plant(out, _set("selected", ["sysctl", "../../etc"]))
    code, _, err = _hostc("changed", spec, "--out", out, cwd=tmp_path)
    assert code == 2 and f"error: {out / RECORD}: selected: '../../etc'" in err, err
