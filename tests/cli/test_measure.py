"""`hostc measure` as a user runs it: two copies of a host a window apart (nothing waits),
its exit codes, its JSON, the record file and `hostc audit`'s line from it, bad input."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from audit_host import perfect_host

from hostc import api

from conftest import ROOT, run_hostc
from measure_host import Host, Irq, Task, write

V1 = ROOT / "tests" / "vm" / "v1.toml"
START = Host(
    irqs={"4": Irq("IO-APIC   4-edge", "ttyS0", allowed="6")},
    tasks=(Task(600, "sh", 7, 10, unit="vmtest-step.service", allowed="7"),),
)


def copies(tmp_path: Path, after: Host) -> tuple[Path, Path]:
    return write(tmp_path / "start", START), write(tmp_path / "end", after)


def test_a_planted_irq_exits_1_and_names_line_and_setting(tmp_path: Path) -> None:
    a, b = copies(tmp_path, START.add("4", 6, 312).later(5))
    done = run_hostc("measure", V1, "--root", a, "--after", b)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout
    assert "1 excess: a Plan setting not in effect" in out
    assert "CPU 6 irq 4 ttyS0 x312: IRQ 4 ttyS0 on isolated CPU 6, affinity 6" in out
    assert "irq-owner (irq.owner): IRQ ownership: hostc-tuning.service places" in out
    assert "fix: `systemctl restart hostc-tuning.service`" in out


def test_json_is_the_documented_document_and_stable(tmp_path: Path) -> None:
    after = replace(START.add("4", 6, 3).add("LOC", 7, 400).later(5), tasks=(
        replace(START.tasks[0], runs=410),
    ))  # fmt: skip
    a, b = copies(tmp_path, after)
    first = run_hostc("measure", V1, "--root", a, "--after", b, "--json")
    again = run_hostc("measure", V1, "--root", a, "--after", b, "--json")
    assert first.returncode == 1 and first.stdout == again.stdout
    doc = json.loads(first.stdout)
    assert set(doc) == {
        "schema", "host", "spec", "window_s", "ok", "excess", "cpus", "host_rows",
        "sampling", "not_visible", "osnoise",
    }  # fmt: skip
    assert (doc["schema"], doc["window_s"], doc["ok"], doc["excess"]) == (
        "hostc-measure/1",
        5.0,
        False,
        3,
    )
    seven = next(c for c in doc["cpus"] if c["cpu"] == 7)
    assert seven["role"] == "isolated" and seven["workload"] == "demo"
    assert seven["promised"] == ["nohz_full", "rcu_nocbs", "isolcpus", "irq-owner"]
    sh = next(r for r in seven["rows"] if r["source"] == "task")
    assert (sh["key"], sh["name"], sh["count"], sh["verdict"]) == ("600", "sh", 400, "excess")
    assert set(sh["cause"]) == {"kind", "id", "why", "what", "source", "fix"}
    assert sh["cause"]["id"] == "service-cpus"
    assert doc["sampling"]["counted_by"] == "switch-ins"


def test_a_clean_copy_exits_0_and_writes_nothing_by_default(tmp_path: Path) -> None:
    a = write(tmp_path / "root", START)
    done = run_hostc("measure", V1, "--root", a, "--window", "0")
    assert done.returncode == 0, done.stderr
    assert "no excess" in done.stdout and "recorded" not in done.stderr
    assert not (a / "var").exists()


def test_the_window_is_announced_on_stderr_with_json_too(tmp_path: Path) -> None:
    """The line a person waits on, and a script starts its load on (the VM's windows):
    stderr, so that stdout stays the JSON document."""
    a = write(tmp_path / "root", START)
    done = run_hostc("measure", V1, "--root", a, "--window", "0.2", "--json", "--no-record")
    assert done.returncode == 0, done.stderr
    assert f"\nhostc measure: counting for 0.2 s under {a}\n" in done.stderr, done.stderr
    assert json.loads(done.stdout)["window_s"] == pytest.approx(0.2, abs=0.5)


def test_the_record_and_audits_line_from_it(tmp_path: Path) -> None:
    a, b = copies(tmp_path, START.add("4", 6, 9).later(5))
    plan = api.compile_file(V1)[0]
    root = perfect_host(plan, tmp_path / "audited")
    record = root / "var/lib/hostc/measure/last.json"
    done = run_hostc("measure", V1, "--root", a, "--after", b, "--record", record)
    assert done.returncode == 1 and f"recorded in {record}" in done.stderr
    doc = json.loads(record.read_text())
    assert doc["schema"] == "hostc-measure/1" and doc["taken"].endswith("Z")
    audit = run_hostc("audit", V1, "--root", root)
    assert "last hostc measure (/var/lib/hostc/measure/last.json, 5.0 s" in audit.stdout
    assert "CPU 6 irq 4 ttyS0 x9: irq-owner" in audit.stdout
    record.write_text("{not json")
    audit = run_hostc("audit", V1, "--root", root)
    assert "last hostc measure:" in audit.stdout and "Traceback" not in audit.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--after", "x"], "--after needs --root"),
        (["--window", "-1"], "--window must be 0 to 600"),
        (["--window", "601"], "--window must be 0 to 600"),
        (["--record", "f", "--no-record"], "not both"),
        (["--root", "/nonexistent/root"], "no such directory"),
    ],
)
def test_bad_usage_exits_2_with_one_message(args: list[str], message: str) -> None:
    done = run_hostc("measure", V1, *args)
    assert done.returncode == 2 and message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_copy_without_proc_or_with_a_broken_file_exits_2(tmp_path: Path) -> None:
    done = run_hostc("measure", V1, "--root", tmp_path, "--window", "0")
    assert done.returncode == 2 and "nothing to count" in done.stderr
    write(tmp_path, START)
    (tmp_path / "proc/interrupts").write_text("garbage\n")
    done = run_hostc("measure", V1, "--root", tmp_path, "--window", "0")
    assert done.returncode == 2
    assert (
        f"{tmp_path}/proc/interrupts" in done.stderr and "no header of CPU columns" in done.stderr
    )
    assert "Traceback" not in done.stderr


def test_many_hosts_are_refused() -> None:
    done = run_hostc("measure", ROOT / "examples", "--window", "0")
    assert done.returncode == 2 and "counts on one host" in done.stderr
