"""Everything `hostc plan` shows can be explained: every name the plan text prints, every
settings-table row by its name and its node.toml key, and every line of hostc-tuning
that writes a value (first-day-3 F3: the C-state row and `cpufreq.governor` were refused)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hostc import api
from hostc.diagnostics import HostcError
from hostc.settings.table import SETTINGS
from tests.conftest import EXAMPLES, run_hostc

SPECS = sorted(EXAMPLES.glob("*/node.toml")) + sorted(EXAMPLES.glob("fleet/hosts/*.toml"))
#: the plan sections whose rows start with the setting's name
_NAMED = {
    "sysctl:": r"(\S+) = ",
    "limits:": r"(\S+) ",
    "modules loaded at every boot:": r"(\S+)$",
    "left out on purpose:": r"(\S+)$",
    "kernel command line": r"([^=\s]+)",
    "kubelet": r"([a-z]+[A-Z]\w*) ",  # its KubeletConfiguration fields
}


def plan_names(text: str) -> list[str]:
    """The names the plan text prints: a section row's first word, a runtime row's
    `[name]`, a workload's name, the partition's two sets."""
    names = ["housekeeping", "isolated"]
    section = ""
    for line in text.splitlines():
        if line and not line.startswith(" "):
            section = next((s for s in _NAMED if line.startswith(s)), "")
            if m := re.match(r"workload (\S+):", line):
                names.append(f"workload.{m[1]}")
            continue
        row = section and line.startswith("  ") and not line.startswith(("   ", "  #"))
        m = re.search(r"  \[(\S+)\]$", line) or (
            re.match(_NAMED[section], line[2:]) if row else None
        )
        if m:
            names.append(m[1])
    return list(dict.fromkeys(names))


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_every_name_the_plan_prints_is_explainable(spec: Path) -> None:
    r = run_hostc("plan", str(spec))
    assert r.returncode == 0, r.stderr
    names = plan_names(r.stdout)
    assert {"vm.swappiness", "housekeeping"} <= set(names) or "vm.swappiness" not in r.stdout
    refused = []
    for name in names:
        try:
            api.explain(spec, name)
        except HostcError as e:
            refused.append(f"{name}: {e}")
    assert not refused, refused


@pytest.mark.parametrize("spec", [*SPECS[:1], EXAMPLES / "epyc-rhel9-inference/node.toml"])
def test_every_setting_row_by_name_and_spec_key_is_explainable_or_said_unset(spec: Path) -> None:
    """A row the Plan sets explains by its name and its key; one it does not set gets
    a message naming the row, never 'no setting'."""
    for row in SETTINGS:
        for what in (row.name, ".".join(row.spec_key) if row.spec_key else row.name):
            try:
                found = api.explain(spec, what)
            except HostcError as e:
                assert f"the setting {row.name}" in str(e), (what, str(e))
            else:
                assert found.found, what


def test_the_c_state_row_and_cpufreq_governor_explain_through_the_cli() -> None:
    spec = str(EXAMPLES / "epyc-rhel9-inference/node.toml")
    for what in ("max_cstate", "kernel.limit_cstates", "cpufreq.governor", "pstate"):
        r = run_hostc("explain", spec, what)
        assert r.returncode == 0, (what, r.stderr)
    r = run_hostc("explain", spec, "kernel.limit_cstates")
    assert r.stdout.startswith("max_cstate = 1 on CPUs")
    assert "pm_qos_resume_latency_us" in r.stdout  # the line that writes it


def test_every_writing_line_of_hostc_tuning_is_explainable(tmp_path: Path) -> None:
    """The `put` under a `for`, the PM QoS write: each names its setting."""
    spec = EXAMPLES / "epyc-rhel9-inference/node.toml"
    plan = api.compile_file(spec)[0]
    art = next(a for a in api.emit(plan, ["systemd"]) if a.path.endswith("/hostc-tuning"))
    lines = art.data.decode().splitlines()
    writing = [
        n
        for n, line in enumerate(lines, start=1)
        if re.match(r"\s*(put|put_mask|nic_channels) ", line)
    ]
    assert len(writing) >= 8
    for n in writing:
        found = api.explain(spec, f"{art.path}:{n}")
        assert found.found, (n, lines[n - 1])
    r = run_hostc("explain", str(spec), f"{art.path}:{writing[0] + 0}")
    assert r.returncode == 0, r.stderr


def test_a_sysfs_row_is_carried_by_its_whole_path_not_its_last_word() -> None:
    """The knob experiment's finding: a sysfs row `…/khugepaged/defrag` was matched, by
    its last word, to THP's own `…/transparent_hugepage/defrag` line in hostc-tuning.
    A row the table does not have is explained once the Plan holds it: the catalog reads
    the Plan's rows, not a list of its own."""
    import attrs

    from hostc.provenance import Value
    from hostc.report import catalog_runtime
    from hostc.settings.model import Family, Setting, Sysfs, When

    row: Setting[int] = Setting(
        "khugepaged_defrag", Family.SYSFS, int, When.RUNTIME, "test row", "0",
        observe=(Sysfs("/sys/kernel/mm/transparent_hugepage/khugepaged/defrag"),),
    )  # fmt: skip
    plan, _ = api.compile_file(EXAMPLES / "dgx-h100-inference" / "node.toml")
    value = Value(row, 0, plan.runtime.owner_reason)
    plan = attrs.evolve(plan, runtime=attrs.evolve(plan.runtime, tunables=(value,)))
    entry = next(e for e in catalog_runtime.runtime(plan) if e.name == "khugepaged_defrag")
    tuning = "/usr/local/sbin/hostc-tuning"
    assert entry.carries(tuning, "put 0 /sys/kernel/mm/transparent_hugepage/khugepaged/defrag")
    assert not entry.carries(tuning, "put madvise /sys/kernel/mm/transparent_hugepage/defrag")
