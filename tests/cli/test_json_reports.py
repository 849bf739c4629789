"""`hostc check --json` and `hostc targets --json`: the text form's facts as JSON on
stdout, diagnostics in the shape the fleet's `--json` reports (`Diagnostic.to_json`),
and the text form's exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, run_hostc

EXAMPLE = ROOT / "examples" / "h100-4gpu-inference"
FLEET = ROOT / "examples" / "fleet" / "hosts"

#: cpu.isolate without a pinned workload: a warning (an error under --strict)
WARNS = """version = 1
[host]
name = "w"
role = "inference"
topology = "topology.toml"
[cpu]
housekeeping_per_node = 2
isolate = "rest"
"""


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    shutil.copy(EXAMPLE / "topology.toml", tmp_path)
    text = (EXAMPLE / "node.toml").read_text()
    (tmp_path / "bad.toml").write_text(text.replace('"GPU1"', '"GPU9"'))
    (tmp_path / "warns.toml").write_text(WARNS)
    return tmp_path


def _check(*args: str | Path) -> tuple[int, dict[str, object], str]:
    r = run_hostc("check", *args, "--json")
    return r.returncode, json.loads(r.stdout), r.stderr


def test_check_json_of_a_valid_spec_is_ok_exit_0() -> None:
    rc, doc, _ = _check(EXAMPLE / "node.toml")
    assert rc == 0
    assert doc == {"spec": str(EXAMPLE / "node.toml"), "ok": True, "warnings": [], "errors": []}


def test_check_json_names_file_line_and_key_path_of_an_error_exit_2(specs: Path) -> None:
    text = run_hostc("check", specs / "bad.toml")
    rc, doc, stderr = _check(specs / "bad.toml")
    assert rc == text.returncode == 2
    assert doc["ok"] is False and doc["warnings"] == []
    (err,) = doc["errors"]  # type: ignore[misc]
    assert err == {
        "severity": "error",
        "path": 'workload "vllm".gpus[1]',
        "message": "GPU 'GPU9' is not in the topology",
        "hint": "GPUs in the snapshot: GPU0, GPU1, GPU2, GPU3",
        "file": str(specs / "bad.toml"),
        "line": 12,
    }
    assert stderr == text.stderr  # the text form's diagnostics stay on stderr


def test_check_json_keeps_warnings_apart_and_strict_makes_them_errors(specs: Path) -> None:
    rc, doc, _ = _check(specs / "warns.toml")
    assert rc == 0 and doc["ok"] is True and doc["errors"] == []
    (warning,) = doc["warnings"]  # type: ignore[misc]
    assert warning["severity"] == "warning" and warning["path"] == "cpu.isolate"
    rc, doc, _ = _check(specs / "warns.toml", "--strict")
    assert rc == 2 and doc["ok"] is False and doc["warnings"] == []
    assert [e["path"] for e in doc["errors"]] == ["cpu.isolate"]  # type: ignore[attr-defined]


def test_check_json_of_many_hosts_reports_each_host(specs: Path) -> None:
    good = sorted(FLEET.glob("*.toml"))[:2]
    (specs / "hosts.txt").write_text("".join(f"{p}\n" for p in [*good, specs / "bad.toml"]))
    rc, doc, _ = _check(f"@{specs / 'hosts.txt'}", "-j", "1")
    assert rc == 2
    rows = {r["host"]: r for r in doc["hosts"]}  # type: ignore[attr-defined]
    assert sorted(rows) == sorted([*(p.stem for p in good), "bad"])
    assert [h for h, r in rows.items() if not r["ok"]] == ["bad"]
    (err,) = rows["bad"]["errors"]
    assert err["path"] == 'workload "vllm".gpus[1]' and err["line"] == 12


def test_targets_json_lists_what_the_text_lists() -> None:
    text = run_hostc("targets")
    r = run_hostc("targets", "--json")
    assert r.returncode == text.returncode == 0
    rows = json.loads(r.stdout)["targets"]
    listed = [ln.split()[0] for ln in text.stdout.splitlines() if ln.startswith("  ")]
    assert sorted(t["name"] for t in rows) == sorted(listed)
    assert all(t["summary"] in text.stdout for t in rows)
    assert {t["name"] for t in rows if not t["in_all"]} == {
        "cloud-init",
        "ignition",
        "rootfs",
        "rootfs-tar",
        "ansible",
    }
    assert all(t["role"] == ("file" if t["in_all"] else "wrapper") for t in rows)
