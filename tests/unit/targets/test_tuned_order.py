"""TuneD's profile in place before the container runtimes, the kubelets and the
workloads start, where TuneD owns the runtime settings (issue 52, F3).

hostc-tuning.service is Before= every unit that starts pods or a workload; with
`runtime.owner = "tuned"` nothing ordered TuneD, so a pod restarted at boot could start
before the profile applied.  hostc-tuned-ready.service is After=tuned.service and
Before= them, and its script returns only once TuneD answers on D-Bus that it runs the
hostc profile.  Checked here: the unit and its order, that every delivery carries and
enables it, that its change costs a daemon-reload and nothing more, that systemd finds
no ordering cycle with the real tuned.service, and the script against a fake systemctl
and busctl (applied, TuneD failed, another profile, a post-loaded profile).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from tuned_variant import variant

from hostc import api
from hostc.artifact import Artifact
from hostc.delivery.effects import Facts, Kind, file_entry
from hostc.knowledge.runtime import KUBE_UNITS
from hostc.plan.model import Plan
from hostc.targets import tuned_order

from conftest import ROOT, need_tool

#: tuned.service as redhat-performance/tuned ships it (v2.20 to 2.28: the same text)
TUNED_SERVICE = """[Unit]
Description=Dynamic System Tuning Daemon
After=systemd-sysctl.service network.target dbus.service polkit.service
Requires=dbus.service
Conflicts=cpupower.service auto-cpufreq.service tlp.service power-profiles-daemon.service

[Service]
Type=dbus
PIDFile=/run/tuned/tuned.pid
BusName=com.redhat.tuned
ExecStart=/bin/true

