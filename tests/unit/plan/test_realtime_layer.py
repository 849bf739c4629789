"""`cpu.realtime` (issue 52): an opt-in preset layer for real-time threads on isolated
CPUs.  It sets only what the kernel documents for any kernel, RT or not (RT throttling
off, with what that costs), says what it leaves out and why, wins over the role's
layers, and refuses a host with nothing isolated."""

from __future__ import annotations

from pathlib import Path

import pytest
from refused import refused_build
from test_runtime import TUNED_OWNED, compile_, files, spec, tuned_ini

from hostc.diagnostics import HostcError
from hostc.plan.model import Plan
from hostc.provenance import Layer, PresetLayer
from hostc.spec import model as m

from conftest import ROOT, run_hostc

RT = m.Cpu(housekeeping_per_node=2, isolate="workload", realtime=True)


def sysctl(plan: Plan, key: str) -> tuple[str, str, str] | None:
    s = next((s for s in plan.sysctls if s.key == key), None)
    return None if s is None else (s.value, str(s.reason.source), s.reason.why)


@pytest.mark.parametrize("role", list(m.Role), ids=str)
def test_rt_throttling_is_off_with_its_cost_on_every_role(role: m.Role) -> None:
    found = sysctl(compile_(spec(role=role, cpu=RT)), "kernel.sched_rt_runtime_us")
    assert found is not None
    value, source, why = found
    assert (value, source) == ("-1", "preset:realtime")
    assert "sched-rt-group.rst" in why and "cost:" in why and "runaway" in why


def test_without_the_key_nothing_real_time_is_set_or_left_out() -> None:
    plan = compile_(spec())
    assert sysctl(plan, "kernel.sched_rt_runtime_us") is None
    assert str(PresetLayer(Layer.REALTIME)) not in {str(x.reason.source) for x in plan.left_out}


def test_what_the_layer_leaves_out_is_listed_with_why() -> None:
    plan = compile_(spec(cpu=RT))
    out = {x.setting: x.reason for x in plan.left_out if str(x.reason.source) == "preset:realtime"}
    assert set(out) == {"rcutree.kthread_prio", "stalld", "kernel.hung_task_timeout_secs"}
    assert "application's priorities" in out["rcutree.kthread_prio"].why


def test_the_spec_still_wins_and_tuned_carries_it() -> None:
    mine = compile_(spec(cpu=RT, sysctl={"kernel.sched_rt_runtime_us": 980000}))
    found = sysctl(mine, "kernel.sched_rt_runtime_us")
    assert found is not None
    assert found[:2] == ("980000", 'sysctl."kernel.sched_rt_runtime_us"')
    ini = tuned_ini(compile_(spec(cpu=RT, **TUNED_OWNED)))
    assert ini["sysctl"]["kernel.sched_rt_runtime_us"] == "-1"
    assert (
        "kernel.sched_rt_runtime_us = -1"
        in files(compile_(spec(cpu=RT)), "sysctl")["/etc/sysctl.d/90-hostc.conf"].splitlines()
    )


def test_real_time_threads_without_isolated_cpus_are_refused() -> None:
    cpu = m.Cpu(realtime=True)
    with pytest.raises(HostcError) as e:
        compile_(spec(cpu=cpu, workload=[]))
    (d,) = [d for d in e.value.diagnostics if d.severity == "error"]
    assert str(d.path) == "cpu.realtime" and "need isolated CPUs" in d.message


def test_cli_refuses_it_with_file_and_key_path_exit_2_nothing_written(tmp_path: Path) -> None:
    _, err = refused_build(
        tmp_path, "h100-4gpu-inference", 'isolate = "workload"', 'isolate = "none"'
    )
    assert "cpu.realtime" in err and "need isolated CPUs" in err


def test_hostc_explain_cpu_realtime_lists_what_the_layer_sets() -> None:
    r = run_hostc("explain", ROOT / "examples/h100-4gpu-inference/node.toml", "cpu.realtime")
    assert r.returncode == 0, r.stderr
    assert "kernel.sched_rt_runtime_us = -1" in r.stdout and "stalld" in r.stdout
    assert "cpu.realtime = true" in r.stdout  # the layer's condition, in the origin
