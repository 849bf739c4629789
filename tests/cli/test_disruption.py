"""The disruption of a change (issue 30 item 1): what `hostc diff` and `hostc changed`
say a change costs a running host, checked against the files that change."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.delivery.disruption import Disruption, compute, state

from conftest import ROOT, run_hostc

DGX = ROOT / "examples" / "dgx-h100-inference"
RKE2 = ROOT / "examples" / "dgx-h100-rke2"
DROPIN = re.compile(r"^/etc/systemd/system/([^/]+\.service)\.d/90-hostc\.conf$")

#: the changes a fleet sees every week: a sysctl, the housekeeping share, one workload's
#: GPUs, a workload's busy-polling (nohz_full: a kernel argument), NUMA sharing
CHANGE = st.fixed_dictionaries(
    {
        "swappiness": st.sampled_from([None, 5, 10]),
        "housekeeping": st.sampled_from([4, 5]),
        "serve_b_gpus": st.sampled_from(['["GPU2", "GPU3"]', '["GPU2"]']),
        "busy_poll": st.booleans(),
        "share": st.booleans(),
    }
)


def _spec(c: dict[str, object]) -> str:
    text = (DGX / "node.toml").read_text()
    text = text.replace("housekeeping_per_node = 4", f"housekeeping_per_node = {c['housekeeping']}")
    text = text.replace('gpus = ["GPU2", "GPU3"]', f"gpus = {c['serve_b_gpus']}")
    if c["busy_poll"]:
        text = text.replace('gpus = ["GPU0", "GPU1"]', 'gpus = ["GPU0", "GPU1"]\nbusy_poll = true')
    if c["share"]:
        text = text.replace('gpus = ["GPU6", "GPU7"]', 'gpus = ["GPU6", "GPU7"]\nshare_cpus = true')
    if c["swappiness"] is not None:
        text += f'\n[sysctl]\n"vm.swappiness" = {c["swappiness"]}\n'
    return text


def _build(c: dict[str, object]) -> tuple[api.Plan, list[api.Artifact]]:
    spec = api.loads_spec(_spec(c), DGX / "node.toml")
    topo = api.read_topology(DGX / "topology.toml")
    plan, _ = api.compile_plan(spec, topo, spec_file=str(DGX / "node.toml"))
    return plan, api.emit(plan)


def _cost(old: dict[str, object], new: dict[str, object]) -> tuple[Disruption, dict[str, bytes]]:
    (p, a), (q, b) = _build(old), _build(new)
    before = {x.path: x.data for x in a}
    after = {x.path: x.data for x in b}
    changed = {
        k: after.get(k, b"") for k in set(before) | set(after) if before.get(k) != after.get(k)
    }
    return compute(state(p, a), state(q, b)), changed


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old=CHANGE, new=CHANGE)
def test_reboot_iff_kernel_arguments_differ_and_restarts_exactly_the_changed_dropins(
    old: dict[str, object], new: dict[str, object]
) -> None:
    cost, changed = _cost(old, new)
    assert cost.reboot == ("kernel-cmdline" in changed), (cost, sorted(changed))
    own = sorted(m.group(1) for path in changed if (m := DROPIN.match(path)))
    if cost.reboot:
        assert cost.restart == () and cost.live == (), "the reboot brings every new state"
    else:
        assert list(cost.restart) == own
    assert (cost.files == 0) == (old == new)


def test_a_sysctl_change_applies_live_and_restarts_nothing() -> None:
    base = {"swappiness": None, "housekeeping": 4, "serve_b_gpus": '["GPU2", "GPU3"]'}
    base |= {"busy_poll": False, "share": False}
    cost, _ = _cost(base, base | {"swappiness": 10})
    assert cost.to_json() | {"files": 0} == {
        "reboot": False,
        "restart": [],
        "kubelet_reset": False,
        "live": ["sysctl"],
        "later": [],
        "reboot_for": [],
        "files": 0,
        "summary": "live",
    }
    assert cost.line() == "applies live (sysctl); restarts nothing; no reboot"
    # a sysctl dropped from the build keeps its running value until the next boot
    back, _ = _cost(base | {"swappiness": 10}, base)
    assert not back.reboot
    # serve-b loses a GPU: node 0's two servers are placed anew, node 1's are not
    gpus, _ = _cost(base, base | {"serve_b_gpus": '["GPU2"]'})
    assert gpus.restart == ("serve-a.service", "serve-b.service") and not gpus.reboot


def _rke2_copy(tmp_path: Path, old: str, new: str) -> Path:
    shutil.copytree(RKE2, tmp_path / "r")
    spec = tmp_path / "r" / "node.toml"
    text = spec.read_text()
    assert old in text
    spec.write_text(text.replace(old, new))
    return spec


def test_a_kubelet_manager_change_says_drain_first(tmp_path: Path) -> None:
    new = _rke2_copy(
        tmp_path,
        'cpu_manager_policy_options = ["full-pcpus-only"]',
        "cpu_manager_policy_options = []",
    )
    r = run_hostc("diff", RKE2 / "node.toml", new, "--json")
    assert r.returncode == 1, r.stderr
    cost = json.loads(r.stdout)["disruption"]
    assert cost["kubelet_reset"] is True and cost["reboot"] is True
    assert cost["reboot_for"] == ["the kubelet's managers"]
    text = run_hostc("diff", RKE2 / "node.toml", new).stdout
    assert "kubelet reset at next boot: drain first" in text
    html = run_hostc("diff", RKE2 / "node.toml", new, "--format", "html").stdout
    assert "kubelet reset at next boot: drain first" in html


def test_a_kubelet_change_outside_the_managers_waits_for_its_next_start(tmp_path: Path) -> None:
    # (a hard-eviction memory threshold would change the managers' reserved memory)
    new = _rke2_copy(tmp_path, 'ephemeral_storage = "10Gi"', 'ephemeral_storage = "20Gi"')
    found = api.plan_diff(str(RKE2 / "node.toml"), str(new))
    assert found.disruption is not None
    assert not found.disruption.kubelet_reset
    assert "rke2-agent.service at its next start (kubelet configuration)" in (
        found.disruption.later
    )


def test_changed_compares_with_the_recorded_build(tmp_path: Path) -> None:
    shutil.copytree(DGX, tmp_path / "dgx")
    spec = tmp_path / "dgx" / "node.toml"
    out = tmp_path / "out"
    assert run_hostc("build", spec, "--out", out, "-q").returncode == 0
    same = run_hostc("changed", spec, "--out", out)
    assert (same.returncode, same.stdout) == (0, "no change on the host\n"), same.stderr
    spec.write_text(spec.read_text().replace('["GPU2", "GPU3"]', '["GPU2"]'))
    r = run_hostc("changed", spec, "--out", out, "--json")
    assert r.returncode == 1, r.stderr
    cost = json.loads(r.stdout)["disruption"]
    assert (cost["reboot"], cost["restart"]) == (False, ["serve-a.service", "serve-b.service"])
    missing = run_hostc("changed", spec, "--out", tmp_path / "none")
    assert missing.returncode == 2 and "no record of an earlier build" in missing.stderr