[Install]
WantedBy=multi-user.target
"""


def tuned_plan(tmp: Path, example: str = "epyc-rhel9-inference") -> Plan:
    return api.compile_file(variant(tmp, example))[0]


def files_of(plan: Plan, target: str) -> dict[str, Artifact]:
    return {a.path: a for a in api.emit(plan, [target])}


def unit_lines(text: str, key: str) -> list[str]:
    return [
        w
        for line in text.splitlines()
        if line.startswith(f"{key}=")
        for w in line[len(key) + 1 :].split()
    ]


def test_tuned_owner_holds_runtimes_kubelets_and_workloads_until_the_profile_applied(
    tmp_path: Path,
) -> None:
    """F3: the TuneD path gets the order hostc-tuning.service gives the systemd path."""
    plan = tuned_plan(tmp_path)
    out = files_of(plan, "tuned")
    unit = out[tuned_order.UNIT_PATH].text
    assert unit_lines(unit, "After") == ["tuned.service"]
    before = unit_lines(unit, "Before")
    assert set(before) >= {*KUBE_UNITS, *(w.unit for w in plan.workloads), "hostc-verify.service"}
    assert f"ExecStart={tuned_order.SCRIPT}" in unit.splitlines()
    assert "Type=oneshot" in unit and "RemainAfterExit=yes" in unit
    assert out[tuned_order.SCRIPT].mode == 0o755
    # the systemd path keeps hostc-tuning's own order and gets no TuneD wait
    own = api.compile_file(ROOT / "examples/epyc-rhel9-inference/node.toml")[0]
    assert tuned_order.UNIT_PATH not in files_of(own, "systemd")
    assert api.targets()["tuned"].applies(own) is not None


def test_every_delivery_that_carries_the_profile_carries_and_enables_the_wait(
    tmp_path: Path,
) -> None:
    plan = tuned_plan(tmp_path)
    paths = {tuned_order.UNIT_PATH, tuned_order.SCRIPT}
    rootfs = api.emit(plan, ["rootfs"])
    assert paths <= {a.path for a in rootfs}
    apply_sh = next(a.text for a in rootfs if a.path == "apply.sh").splitlines()
    assert f"systemctl enable --no-reload {tuned_order.UNIT}" in apply_sh
    user = yaml.safe_load(next(a.text for a in api.emit(plan, ["cloud-init"])))
    assert paths <= {f["path"] for f in user["write_files"]}
    assert ["systemctl", "enable", "--no-reload", tuned_order.UNIT] in user["runcmd"]
    ign = json.loads(next(a.text for a in api.emit(plan, ["ignition"])))
    units = {u["name"]: u for u in ign["systemd"]["units"]}
    assert units[tuned_order.UNIT]["enabled"] is True
    assert tuned_order.SCRIPT in {f["path"] for f in ign["storage"]["files"]}
    host_vars = next(a.text for a in api.emit(plan, ["ansible"]) if a.path.startswith("vars-"))
    pushed = {f["path"]: f for f in yaml.safe_load(host_vars)["hostc_files"]}
    assert paths <= set(pushed)
    assert base64.b64decode(pushed[tuned_order.UNIT_PATH]["content"]).decode() == (
        files_of(plan, "tuned")[tuned_order.UNIT_PATH].text
    )


def test_the_wait_unit_costs_a_daemon_reload_and_restarts_nothing(tmp_path: Path) -> None:
    """It orders the next boot: added, the manager rereads units and enables it; changed,
    a reread; removed, it is stopped and disabled (docs/rollout.md, "a unit hostc
    installs").  No restart, no reboot, no live start."""
    plan = tuned_plan(tmp_path)
    out = files_of(plan, "tuned")
    for path in (tuned_order.UNIT_PATH, tuned_order.SCRIPT):
        a = out[path]
        e = file_entry(path, "x", a.activation, Facts())
        every = [*e.add, *e.change, *e.remove]
        assert not [x for x in every if x.kind in (Kind.REBOOT, Kind.RESTART, Kind.DRAIN)]
        assert {str(x) for x in e.add} <= {"live daemon-reload", f"live enable {tuned_order.UNIT}"}
        assert {str(x) for x in e.change} <= {"live daemon-reload"}
    e = file_entry(tuned_order.UNIT_PATH, "x", out[tuned_order.UNIT_PATH].activation, Facts())
    assert {str(x) for x in e.remove} == {f"live stops {tuned_order.UNIT}", "live daemon-reload"}


def analyze(tool: str, units: Path, names: list[str]) -> subprocess.CompletedProcess[bytes]:
    """`systemd-analyze verify` of `names`, with `units` the only unit directory: it loads
    each and simulates starting it, so an ordering cycle among them is an error."""
    env = {**os.environ, "SYSTEMD_UNIT_PATH": f"{units}:", "SYSTEMD_LOG_LEVEL": "notice"}
    argv = [tool, "verify", "--man=no", *(str(units / n) for n in names)]
    return subprocess.run(argv, capture_output=True, env=env, check=False)


def test_systemd_finds_no_ordering_cycle_with_the_real_tuned_service(tmp_path: Path) -> None:
    """With tuned.service as TuneD ships it (After= network.target dbus polkit), the
    kubelet and containerd units as their packages order them and each workload."""
    tool = need_tool("systemd-analyze")
    for example in ("epyc-rhel9-inference", "h100-kubeadm"):
        plan = tuned_plan(tmp_path / example, example)
        units = tmp_path / example / "units"
        units.mkdir()
        out = files_of(plan, "tuned")
        script = tmp_path / example / "ready"
        script.write_text(out[tuned_order.SCRIPT].text)
        script.chmod(0o755)
        text = out[tuned_order.UNIT_PATH].text.replace(tuned_order.SCRIPT, str(script))
        (units / tuned_order.UNIT).write_text(text)
        (units / "tuned.service").write_text(TUNED_SERVICE)
        stub = (
            "[Unit]\nDescription=stub\nAfter=network-online.target\nWants=network-online.target\n"
            "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
        )
        names = [tuned_order.UNIT, "tuned.service"]
        for u in [*KUBE_UNITS, *(w.unit for w in plan.workloads)]:
            (units / u).write_text(stub)
            names.append(u)
        r = analyze(tool, units, sorted(set(names)))
        assert r.returncode == 0 and r.stderr == b"", r.stderr.decode()


def test_systemd_analyze_finds_a_cycle_when_there_is_one(tmp_path: Path) -> None:
    """The check above can fail: a kubelet ordered before TuneD closes a circle."""
    tool = need_tool("systemd-analyze")
    plan = tuned_plan(tmp_path)
    units = tmp_path / "units"
    units.mkdir()
    text = files_of(plan, "tuned")[tuned_order.UNIT_PATH].text
    (units / tuned_order.UNIT).write_text(text.replace(tuned_order.SCRIPT, "/bin/true"))
    (units / "tuned.service").write_text(TUNED_SERVICE)
    (units / "kubelet.service").write_text(
        "[Unit]\nBefore=tuned.service\n[Service]\nExecStart=/bin/true\n"
    )
    r = analyze(tool, units, [tuned_order.UNIT, "tuned.service", "kubelet.service"])
    assert r.returncode != 0 and b"ordering cycle" in r.stderr


FAKE = """#!/bin/sh
# {name}: answers from $FAKE_DIR ({name}.out), logs its arguments
printf '%s\\n' "$*" >>"$FAKE_DIR/{name}.log"
cat "$FAKE_DIR/{name}.out" 2>/dev/null
exit "$(cat "$FAKE_DIR/{name}.rc" 2>/dev/null || echo 0)"
"""


def run_ready(
    tmp: Path, state: str, busctl: str, busctl_rc: int = 0, wait: int | None = None
) -> subprocess.CompletedProcess[str]:
    plan = tuned_plan(tmp / "spec")
    text = files_of(plan, "tuned")[tuned_order.SCRIPT].text
    if wait is not None:
        text = text.replace(f"limit={tuned_order.WAIT_S}\n", f"limit={wait}\n")
    script = tmp / "ready"
    script.write_text(text)
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for name, out, rc in (("systemctl", state, 0), ("busctl", busctl, busctl_rc)):
        (bin_dir / name).write_text(FAKE.format(name=name))
        (bin_dir / name).chmod(0o755)
        (tmp / f"{name}.out").write_text(out + "\n")
        (tmp / f"{name}.rc").write_text(f"{rc}\n")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "FAKE_DIR": str(tmp)}
    return subprocess.run(
        ["sh", str(script)], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_the_wait_returns_once_tuned_runs_the_profile(tmp_path: Path) -> None:
    r = run_ready(tmp_path, "active", 's "hostc"')
    assert r.returncode == 0, r.stdout + r.stderr
    assert "TuneD has applied profile hostc" in r.stdout
    call = (tmp_path / "busctl.log").read_text().split()
    # TuneD's bus name, object and interface (tuned/consts.py DBUS_*), no tuned-adm fallback
    assert call[-5:] == [
        "call",
        "com.redhat.tuned",
        "/Tuned",
        "com.redhat.tuned.control",
        "active_profile",
    ]


def test_a_post_loaded_profile_beside_it_is_still_the_profile_applied(tmp_path: Path) -> None:
    assert run_ready(tmp_path, "active", 's "hostc site-extra"').returncode == 0


def test_a_failed_tuned_fails_the_wait_at_once_with_a_clear_message(tmp_path: Path) -> None:
    start = time.monotonic()
    r = run_ready(tmp_path, "failed", "")
    assert r.returncode == 1
    assert time.monotonic() - start < 10
    assert "TuneD has not applied profile hostc: tuned.service is failed" in r.stdout
    assert "journalctl -u tuned.service" in r.stdout


@pytest.mark.parametrize(("answer", "rc"), [('s ""', 0), ('s "balanced"', 0), ("", 1)])
def test_another_or_no_profile_fails_the_wait_after_its_bound(
    tmp_path: Path, answer: str, rc: int
) -> None:
    """TuneD takes its bus name at once when no profile loads (active_profile ""); one
    running another profile, or not answering, is no applied hostc profile either."""
    r = run_ready(tmp_path, "active", answer, busctl_rc=rc, wait=1)
    assert r.returncode == 1, r.stdout
    assert "TuneD has not applied profile hostc within 1 s" in r.stdout


def test_shellcheck_accepts_the_wait_script(tmp_path: Path) -> None:
    tool = need_tool("shellcheck")
    f = tmp_path / "ready"
    f.write_text(files_of(tuned_plan(tmp_path / "spec"), "tuned")[tuned_order.SCRIPT].text)
    r = subprocess.run([tool, "-s", "sh", str(f)], capture_output=True, check=False)
    assert r.returncode == 0, r.stdout.decode()
