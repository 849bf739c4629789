"""kubelet: the CPU, topology and memory managers, spelled for the node's flavor.

kubeadm ≥ 1.30: a KubeletConfiguration drop-in in /etc/kubernetes/kubelet.conf.d
(read with `--config-dir`); older kubeadm kubelets get a whole KubeletConfiguration
file to point `--config` at.  RKE2 and k3s: a config.yaml.d drop-in whose
`kubelet-arg+` list appends kubelet flags (a plain `kubelet-arg` would replace
every kubelet-arg set in config.yaml).  Built as data and serialized by PyYAML;
the reasons go in a comment block on top.  A second artifact,
/usr/local/sbin/hostc-kubelet-reset, takes the config into effect: it stops the
kubelet (when running), removes the managers' checkpoints and starts it again.
A changed policy or reserved set with a stale checkpoint makes the kubelet
crash-loop, and removing the checkpoint under a running kubelet races with it.
"""

from __future__ import annotations

from typing import Any

from hostc import kubelet_options as ko
from hostc.artifact import Action, Activation, Artifact, file
from hostc.plan import KubeletPlan, Plan, Reason
from hostc.targets._escape import comment

TARGET = "kubelet"
API_VERSION = "kubelet.config.k8s.io/v1beta1"
DROPIN = "/etc/kubernetes/kubelet.conf.d/90-hostc.conf"
WHOLE = "/etc/kubernetes/hostc-kubelet-config.yaml"
RESET = "/usr/local/sbin/hostc-kubelet-reset"


def rancher_path(flavor: ko.Flavor) -> str:
    return f"/etc/rancher/{flavor.value}/config.yaml.d/90-hostc.yaml"


def applies(plan: Plan) -> str | None:
    return None if plan.kubelet is not None else "the spec has no [kubelet] section"


def path(k: KubeletPlan) -> str:
    if k.flavor is not ko.Flavor.KUBEADM:
        return rancher_path(k.flavor)
    return DROPIN if k.version >= ko.CONFIG_DIR_SINCE else WHOLE


def _reserved(r: Any) -> dict[str, str]:
    out = {}
    if r is not None and r.memory is not None:
        out["memory"] = str(r.memory)
    if r is not None and r.ephemeral_storage is not None:
        out["ephemeral-storage"] = str(r.ephemeral_storage)
    return out


def _eviction(k: KubeletPlan) -> dict[str, str]:
    return dict(
        sorted({"memory.available": str(k.eviction.memory), **dict(k.eviction.others)}.items())
    )


def config(k: KubeletPlan) -> dict[str, Any]:
    """The KubeletConfiguration v1beta1 fields hostc owns, as data."""
    out: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "KubeletConfiguration"}
    out["cpuManagerPolicy"] = k.cpu.policy
    if k.cpu.options:
        out["cpuManagerPolicyOptions"] = {o: "true" for o in k.cpu.options}
    out["reservedSystemCPUs"] = str(k.cpu.reserved)
    if k.topology is not None:
        if k.topology.policy is not None:
            out["topologyManagerPolicy"] = k.topology.policy
        if k.topology.scope is not None:
            out["topologyManagerScope"] = k.topology.scope
        if k.topology.options:
            out["topologyManagerPolicyOptions"] = dict(k.topology.options)
    if k.memory is not None:
        out["memoryManagerPolicy"] = k.memory.policy
    for key, r in (("kubeReserved", k.kube_reserved), ("systemReserved", k.system_reserved)):
        if values := _reserved(r):
            out[key] = values
    out["evictionHard"] = _eviction(k)
    if k.memory_manager_static:
        out["reservedMemory"] = [
            {"numaNode": r.node, "limits": {"memory": str(r.memory)}} for r in k.reserved_memory
        ]
    if k.cpu.alpha_gate:
        out["featureGates"] = {ko.ALPHA_GATE: True}
    return out


