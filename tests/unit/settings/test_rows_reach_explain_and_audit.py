"""Every settings row the Plan holds is explained and audited from its row, with no list
of names to keep in step (issue 55 item 1, the knob experiment's two silent traps):

- `hostc explain SPEC ROW` must find a row the Plan holds, never answer that the Plan
  does not set it (a kernel argument is listed by its word, not the row's name);
- audit must read every file a held row declares it is observed in (`Sysfs`), not only
  /proc/cmdline.

A new row is covered the day it is added to `SETTINGS` and a preset or an example
gives it a value.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

import attrs
import pytest

from hostc import api
from hostc.audit.observe import expectations
from hostc.audit.run import audit_state
from hostc.diagnostics import HostcError
from hostc.plan.kernelargs import OWNED, kernel_args
from hostc.plan.model import Plan
from hostc.provenance import Value
from hostc.report.explain import select
from hostc.settings import SETTINGS, Family, Setting
from hostc.settings.model import Cmdline, Per, Sysfs
from hostc.vocab import When

from conftest import EXAMPLES

SPECS = sorted(EXAMPLES.glob("*/node.toml"))

#: Rows whose declared file audit does not read, and why.  Kept exact: a row listed here
#: that audit does read on every example fails `test_the_exceptions_are_still_true`.
NOT_READ = {
    # audit reads its `default_hugepagesz=` word in /proc/cmdline; Hugepagesize in
    # /proc/meminfo has no observer yet
    "default_hugepagesz": "/proc/meminfo",
    # with hostc-tuning the owner, audit checks tuned.service is stopped instead
    "runtime_owner": "/etc/tuned/active_profile",
    # audit has no expectation for modules-load.d yet
    "load_ib_umad": "/sys/module/ib_umad",
}


@pytest.fixture(scope="module", params=SPECS, ids=lambda p: p.parent.name)
def plan(request: pytest.FixtureRequest) -> Plan:
    return api.compile_file(request.param)[0]


def holds(plan: Plan, s: Setting[Any]) -> bool:
    """Whether the Plan gives this host row `s` (any family)."""
    if s.family is Family.SYSCTL:
        return any(x.key == s.name for x in plan.sysctls)
    if s.family is Family.LIMIT:
        return plan.limit(s.name) is not None
    if s.family is Family.MODULE_LOAD:
        return any(m.name == s.example for m in plan.modules_load)
    return plan.held(s) is not None


def test_no_row_the_plan_holds_is_explained_as_unset(plan: Plan) -> None:
    """By its name and by its node.toml key: a row the Plan holds is found (the trap: a
    kernel argument whose word is not the row's name was said to be unset)."""
    held = [s for s in SETTINGS if holds(plan, s)]
    assert len(held) > 10
    said_unset = []
    for row in held:
        keys = [".".join(row.spec_key)] if row.spec_key and row.family is not Family.SYSCTL else []
        for what in (row.name, *keys):
            try:
                _, found = select(plan, what)
            except HostcError as e:
                said_unset.append(f"{what}: {e}")
            else:
                assert found, what
    assert said_unset == []


def _tree(root: Path, plan: Plan) -> dict[str, str]:
    """A host with every file the held rows declare (one CPU, one cpufreq policy, one
    node standing for each glob; cpuidle states so the PM QoS reader judges cpu0):
    row name → the file audit must read."""
    want = {}
    for s in SETTINGS:
        if not holds(plan, s):
            continue
        for o in s.observe:
            if isinstance(o, Sysfs):
                path = o.path.split(" ")[0]  # `/proc/meminfo (Hugepagesize)`: the file
                for glob, one in (("policy*", "policy0"), ("cpu*", "cpu0"), ("node*", "node0")):
                    path = path.replace(glob, one)
                want[s.name] = path.strip("/")
    idle = (f"sys/devices/system/cpu/cpu0/cpuidle/state{n}/latency" for n in range(4))
    for rel in (*want.values(), *idle):
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        if not f.exists():
            f.write_text("1\n")
    return want


def test_audit_reads_every_file_a_held_row_is_observed_in(plan: Plan, tmp_path: Path) -> None:
    """The trap: a kernel argument with a `Sysfs` observe was read from /proc/cmdline only,
    so a host that changed the value live was reported applied."""
    want = _tree(tmp_path, plan)
    files, dirs = audit_state(plan, tmp_path)
    unread = {n: p for n, p in want.items() if p not in files and p not in dirs}
    assert {n: p for n, p in unread.items() if NOT_READ.get(n) != "/" + p} == {}


def test_the_exceptions_are_still_true(tmp_path: Path) -> None:
    unread: set[str] = set()
    for i, spec in enumerate(SPECS):
        p = api.compile_file(spec)[0]
        root = tmp_path / str(i)
        want = _tree(root, p)
        files, dirs = audit_state(p, root)
        unread |= {n for n, path in want.items() if path not in files and path not in dirs}
    assert set(NOT_READ) <= unread


class Policy(enum.StrEnum):
    DEFAULT = "default"
    PERFORMANCE = "performance"


#: a kernel argument row shaped as the knob experiment's `pcie_aspm.policy`, under a word
#: no real row has (the table may gain that one)
_FILE = Sysfs("/sys/module/hostc_test/parameters/policy", choice=True)
ROW: Setting[Policy] = Setting(
    "test_policy", Family.CMDLINE, Policy, When.BOOT, "test row", "performance",
    observe=(Cmdline("hostc_test.policy"), _FILE),
)  # fmt: skip


def test_a_kernel_argument_row_is_spelled_and_audited_from_its_row() -> None:
    """A row of family CMDLINE the Plan holds reaches the command line as its row's word
    and audit's sysfs check, with no code of its own."""
    plan = api.compile_file(SPECS[0])[0]
    value = Value(ROW, Policy.PERFORMANCE, plan.runtime.owner_reason)
    plan = attrs.evolve(plan, cmdline_settings=(*plan.cmdline_settings, value))
    assert "hostc_test.policy=performance" in [str(a) for a in kernel_args(plan)]
    (e,) = [e for e in expectations(plan) if e.setting == "test_policy"]
    assert e.args == ("/sys/module/hostc_test/parameters/policy",)
    assert e.pending is not None and e.pending[1] == "hostc_test.policy=performance"
    _, found = select(plan, "hostc_test.policy")
    assert [f.value for f in found] == ["performance"]


def test_every_kernel_argument_row_is_one_safe_word_that_extra_args_may_not_set() -> None:
    """A CMDLINE row declares exactly one argument, its values are an enum's or ints (no
    free text reaches a command line from a row), and `kernel.extra_args` may not set its
    word (OWNED comes from the rows)."""
    rows = [s for s in SETTINGS if s.family is Family.CMDLINE]
    assert rows
    for s in rows:
        words = [o for o in s.observe if isinstance(o, Cmdline)]
        assert len(words) == 1, s.name
        assert s.type is int or hasattr(s.type, "__members__"), s.name
        assert s.when is When.BOOT, s.name
        f = s.sysfs
        assert f is None or f.per is Per.ONE, s.name  # one file: the kernel's one value
    declared = {o.arg for s in SETTINGS for o in s.observe if isinstance(o, Cmdline)}
    assert declared <= OWNED
