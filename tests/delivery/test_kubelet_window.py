"""A kubelet configuration change never crash-loops the kubelet, whatever restarts it
between the apply and the reboot (review N3, K10).

A stub kubelet stands in for rke2-agent: at each start it reads the CPU and memory
manager policies from hostc's config.yaml.d drop-in and refuses a checkpoint written
under another policy with the kubelet's own words (kubelet `cpumanager/state/
state_checkpoint.go`, as quoted by the Kubernetes docs "Changing the CPU Manager Policy":
"could not restore state from checkpoint: configured policy "static" differs from state
checkpoint policy "none", please drain this node and delete the CPU manager checkpoint
file "/var/lib/kubelet/cpu_manager_state" before restarting Kubelet"; the memory
manager's "[memorymanager] configured policy … differs from state checkpoint policy …"),
otherwise it writes its checkpoints, as the kubelet does.  hostc-kubelet-reset runs by
dash on a host tree (HOSTC_ROOT) with a systemctl stub saying whether the unit runs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hostc import api, vocab
from hostc.knowledge import kubelet as ko
from hostc.targets import kubelet as tk
from hostc.targets.lifecycle import ACTIVE, STAGED

from conftest import ROOT, need_tool

RKE2 = ROOT / "examples" / "dgx-h100-rke2" / "node.toml"
CONFIG = tk.rancher_path(vocab.Flavor.RKE2)

#: the stub kubelet: `cpu-manager-policy=` and `memory-manager-policy=` from the drop-in
#: (the kubelet's defaults none and None without it), the checkpoints' policyName
KUBELET = r"""set -eu
root=$HOSTC_ROOT
conf=$root/etc/rancher/rke2/config.yaml.d/90-hostc.yaml
flag() { sed -n "s/^- $1=//p" "$conf" 2>/dev/null | head -n 1; }
cpu=$(flag cpu-manager-policy) mem=$(flag memory-manager-policy)
cpu=${cpu:-none} mem=${mem:-None}
state=$root/var/lib/kubelet
was() { sed -n 's/.*"policyName": *"\([A-Za-z-]*\)".*/\1/p' "$1" 2>/dev/null || true; }
cpu_was=$(was "$state/cpu_manager_state") mem_was=$(was "$state/memory_manager_state")
if [ -f "$state/cpu_manager_state" ] && [ "$cpu_was" != "$cpu" ]; then
    m='could not restore state from checkpoint: configured policy "%s" differs from state'
    m="$m checkpoint policy \"%s\", please drain this node and delete the CPU manager"
    m="$m checkpoint file \"%s\" before restarting Kubelet"
    printf "$m\n" "$cpu" "$cpu_was" /var/lib/kubelet/cpu_manager_state >&2
    exit 1
fi
if [ -f "$state/memory_manager_state" ] && [ "$mem_was" != "$mem" ]; then
    m='[memorymanager] configured policy "%s" differs from state checkpoint policy "%s"'
    printf "$m\n" "$mem" "$mem_was" >&2
    exit 1
