"""`cpufreq.min_perf_pct` (issue 52): intel_pstate's frequency floor, with what it does
and costs in its reason, written by hostc-tuning or TuneD's [cpu] (TuneD 2.3 reads it),
read back by audit and hostc-verify, and refused where no intel_pstate would show it."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from refused import refused_build
from test_runtime import SCRIPT, TUNED_OWNED, VERIFY, compile_, files, h100, spec, tuned_ini

from hostc.audit.observe import expectations
from hostc.diagnostics import HostcError
from hostc.settings import table as t
from hostc.spec import model as m

from conftest import ROOT, run_hostc

PATH = "/sys/devices/system/cpu/intel_pstate/min_perf_pct"


def floor(pct: int = 100, **kw: object) -> m.HostSpec:
    return spec(cpufreq=m.Cpufreq(min_perf_pct=pct, **kw))  # type: ignore[arg-type]


def test_the_floor_is_written_with_what_it_does_and_costs() -> None:
    plan = compile_(floor(90))
    v = plan.runtime.tunable(t.MIN_PERF_PCT)
    assert v is not None and v.value == 90
    assert str(v.reason.source) == "cpufreq.min_perf_pct"
    assert "below 90 % of the highest turbo P-state" in v.reason.why and "cost:" in v.reason.why
    assert f"put 90 {PATH}" in files(plan, "systemd")[SCRIPT]
    assert f"check_file min_perf_pct 90 {PATH}" in files(plan, "systemd")[VERIFY]
    (e,) = [e for e in expectations(plan) if e.setting == "min_perf_pct"]
    assert (e.kind, e.expected, e.args) == ("value", "90", (PATH,))


def test_tuned_sets_it_in_cpu_as_latency_performance_does() -> None:
    ini = tuned_ini(compile_(spec(**TUNED_OWNED, cpufreq=m.Cpufreq(min_perf_pct=100))))
    assert ini["cpu"]["min_perf_pct"] == "100"
    assert not ini.has_section("sysfs") or PATH not in ini["sysfs"]


def test_no_preset_sets_a_floor() -> None:
    assert compile_(spec()).runtime.tunable(t.MIN_PERF_PCT) is None


@pytest.mark.parametrize(
    ("s", "topo_kw", "message"),
    [
        (floor(0), {}, "0 is no percentage"),
        (floor(101), {}, "101 is no percentage"),
        (floor(), {"cpu_vendor": "amd"}, "min_perf_pct is intel_pstate's"),
        (floor(pstate=m.PstateMode.DISABLE), {}, "acpi-cpufreq, which has no min_perf_pct"),
    ],
    ids=["zero", "over-100", "amd", "pstate-disable"],
)
def test_a_floor_nobody_would_apply_is_an_error(
    s: m.HostSpec, topo_kw: dict[str, object], message: str
) -> None:
    with pytest.raises(HostcError) as e:
        compile_(s, h100(**topo_kw))
    (d,) = [d for d in e.value.diagnostics if d.severity == "error"]
    assert str(d.path) == "cpufreq.min_perf_pct" and message in d.message


def test_per_cpu_perf_limits_hides_it() -> None:
    s = attrs.evolve(floor(), kernel=m.Kernel(extra_args=("intel_pstate=per_cpu_perf_limits",)))
    with pytest.raises(HostcError, match="hides min_perf_pct"):
        compile_(s)


@pytest.mark.parametrize(
    ("driver", "pstate", "ok"),
    [
        ("intel_pstate", None, True),
        ("intel_cpufreq", None, True),  # passive mode: the global floor applies too
        ("acpi-cpufreq", None, False),
        ("acpi-cpufreq", m.PstateMode.ACTIVE, True),  # the next boot runs intel_pstate
        ("none", None, False),
    ],
)
def test_the_snapshots_driver_decides(driver: str, pstate: m.PstateMode | None, ok: bool) -> None:
    topo = attrs.evolve(h100(), cpufreq_driver=driver)
    s = floor(pstate=pstate)
    if ok:
        assert compile_(s, topo).runtime.tunable(t.MIN_PERF_PCT) is not None
        return
    with pytest.raises(HostcError, match="not intel_pstate") as e:
        compile_(s, topo)
    assert [str(d.path) for d in e.value.diagnostics] == ["cpufreq.min_perf_pct"]


def test_cli_refuses_a_bad_floor_with_file_and_key_path_exit_2_nothing_written(
    tmp_path: Path,
) -> None:
    _, err = refused_build(
        tmp_path, "dgx-h100-inference", "min_perf_pct = 100", "min_perf_pct = 150"
    )
    assert "cpufreq.min_perf_pct" in err and "150 is no percentage" in err


def test_hostc_explain_cpufreq_min_perf_pct() -> None:
    spec_file = ROOT / "examples/dgx-h100-inference/node.toml"
    for what in ("cpufreq.min_perf_pct", "min_perf_pct"):
        r = run_hostc("explain", spec_file, what)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("min_perf_pct = 100") and PATH in r.stdout
