"""What a booted host shows of hostc's kubeadm kubelet files, checked against the Plan.

The lifecycle VM (tests/vm/steps/step1.sh, step2.sh) installs the kubelet target's files
for tests/vm/v1-kubelet.toml beside stand-ins for the kubelet package's unit and kubeadm's
10-kubeadm.conf (tests/vm/kubeadm), and at the next boot reads back every `*.conf` in the
kubelet's drop-in folder, the unit's drop-ins, and the arguments systemd starts a
stand-in kubelet with (tests/vm/kubeadm/kubelet).  No real kubelet runs
in the guest: `problems` parses the drop-in as the kubelet's --config-dir loader does
(each file a whole KubeletConfiguration document with its own apiVersion and kind) and
compares it with the Plan's values.
"""

from __future__ import annotations

import posixpath
from typing import Any

import yaml

from hostc import api
from hostc.knowledge import kubelet as ko
from hostc.plan.model import Plan
from hostc.targets import kubelet as kt

#: kubeadm's drop-in, as the kubelet package ships it (tests/vm/kubeadm/10-kubeadm.conf)
KUBEADM_DROPIN = "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf"


def built(plan: Plan) -> dict[str, str]:
    """The kubelet target's files for `plan`, by path."""
    return {a.path: a.data.decode() for a in api.emit(plan, ["kubelet"]) if a.kind == "file"}


def eviction_hard(plan: Plan) -> dict[str, str]:
    """The evictionHard the Plan holds: memory.available and the other signals."""
    assert plan.kubelet is not None
    e = plan.kubelet.eviction
    return {"memory.available": str(e.memory), **dict(e.others)}


def _config_problems(plan: Plan, conf: str) -> list[str]:
    k = plan.kubelet
    assert k is not None
    try:
        doc: Any = yaml.safe_load(conf)
    except yaml.YAMLError as e:
        return [f"the drop-in is not YAML: {e}"]
    if not isinstance(doc, dict):
        return [f"the drop-in is no mapping: {conf[:200]!r}"]
    out = []
    kind = (doc.get("apiVersion"), doc.get("kind"))
    if kind != (kt.API_VERSION, "KubeletConfiguration"):
        out.append(f"apiVersion and kind {kind}: the kubelet rejects a drop-in without them")
    if doc.get("evictionHard") != eviction_hard(plan):
        out.append(
            f"evictionHard {doc.get('evictionHard')} is not the Plan's {eviction_hard(plan)}"
        )
    if k.version >= ko.CONFIG_DIR_SINCE and "imagefs.inodesFree" not in (
        doc.get("evictionHard") or {}
    ):
        out.append(f"kubelet {k.version}'s default imagefs.inodesFree is missing (review N6)")
    if doc.get("reservedSystemCPUs") != str(k.cpu.reserved):
        out.append(f"reservedSystemCPUs {doc.get('reservedSystemCPUs')} is not {k.cpu.reserved}")
    return out


def problems(plan: Plan, conf: str, unit: str, args: str) -> list[str]:
    """Why the guest's read-back is not the Plan's kubelet configuration; [] if it is.

    `conf`: every `*.conf` in the kubelet's drop-in folder, concatenated (hostc's alone
    there); `unit`: `systemctl show -p DropInPaths kubelet.service`; `args`: the
    arguments systemd started the stand-in kubelet with, one a line."""
    k = plan.kubelet
    assert k is not None and kt.config_dir_flag(k) is not None, "a kubeadm kubelet ≥ 1.30"
    path = kt.path(k)
    out = []
    if conf != built(plan)[kt.delivered(k)]:  # installed staged, put in place by the reset
        out.append(f"the kubelet's drop-in folder does not hold the build's {path}: {conf[:300]!r}")
    out += _config_problems(plan, conf)
    for dropin in (KUBEADM_DROPIN, kt.KUBELET_DROPIN):
        if dropin not in unit.split("=", 1)[-1].split():
            out.append(f"systemd did not read {dropin}: {unit!r}")
    # systemd keeps the last Environment= of a name: hostc's drop-in (90-) over kubeadm's (10-)
    argv = args.splitlines()
    for arg in (f"--config={ko.KUBEADM_CONFIG}", f"--config-dir={posixpath.dirname(path)}"):
        if argv.count(arg) != 1:
            out.append(f"the kubelet was not started with {arg} once: {argv}")
    return out
