"""kubelet: the CPU, topology and memory managers, spelled for the node's flavor.

kubeadm ≥ 1.30: a KubeletConfiguration drop-in in /etc/kubernetes/kubelet.conf.d, and a
kubelet.service drop-in that adds `--config-dir` (kubeadm's unit passes only
`--config`); older kubeadm kubelets get a whole KubeletConfiguration file to point
`--config` at.  RKE2 and k3s: a config.yaml.d drop-in whose `kubelet-arg+` list appends
kubelet flags (a plain `kubelet-arg` would replace every kubelet-arg set in
config.yaml).  Built as data and serialized by PyYAML; the reasons go in a comment block
on top.  Every delivery installs the config under /var/lib/hostc/staged (`delivered`),
never at the path the kubelet reads (`path`): /usr/local/sbin/hostc-kubelet-reset puts
it there.  A config whose manager settings changed goes into place together with the
checkpoints' removal, while no pod runs (before the kubelet's first start in a boot,
from hostc-kubelet-reset.service, so a fresh image's first boot starts with it, or on a
stopped kubelet); on a running kubelet it waits for the next boot and the running
kubelet's config stays in place, so a kubelet restart before the reboot never meets
checkpoints of other settings, not even between the install and the reset
(review-outputs-4 R9).  The staged file names the manager settings it carries
(`stamp_line`), so a reset of another build never puts it in place.  The boot unit
clears the checkpoints at every boot (MCO's kubelet-cleanup.service).  Where the
service manager's CPUAffinity= confines services to the housekeeping CPUs, a drop-in for
the container runtime gives it every CPU back (kernel ≥ 6.2 keeps an inherited affinity
inside a pod's cpuset: `hostc.knowledge.runtime`).
"""

from __future__ import annotations

from typing import Any

from hostc import vocab
from hostc.artifact import Action, Activation
from hostc.knowledge import kubelet as ko
from hostc.plan.kubelet import managers_stamp
from hostc.plan.model import KubeletPlan, Plan, Reason
from hostc.targets import _yaml
from hostc.targets._emitter import Emitter
from hostc.targets._escape import comment
from hostc.targets._render import header as host_header
from hostc.targets._render import render as render_template
from hostc.targets._systemd_syntax import env_assignment
from hostc.targets.lifecycle import ACTIVE, STAGED

API_VERSION = "kubelet.config.k8s.io/v1beta1"
DROPIN = "/etc/kubernetes/kubelet.conf.d/90-hostc.conf"
WHOLE = "/etc/kubernetes/hostc-kubelet-config.yaml"
RESET = "/usr/local/sbin/hostc-kubelet-reset"
RESET_UNIT = "hostc-kubelet-reset.service"
RESET_UNIT_PATH = f"/etc/systemd/system/{RESET_UNIT}"
KUBELET_DROPIN = "/etc/systemd/system/kubelet.service.d/90-hostc.conf"


def rancher_path(flavor: vocab.Flavor) -> str:
    return f"/etc/rancher/{flavor.value}/config.yaml.d/90-hostc.yaml"


def applies(plan: Plan) -> str | None:
    return None if plan.kubelet is not None else "the spec has no [kubelet] section"


def path(k: KubeletPlan) -> str:
    """Where the kubelet (or RKE2, k3s) reads hostc's configuration."""
    if k.flavor is not vocab.Flavor.KUBEADM:
        return rancher_path(k.flavor)
    return DROPIN if k.version >= ko.CONFIG_DIR_SINCE else WHOLE


def delivered(k: KubeletPlan) -> str:
    """Where the deliveries install it: staged, for hostc-kubelet-reset to put in place."""
    return STAGED + path(k)