def flags(k: KubeletPlan) -> list[str]:
    """The same settings as kubelet flags (`kubelet --help` names), one list item each."""
    out = [f"reserved-cpus={k.cpu.reserved}", f"cpu-manager-policy={k.cpu.policy}"]
    if k.cpu.options:
        out.append("cpu-manager-policy-options=" + ",".join(f"{o}=true" for o in k.cpu.options))
    if k.topology is not None:
        if k.topology.policy is not None:
            out.append(f"topology-manager-policy={k.topology.policy}")
        if k.topology.scope is not None:
            out.append(f"topology-manager-scope={k.topology.scope}")
        if k.topology.options:
            out.append(
                "topology-manager-policy-options="
                + ",".join(f"{name}={value}" for name, value in k.topology.options)
            )
    if k.memory is not None:
        out.append(f"memory-manager-policy={k.memory.policy}")
    if k.memory_manager_static:
        # one repeated flag per node (kubelet docs: `--reserved-memory 0:memory=1Gi
        # --reserved-memory 1:memory=2Gi`), never a separator inside one value
        out += [f"reserved-memory={r.node}:memory={r.memory}" for r in k.reserved_memory]
    for name, r in (("kube-reserved", k.kube_reserved), ("system-reserved", k.system_reserved)):
        if values := _reserved(r):
            out.append(f"{name}=" + ",".join(f"{a}={b}" for a, b in values.items()))
    out.append("eviction-hard=" + ",".join(f"{s}<{v}" for s, v in _eviction(k).items()))
    if k.cpu.alpha_gate:
        out.append(f"feature-gates={ko.ALPHA_GATE}=true")
    return out


def _reasons(k: KubeletPlan) -> list[tuple[str, Reason]]:
    rows = [
        ("kubelet", k.reason),
        ("reserved CPUs", k.cpu.reserved_reason),
        ("CPU manager", k.cpu.reason),
    ]
    if k.topology is not None:
        rows.append(("topology manager", k.topology.reason))
    if k.memory is not None:
        rows.append(("memory manager", k.memory.reason))
    if k.kube_reserved is not None:
        rows.append(("kube-reserved", k.kube_reserved.reason))
    if k.system_reserved is not None:
        rows.append(("system-reserved", k.system_reserved.reason))
    rows.append(("eviction-hard", k.eviction.reason))
    if k.memory_manager_static:
        rows.append(("reserved memory", k.reserved_memory_reason))
    return rows


def header(plan: Plan, k: KubeletPlan) -> list[str]:
    lines = [
        comment(f"Managed by hostc for {plan.host.name}; regenerate, do not edit."),
        comment(
            f"Apply: drain the node, then run {RESET}: it stops {k.unit}, removes "
            + " and ".join(state_files(k))
            + " and starts it again (a changed policy with a stale checkpoint crash-loops)."
        ),
    ]
    if k.flavor is ko.Flavor.KUBEADM and k.version < ko.CONFIG_DIR_SINCE:
        lines.append(
            comment(
                f"kubelet {k.version} has no --config-dir (beta in {ko.CONFIG_DIR_SINCE}): "
                "merge these fields into the kubelet's configuration (kubeadm: "
                "/var/lib/kubelet/config.yaml, or the KubeletConfiguration in the kubeadm "
                f"config), or run the kubelet with --config={WHOLE} once this file also "
                "carries the rest of it."
            )
        )
    elif k.flavor is ko.Flavor.KUBEADM:
        lines.append(
            comment(
                "Read only when the kubelet runs with --config-dir=/etc/kubernetes/kubelet.conf.d "
                "(files apply in name order; lists such as reservedMemory replace, maps merge)."
            )
        )
    else:
        lines.append(
            comment(
                f"{k.flavor} appends these kubelet flags (kubelet-arg+) to config.yaml's; set "
                "none of them elsewhere: repeated reserved-memory flags add up."
            )
        )
    lines += [comment(f"{what}: {r}") for what, r in _reasons(k)]
    return lines


def render(plan: Plan, k: KubeletPlan) -> str:
    import yaml  # type: ignore[import-untyped, unused-ignore]

    data: dict[str, Any]
    data = config(k) if k.flavor is ko.Flavor.KUBEADM else {"kubelet-arg+": flags(k)}
    body: str = yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=1000)
    return "\n".join(header(plan, k)) + "\n" + body


def state_files(k: KubeletPlan) -> list[str]:
    """The managers' checkpoints a new policy or reservation must not meet."""
    return [ko.CPU_STATE] + ([ko.MEMORY_STATE] if k.memory is not None else [])


def reset_script(plan: Plan, k: KubeletPlan) -> str:
    from hostc.targets._render import render as render_template

    return render_template(
        "hostc-kubelet-reset.sh.j2", plan=plan, unit=k.unit, files=state_files(k)
    )


def emit(plan: Plan) -> list[Artifact]:
    k = plan.kubelet
    if k is None:
        return []
    takes_effect = Activation(Action.RUN, RESET)
    return [
        file(TARGET, path(k), render(plan, k), takes_effect),
        file(TARGET, RESET, reset_script(plan, k), Activation(Action.RUN), mode=0o755),
    ]
