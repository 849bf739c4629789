"""The kubelet's settings in the catalog, by their KubeletConfiguration field name.

A file target writes a field (`cpuManagerPolicy: static`) or, for RKE2, the flag
(`- cpu-manager-policy=static`): both spellings carry the setting.  A running
kubelet shows its configuration at its `configz` endpoint, through the API server's
node proxy."""

from __future__ import annotations

import re

from hostc.plan.model import Plan, Reason
from hostc.report.catalog import Carrier, CatalogEntry

#: KubeletConfiguration field → kubelet flag (kubelet reference, "kubelet --help")
FLAGS = {
    "cpuManagerPolicy": "cpu-manager-policy",
    "cpuManagerPolicyOptions": "cpu-manager-policy-options",
    "reservedSystemCPUs": "reserved-cpus",
    "topologyManagerPolicy": "topology-manager-policy",
    "topologyManagerScope": "topology-manager-scope",
    "memoryManagerPolicy": "memory-manager-policy",
    "kubeReserved": "kube-reserved",
    "systemReserved": "system-reserved",
    "evictionHard": "eviction-hard",
    "reservedMemory": "reserved-memory",
}


def _spelled(field: str) -> Carrier:
    flag = re.escape(FLAGS[field])
    pattern = re.compile(rf'^\s*(?:"?{field}"?\s*:|-\s+{flag}[=+]|--{flag}=)')
    return lambda _path, line: pattern.search(line) is not None


def _entry(field: str, value: str, reason: Reason) -> CatalogEntry:
    return CatalogEntry(
        field,
        value,
        reason,
        "service",
        _spelled(field),
        (f"kubectl get --raw /api/v1/nodes/<node>/proxy/configz (kubeletconfig.{field})",),
    )


def kubelet(plan: Plan) -> list[CatalogEntry]:
    k = plan.kubelet
    if k is None:
        return []
    out = [
        _entry("cpuManagerPolicy", k.cpu.policy, k.cpu.reason),
        _entry("reservedSystemCPUs", str(k.cpu.reserved), k.cpu.reserved_reason),
    ]
    if k.cpu.options:
        out.append(_entry("cpuManagerPolicyOptions", ",".join(k.cpu.options), k.cpu.reason))
    t = k.topology
    if t is not None and t.policy:
        out.append(_entry("topologyManagerPolicy", t.policy, t.reason))
    if t is not None and t.scope:
        out.append(_entry("topologyManagerScope", t.scope, t.reason))
    if k.memory is not None:
        out.append(_entry("memoryManagerPolicy", k.memory.policy, k.memory.reason))
    for field, r in (("kubeReserved", k.kube_reserved), ("systemReserved", k.system_reserved)):
        if r is not None and (r.memory or r.ephemeral_storage):
            parts = [
                f"memory={r.memory}" if r.memory else "",
                f"ephemeral-storage={r.ephemeral_storage}" if r.ephemeral_storage else "",
            ]
            out.append(_entry(field, ",".join(p for p in parts if p), r.reason))
    out.append(_entry("evictionHard", f"memory.available<{k.eviction.memory}", k.eviction.reason))
    if k.memory_manager_static and k.reserved_memory:
        value = ",".join(f"{r.node}:memory={r.memory}" for r in k.reserved_memory)
        out.append(_entry("reservedMemory", value, k.reserved_memory_reason))
    return out