def stamp_line(k: KubeletPlan) -> str:
    """The config's line that names the manager settings it carries: hostc-kubelet-reset
    puts a staged config in place only when it names the settings of its own build."""
    return f"# hostc managers: {managers_stamp(k)}"


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
    out["cpuManagerPolicy"] = k.cpu.policy.value
    if k.cpu.options:
        out["cpuManagerPolicyOptions"] = {o: "true" for o in k.cpu.options}
    out["reservedSystemCPUs"] = str(k.cpu.reserved)
    if k.topology is not None:
        if k.topology.policy is not None:
            out["topologyManagerPolicy"] = k.topology.policy.value
        if k.topology.scope is not None:
            out["topologyManagerScope"] = k.topology.scope.value
        if k.topology.options:
            out["topologyManagerPolicyOptions"] = dict(k.topology.options)
    if k.memory is not None:
        out["memoryManagerPolicy"] = k.memory.policy.value
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
    """The comment block on top of the YAML: the shared first line (it never named the
    role here), how to apply, how the kubelet reads it, and every reason."""
    lines = [
        host_header(plan, role=False).line,
        comment(
            f"Installed in {STAGED}, never at {path(k)} directly: {RESET} puts it there, "
            "and clears "
            + " and ".join(state_files(k))
            + " first if these CPU or memory settings changed, only while no pod runs "
            f"(before {k.unit} starts at boot, or on a stopped kubelet); until then the "
            "kubelet keeps the configuration its checkpoints were made for.  An unchanged "
            "re-apply restarts nothing and checks that the kubelet runs these policies."
        ),
        stamp_line(k),
    ]
    if k.flavor is vocab.Flavor.KUBEADM and k.version < ko.CONFIG_DIR_SINCE:
        lines.append(
            comment(
                f"kubelet {k.version} has no --config-dir (beta in {ko.CONFIG_DIR_SINCE}): "
                "merge these fields into the kubelet's configuration (kubeadm: "
                f"{ko.KUBEADM_CONFIG}, or the KubeletConfiguration in the kubeadm "
                f"config), or run the kubelet with --config={WHOLE} once this file also "
                "carries the rest of it."
            )
        )
    elif k.flavor is vocab.Flavor.KUBEADM:
        lines.append(
            comment(
                f"Read with --config-dir={ko.CONFIG_DIR}, which {KUBELET_DROPIN} adds "
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
    data: dict[str, Any]
    data = config(k) if k.flavor is vocab.Flavor.KUBEADM else {"kubelet-arg+": flags(k)}
    body = _yaml.dump(data, default_flow_style=False, width=1000)
    return "\n".join(header(plan, k)) + "\n" + body


def state_files(k: KubeletPlan) -> list[str]:
    """The managers' checkpoints a new policy or reservation must not meet."""
    return [ko.CPU_STATE] + ([ko.MEMORY_STATE] if k.memory is not None else [])


def checkpoints(k: KubeletPlan) -> list[tuple[str, str]]:
    """Each checkpoint with the policyName the kubelet writes into it under this config."""
    rows: list[tuple[str, str]] = [(ko.CPU_STATE, k.cpu.policy)]
    if k.memory is not None:
        rows.append((ko.MEMORY_STATE, k.memory.policy))
    return rows


def config_dir_flag(k: KubeletPlan) -> str | None:
    """kubeadm ≥ 1.30 reads hostc's drop-in only with this flag on the command line."""
    if k.flavor is vocab.Flavor.KUBEADM and k.version >= ko.CONFIG_DIR_SINCE:
        return f"--config-dir={ko.CONFIG_DIR}"
    return None


def reset_script(plan: Plan, k: KubeletPlan) -> str:
    rows = checkpoints(k)
    return render_template(
        "hostc-kubelet-reset.sh.j2",
        host=host_header(plan),
        unit=k.unit,
        checkpoints=rows,
        policies=", ".join(p for _, p in rows),
        stamp=managers_stamp(k),
        stamp_line=stamp_line(k),
        stamp_file=ko.STAMP,
        config_dir=config_dir_flag(k),
        config=path(k),
        staged=STAGED,
        active=ACTIVE,
    )


def emit(plan: Plan, out: Emitter) -> None:
    k = plan.kubelet
    if k is None:
        return
    host = host_header(plan)
    takes_effect = Activation(Action.RUN, RESET)
    out.file(delivered(k), render(plan, k), takes_effect)
    out.file(RESET, reset_script(plan, k), Activation(Action.RUN), mode=0o755)
    out.unit(
        RESET_UNIT_PATH,
        render_template("hostc-kubelet-reset.service.j2", host=host, unit=k.unit, script=RESET),
        RESET_UNIT,
    )
    flag = config_dir_flag(k)
    if flag is not None:
        value = env_assignment(ko.KUBEADM_CONFIG_ARGS, f"--config={ko.KUBEADM_CONFIG} {flag}")
        text = render_template("kubelet-config-dir.conf.j2", host=host, value=value)
        out.file(KUBELET_DROPIN, text, Activation(Action.DAEMON_RELOAD), takes_effect)
    r = k.runtime  # every CPU for the container runtime where the manager confines services
    if r is not None:
        text = render_template("runtime-cpuaffinity.conf.j2", host=host, r=r)
        out.file(
            f"/etc/systemd/system/{r.unit}.d/90-hostc-cpuaffinity.conf",
            text,
            Activation(Action.DAEMON_RELOAD),
            Activation(Action.REBOOT),
        )
