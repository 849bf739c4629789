"""The kubelet's reserved CPUs as the kubelet itself shows them (issue 52; NTO e2e 28528).

Two views, the better first:

- the Node object, where the kubelet's kubeconfig is at hand on a live host: capacity
  minus allocatable CPU is what the kubelet reserves (with reservedSystemCPUs set it
  replaces kube- and system-reserved CPU by their count: cmd/kubelet/app/server.go), asked
  with the node's own credentials (`kubectl get node`, the Node authorizer lets a node
  read its own object), its answer stored in a capture like `systemctl show`'s;
- else the CPU manager's checkpoint (static policy): the kubelet validates it against its
  reserved set at every start (pkg/kubelet/cm/cpumanager/policy_static.go validateState):
  with strict-cpu-reservation the reserved CPUs are in neither the shared pool
  (defaultCpuSet) nor any container's exclusive set, so they are exactly the online CPUs
  outside both; without it they are all in the shared pool and in no exclusive set, and
  the checkpoint cannot name the set beyond that.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path

from hostc.audit.host import CAPTURED, HostReader
from hostc.audit.observe import Expect, Look
from hostc.audit.seen import Seen, absent
from hostc.cpuset import CpuListError, CpuSet
from hostc.diagnostics import HostcError
from hostc.inputs import loads_json
from hostc.knowledge.kubelet_access import KUBECTL_PATHS

#: Where a capture keeps the Node object's capacity and allocatable CPU.
NODE_CPU = f"{CAPTURED}/kubectl-node-cpu"
#: `kubectl get node -o jsonpath=…`: capacity, then allocatable
_JSONPATH = "jsonpath={.status.capacity.cpu} {.status.allocatable.cpu}"
_NODE_NAME = re.compile(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?")


def millicores(text: str) -> int | None:
    """A CPU quantity as the API server prints it (`64`, `61500m`, `1.5`), in millicores."""
    text = text.strip()
    if not re.fullmatch(r"[0-9]{1,12}(\.[0-9]{1,9})?m?", text):
        return None  # no sign, exponent, NaN or Infinity: not what the API server prints
    try:
        if text.endswith("m"):
            return int(text[:-1])
        return int(Decimal(text) * 1000)
    except (ValueError, InvalidOperation):
        return None


def _kubectl(host: HostReader, kubeconfig: str) -> str | None:
    """The Node object's `capacity allocatable` CPU: asked on a live host, read from a
    capture otherwise (an archive never runs commands)."""
    if not host.live:
        return host.text(NODE_CPU)
    # never read through `host`: what it reads goes into a capture, and this file holds
    # the node's credentials; a live host's root is /
    if not Path(kubeconfig).is_file():
        return None
    name = (host.text("/proc/sys/kernel/hostname") or "").strip().lower()
    exe = shutil.which("kubectl") or next((p for p in KUBECTL_PATHS if shutil.which(p)), None)
    if exe is None or not _NODE_NAME.fullmatch(name):
        return None
    argv = [exe, "--kubeconfig", kubeconfig, "--request-timeout=10s", "get", "node", name]
    try:
        done = subprocess.run(
            [*argv, "-o", _JSONPATH], capture_output=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    text = done.stdout.decode("utf-8", "replace")
    host.files[NODE_CPU] = text.encode("utf-8")
    return text


def _node_view(text: str, want: int) -> Seen | None:
    parts = text.split()
    got = [millicores(x) for x in parts] if len(parts) == 2 else []
    if len(got) != 2 or None in got:
        return None
    cap, alloc = got
    assert cap is not None and alloc is not None
    held = cap - alloc
    count = f"{held // 1000}" if held % 1000 == 0 else f"{held / 1000:g}"
    note = f"the Node object: capacity {parts[0]} − allocatable {parts[1]} CPU"
    return Seen(f"{count} CPUs", held == want * 1000, note)


def _checkpoint(host: HostReader, e: Expect, reserved: CpuSet) -> Seen:
    path, _, strict, online, _ = e.args
    text = host.text(path)
    if text is None:
        return absent(f"{path} does not exist (kubelet not installed or never started)")
    try:
        doc = loads_json(text, path, "kubelet checkpoint")
        default = CpuSet.parse(str(doc.get("defaultCpuSet", "")) or "")
        exclusive = CpuSet()
        for containers in (doc.get("entries") or {}).values():
            for cpus in containers.values():
                exclusive = exclusive | CpuSet.parse(str(cpus))
    except (HostcError, AttributeError, CpuListError, ValueError):
        return Seen(None, False, f"{path} is not a CPU manager checkpoint")
    if str(doc.get("policyName", "")).lower() != "static":
        return absent(f"the checkpoint's policy is {doc.get('policyName')!r}: no reserved set")
    if strict == "1":
        held = CpuSet.parse(online) - default - exclusive
        note = "the checkpoint: online CPUs in neither the shared pool nor an exclusive set"
        return Seen(f"{len(held)} CPUs ({held})", held == reserved, note)
    off = (reserved - default) | (reserved & exclusive)
    note = (
        "the checkpoint (without strict-cpu-reservation it shows only that the reserved "
        "CPUs stay in the shared pool; the kubelet's kubeconfig gives its count)"
    )
    if off:
        return Seen(f"{off} exclusive or out of the shared pool", False, note)
    return Seen(f"{reserved} in the shared pool, none exclusive", True, note)


def kubelet_reserved(host: HostReader, e: Expect) -> Seen:
    """args: the CPU checkpoint, the kubeconfig, "1" with strict-cpu-reservation, the
    online CPUs, the reserved CPUs; expected: `N CPUs (set)`."""
    reserved = CpuSet.parse(e.args[4])
    node = _kubectl(host, e.args[1])
    seen = _node_view(node, len(reserved)) if node is not None else None
    return seen if seen is not None else _checkpoint(host, e, reserved)


OBSERVERS: dict[Look, Callable[[HostReader, Expect], Seen]] = {
    Look.KUBELET_RESERVED: kubelet_reserved,
}