fi
mkdir -p "$state"
printf '{"policyName":"%s","defaultCpuSet":"0-223"}' "$cpu" >"$state/cpu_manager_state"
printf '{"policyName":"%s","machineState":{},"checksum":2}' "$mem" >"$state/memory_manager_state"
echo "kubelet: started with $cpu/$mem"
"""


class Host:
    """A host tree with rke2-agent's kubelet, hostc-kubelet-reset, and a systemctl stub."""

    def __init__(self, tmp: Path) -> None:
        self.dash = need_tool("dash")
        self.root = tmp / "root"
        (self.root / "var/lib/kubelet").mkdir(parents=True)
        self.running = tmp / "running"  # present: the unit is active
        bindir = tmp / "bin"
        bindir.mkdir()
        stub = bindir / "systemctl"
        stub.write_text(
            f'#!/bin/sh\ncase "$1" in is-active) [ -e {self.running} ] && exit 0; exit 3;; '
            "show) echo 0;; esac\nexit 0\n"
        )
        stub.chmod(0o755)
        plan, _ = api.compile_file(RKE2)
        arts = {a.path: a for a in api.emit(plan, ["kubelet"])}
        # the config as the build delivers it, wherever the build installs it
        (self.delivered,) = (p for p, a in arts.items() if b"kubelet-arg+" in a.data)
        self.config = arts[self.delivered].data
        self.reset = tmp / "reset"
        self.reset.write_bytes(arts[tk.RESET].data)
        self.env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}",
                    "HOSTC_ROOT": str(self.root)}  # fmt: skip

    def path(self, p: str) -> Path:
        return self.root / p.lstrip("/")

    def install(self, data: bytes) -> None:
        """What a delivery does: the drop-in written at the build's path for it."""
        self.path(self.delivered).parent.mkdir(parents=True, exist_ok=True)
        self.path(self.delivered).write_bytes(data)

    def sh(self, script: str, *args: str) -> subprocess.CompletedProcess[str]:
        argv = [self.dash, "-c", script, "sh", *args]
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, check=False)

    def reset_(self, *args: str) -> subprocess.CompletedProcess[str]:
        r = self.sh(self.reset.read_text(), *args)
        assert r.returncode == 0, r.stderr
        return r

    def start(self) -> None:
        """The kubelet (re)started: rke2 upgrade, OOM, Restart=always, an admin."""
        r = self.sh(KUBELET)
        assert r.returncode == 0, "the kubelet crash-loops: " + r.stderr
        self.running.touch()

    def reboot(self) -> None:
        """No pod survives; hostc-kubelet-reset.service runs before the kubelet."""
        self.running.unlink(missing_ok=True)
        self.reset_("--boot")
        self.start()


def _policy(host: Host) -> str:
    return host.path(ko.CPU_STATE).read_text().split('"')[3]


@pytest.fixture
def host(tmp_path: Path) -> Host:
    """A node that ran rke2's kubelet before hostc: policy none, pods running."""
    h = Host(tmp_path)
    h.start()
    assert _policy(h) == "none"
    return h


def test_a_kubelet_restart_between_apply_and_reboot_keeps_the_running_policy(host: Host) -> None:
    host.install(host.config)
    r = host.reset_()
    host.start()  # before the reboot: the settings its checkpoints were made for
    assert _policy(host) == "none"
    assert "goes into place at the next boot" in r.stderr
    assert not host.path(CONFIG).exists(), "no hostc configuration before: none in place"
    assert host.path(STAGED + CONFIG).read_bytes() == host.config
    host.install(host.config)  # the same delivery again (apply.sh reinstalls every file)
    host.reset_()
    host.start()
    host.reboot()
    assert _policy(host) == "static"
    assert host.path(CONFIG).read_bytes() == host.config
    assert host.path(ACTIVE + CONFIG).read_bytes() == host.config
    assert host.path(STAGED + CONFIG).read_bytes() == host.config  # as delivered
    host.start()  # after the reboot, restarts are as safe
    host.reset_()  # an unchanged re-apply on the running kubelet
    host.start()
    assert host.path(CONFIG).read_bytes() == host.config


def test_a_second_change_before_the_reboot_puts_the_running_configuration_back(
    host: Host,
) -> None:
    """Two builds in a row on a running static kubelet: the newest waits, the one its
    checkpoints were made for stays in place (and a push that found the staged file
    current and wrote nothing leaves both as they are)."""
    host.install(host.config)
    host.reset_()
    host.reboot()
    newer = host.config.replace(b"reserved-cpus=0-3,", b"reserved-cpus=0-5,")
    newer = newer.replace(b"reserved=0-3,", b"reserved=0-5,")  # the managers it names
    assert newer != host.config
    script = host.reset.read_text().replace("reserved=0-3,", "reserved=0-5,")
    host.reset.write_text(script)  # the newer build's script: its own stamp
    host.install(newer)
    host.reset_()
    assert host.path(CONFIG).read_bytes() == host.config
    assert host.path(STAGED + CONFIG).read_bytes() == newer
    host.reset_()  # an Ansible push: the staged file counts as held, nothing rewritten
    assert host.path(STAGED + CONFIG).read_bytes() == newer
    host.start()
    host.reboot()
    assert host.path(CONFIG).read_bytes() == newer


