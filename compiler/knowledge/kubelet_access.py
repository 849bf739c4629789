"""How hostc audit asks the API server about the node it audits: the kubeconfig each
kubelet flavour holds, and where kubectl is.  Read only by `hostc.audit.reserved`."""

from __future__ import annotations

from hostc.knowledge.table import Table
from hostc.vocab import Flavor

#: The kubeconfig each flavour's kubelet reaches the API server with: the node's own
#: credentials, which the Node authorizer lets read the node's own Node object
#: (capacity and allocatable, hostc audit's view of the kubelet's reserved CPUs).
KUBELET_KUBECONFIG: Table[Flavor, str] = Table(
    {
        Flavor.KUBEADM: (
            "/etc/kubernetes/kubelet.conf",
            "kubernetes/release kubeadm 10-kubeadm.conf: KUBELET_KUBECONFIG_ARGS=... "
            "--kubeconfig=/etc/kubernetes/kubelet.conf (tests/vm/kubeadm/10-kubeadm.conf)",
        ),
        Flavor.RKE2: (
            "/var/lib/rancher/rke2/agent/kubelet.kubeconfig",
            "k3s-io/k3s pkg/agent/config/config.go (RKE2 runs k3s's agent): "
            'filepath.Join(envInfo.DataDir, "agent", "kubelet.kubeconfig"), RKE2\'s data-dir '
            "/var/lib/rancher/rke2",
        ),
        Flavor.K3S: (
            "/var/lib/rancher/k3s/agent/kubelet.kubeconfig",
            "k3s-io/k3s pkg/agent/config/config.go: "
            'filepath.Join(envInfo.DataDir, "agent", "kubelet.kubeconfig"), data-dir '
            "/var/lib/rancher/k3s",
        ),
    }
)
#: kubectl where it is not on PATH: RKE2 installs it beside its own binaries (RKE2 docs,
#: cluster access: /var/lib/rancher/rke2/bin/kubectl); k3s links /usr/local/bin/kubectl.
KUBECTL_PATHS: Table[str, str] = Table(
    {
        "/var/lib/rancher/rke2/bin/kubectl": (
            "rke2",
            "RKE2 docs, cluster access: /var/lib/rancher/rke2/bin/kubectl",
        ),
    }
)