def test_a_kubelet_restart_between_install_and_reset_keeps_the_running_policy(
    host: Host,
) -> None:
    """Every delivery installs the files first and runs hostc-kubelet-reset later (the
    rootfs apply.sh after a daemon-reload that may stop it, the Ansible play in a
    handler): a config installed at the path the kubelet reads was live in between, and a
    kubelet restart there crash-looped on the old checkpoints (review-outputs-4 R9).  It
    is installed staged; the reset and the boot unit put it in place."""
    host.install(host.config)
    host.start()  # a restart before the reset ran: the configuration it already had
    assert _policy(host) == "none" and not host.path(CONFIG).exists()
    assert host.delivered == STAGED + CONFIG
    host.reset_()
    host.reboot()  # a fresh image's first boot takes the same path: staged, then the boot unit
    assert _policy(host) == "static"


def test_a_staged_configuration_of_another_build_never_goes_into_place(host: Host) -> None:
    """A delivery cut between the config and the reset script leaves a config another
    build's reset would take while the kubelet runs: the config names the manager
    settings it carries, and a reset of other settings drops it."""
    host.install(host.config)
    host.reboot()
    newer = host.config.replace(b"reserved-cpus=0-3,", b"reserved-cpus=0-5,")
    newer = newer.replace(b"reserved=0-3,", b"reserved=0-5,")
    host.install(newer)  # the new config in; the reset on the host is still this build's
    r = host.reset_()  # unchanged for this build's script: it checks and puts nothing live
    assert "unchanged" in r.stdout
    assert host.path(CONFIG).read_bytes() == host.config
    assert not host.path(STAGED + CONFIG).exists()
    host.start()
    assert _policy(host) == "static"


def test_revert_removes_the_configuration_the_reset_put_in_place(
    host: Host, tmp_path: Path
) -> None:
    """The manifest lists the staged path, the one the delivery installed; the copy at
    the path the kubelet reads goes too."""
    from hostc.targets import lifecycle

    plan, _ = api.compile_file(RKE2)
    arts = {a.path: a for a in api.emit(plan, ["rootfs"]) if a.path.startswith("/")}
    for p in (lifecycle.NEW_MANIFEST, lifecycle.REVERT):
        host.path(p).parent.mkdir(parents=True, exist_ok=True)
        host.path(p).write_bytes(arts[p].data)
    host.install(host.config)
    host.reboot()
    assert host.path(CONFIG).exists()
    r = host.sh(host.path(lifecycle.REVERT).read_text())
    assert r.returncode == 0, r.stderr
    assert not host.path(CONFIG).exists() and not host.path(STAGED + CONFIG).exists()


def test_checkpoints_are_cleared_at_every_boot(host: Host) -> None:
    """MCO's kubelet-cleanup.service: whatever changed under the same configuration (a
    BIOS SMT toggle, offlined CPUs: kubernetes #110478), the kubelet starts afresh."""
    host.install(host.config)
    host.reboot()
    cpu = host.path(ko.CPU_STATE)
    cpu.write_text('{"policyName":"static","defaultCpuSet":"0-111","checksum":9}')
    host.running.unlink()
    host.reset_("--boot")
    assert not cpu.exists()
    host.running.touch()  # a restart of the boot unit under a running kubelet clears nothing
    host.start()
    host.reset_("--boot")
    assert cpu.exists()
