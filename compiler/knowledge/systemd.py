"""The systemd units a workload may never be, and the other names systemd knows them by.

A workload gets a drop-in `<unit>.d/90-hostc.conf`: CPUAffinity=, NUMAPolicy= and
AllowedCPUs= on the isolated CPUs, `After=`/`Wants=hostc-tuning.service`.  Two kinds of
unit must never receive it:

- the units hostc writes, configures, stops or restarts itself (hostc-*.service,
  irqbalance, TuneD, the kubelet of each flavour, the container runtimes) and the
  units hostc's own units order themselves after (openibd, the NVIDIA daemons): the
  drop-in would pin what hostc reasons about (a runtime's every container), or its
  `After=hostc-tuning.service` closes an ordering cycle;
- systemd's early-boot and system infrastructure: units with DefaultDependencies=no
  that run before sysinit.target or basic.target (systemd-modules-load, which hostc's
  apply restarts, systemd-sysctl, udevd, journald, the bus), and the login
  infrastructure (logind, getty, the user managers).  hostc-tuning.service has default
  dependencies (After=sysinit.target basic.target), so a drop-in that orders such a
  unit after it is a cycle, and systemd breaks a cycle by dropping a start job.

systemd reads a unit's drop-ins under every name the unit has: its file name and each
alias (an `Alias=` symlink made at `systemctl enable`, or one a package ships), and an
alias of a template covers each of its instances (systemd.unit(5), "Aliases"; drop-ins
of aliases since systemd 245, commit 2e93770f "man: document alias rules and aliases
dropin loading").  So a name is judged by the unit it is: an instance by its template,
an alias by its unit (`reserved`).  systemd compares unit names byte for byte (no case
folding), and hostc's own spelling rule (`<name>.service` when `unit` is not given;
check.runtime refuses a `unit` without its type suffix) leaves no other spelling.
"""

from __future__ import annotations

from hostc.knowledge.table import Table

_HOSTC_ORDERS = (
    "hostc targets/systemd.py DRIVER_UNITS and targets/templates/hostc-gpudirect.service.j2: "
    "hostc-tuning.service and hostc-gpudirect.service are After= it, so a workload drop-in "
    "(After=hostc-tuning.service) would close an ordering cycle"
)
_SYSTEMD_UNITS = "systemd units/meson.build (the units systemd ships and their symlinks)"

#: Each unit a workload may never be → what it is (the error's reason).  Every row's
#: source is the unit file its package ships (with or without `Alias=`, which
#: `ALIASES` lists) and why hostc reserves it.
RESERVED: Table[str, str] = Table(
    {
        "irqbalance.service": (
            "irqbalance, which hostc configures (its drop-in bans the isolated CPUs) or stops "
            '(irq.owner = "hostc")',
            "Irqbalance/irqbalance misc/irqbalance.service (no Alias=); hostc targets/systemd.py",
        ),
        "tuned.service": (
            'TuneD, which applies hostc\'s profile (runtime.owner = "tuned") or which '
            "hostc-tuning.service stops first (Conflicts=)",
            "redhat-performance/tuned tuned.service (no Alias=); hostc lower/runtime.py services",
        ),
        "kubelet.service": (
            "the kubelet hostc configures (kubeadm)",
            "kubernetes/release cmd/kubepkg/templates/latest/deb/kubelet/lib/systemd/system/"
            "kubelet.service (no Alias=)",
        ),
        "rke2-server.service": (
            "RKE2's server, which runs the kubelet hostc configures and its containerd",
            "rancher/rke2 bundle/lib/systemd/system/rke2-server.service (no Alias=)",
        ),
        "rke2-agent.service": (
            "RKE2's agent, which runs the kubelet hostc configures and its containerd",
            "rancher/rke2 bundle/lib/systemd/system/rke2-agent.service (no Alias=)",
        ),
        "k3s.service": (
            "k3s's server, which runs the kubelet hostc configures and its containerd",
            "k3s-io/k3s install.sh create_systemd_service_file (no Alias=)",
        ),
        "k3s-agent.service": (
            "k3s's agent, which runs the kubelet hostc configures and its containerd",
            "k3s-io/k3s install.sh create_systemd_service_file (no Alias=)",
        ),
        "containerd.service": (
            "containerd, the container runtime hostc configures: every container it starts "
            "would inherit the workload's CPUs",
            "containerd/containerd containerd.service (no Alias=)",
        ),
        "crio.service": (
            "CRI-O, the container runtime hostc configures: every container it starts "
            "(conmon, runc) would inherit the workload's CPUs",
            "cri-o/cri-o contrib/systemd/crio.service ([Install] Alias=cri-o.service)",
        ),
        "docker.service": (
            "Docker's engine: the containers it starts (and a containerd it starts itself) "
            "would inherit the workload's CPUs",
            "docker/docker-ce-packaging systemd/docker.service (no Alias=)",
        ),
        "openibd.service": (
            "MLNX_OFED's driver loader, which hostc orders itself after",
            _HOSTC_ORDERS,
        ),
        "nvidia-persistenced.service": (
            "the NVIDIA persistence daemon, which hostc orders itself and GPU workloads after",
            _HOSTC_ORDERS + "; hostc knowledge/gpu.py NVSWITCH_DAEMONS",
        ),
        "nvidia-fabricmanager.service": (
            "NVIDIA Fabric Manager, which hostc orders GPU workloads after",
            "hostc knowledge/gpu.py NVSWITCH_DAEMONS (workload drop-ins are After= it)",
        ),
        "dbus.service": (
            "the system message bus, which logind and TuneD require (dbus-broker's unit, "
            "which it names, runs before basic.target with DefaultDependencies=false)",
            "dbus bus/dbus.service.in (no Alias=); bus1/dbus-broker "
            "src/units/system/dbus-broker.service.in ([Install] Alias=dbus.service)",
        ),
        "dbus-broker.service": (
            "the system message bus (DefaultDependencies=false, Before=basic.target)",
            "bus1/dbus-broker src/units/system/dbus-broker.service.in",
        ),
        "getty@.service": ("a login getty (the login infrastructure)", _SYSTEMD_UNITS),
        "serial-getty@.service": (
            "a serial login getty (the login infrastructure)",
            _SYSTEMD_UNITS,
        ),
        "console-getty.service": (
            "the console login getty (the login infrastructure)",
            _SYSTEMD_UNITS,
        ),
        "container-getty@.service": (
            "a container login getty (the login infrastructure)",
            _SYSTEMD_UNITS,
        ),
        "user@.service": (
            "a user's service manager: every login session runs under it",
            _SYSTEMD_UNITS,
        ),
        "user-runtime-dir@.service": (
            "a user's runtime directory (the login infrastructure)",
            _SYSTEMD_UNITS,
        ),
        "emergency.service": ("the emergency shell (DefaultDependencies=no)", _SYSTEMD_UNITS),
        "rescue.service": ("the rescue shell (DefaultDependencies=no)", _SYSTEMD_UNITS),
        "kmod-static-nodes.service": (
            "early boot (DefaultDependencies=no, Before=sysinit.target)",
            _SYSTEMD_UNITS,
        ),
        "ldconfig.service": (
            "early boot (DefaultDependencies=no, Before=sysinit.target)",
            _SYSTEMD_UNITS,
        ),
    }
)

#: The name prefixes that are reserved whole: a list of their members would go stale.
RESERVED_PREFIXES: Table[str, str] = Table(
    {
        "hostc-": ("one of hostc's own units", "hostc targets/ (hostc-tuning, hostc-verify, …)"),
        "systemd-": (
            "one of systemd's own units, early-boot and system infrastructure (most run "
            "before sysinit.target or basic.target with DefaultDependencies=no: a drop-in's "
            "After=hostc-tuning.service would be an ordering cycle)",
            _SYSTEMD_UNITS + "; systemd-modules-load.service.in and systemd-sysctl.service.in: "
            "DefaultDependencies=no, Before=sysinit.target (hostc's apply restarts the first, "
            "hostc-tuning.service is After= the second)",
        ),
        "dbus-org.": (
            "a D-Bus activation alias: a second name of a system daemon's unit",
            "systemd.unit(5), Aliases: dbus-org.freedesktop.network1.service is "
            "systemd-networkd.service",
        ),
    }
)

#: Other names of units (alias → the unit it is), as their packages ship or enable them.
ALIASES: Table[str, str] = Table(
    {
        "cri-o.service": (
            "crio.service",
            "cri-o/cri-o contrib/systemd/crio.service: [Install] Alias=cri-o.service",
        ),
        "autovt@.service": ("getty@.service", "systemd units/meson.build: getty@ symlinks autovt@"),
        "udev.service": (
            "systemd-udevd.service",
            "Debian/Ubuntu systemd packaging debian/udev.links: udev.service is a symlink to "
            "systemd-udevd.service",
        ),
        **{
            f"dbus-org.freedesktop.{bus}.service": (f"systemd-{unit}.service", _SYSTEMD_UNITS)
            for bus, unit in (
                ("hostname1", "hostnamed"),
                ("import1", "importd"),
                ("locale1", "localed"),
                ("login1", "logind"),
                ("machine1", "machined"),
                ("portable1", "portabled"),
                ("timedate1", "timedated"),
            )
        },
        "dbus-org.freedesktop.resolve1.service": (
            "systemd-resolved.service",
            "systemd units/systemd-resolved.service.in: [Install] Alias=",
        ),
        "dbus-org.freedesktop.network1.service": (
            "systemd-networkd.service",
            "systemd.unit(5), Aliases (systemd-networkd.service.in: [Install] Alias=)",
        ),
    }
)


def template_of(unit: str) -> str:
    """`getty@tty1.service` → `getty@.service`: the template whose drop-ins and aliases
    an instance shares; any other name as it is."""
    stem, at, rest = unit.partition("@")
    return f"{stem}@.{rest.rsplit('.', 1)[1]}" if at and "." in rest else unit


def reserved(unit: str) -> tuple[str, str] | None:
    """(the unit `unit` is, what it is) where a workload may not be it; None otherwise.
    `unit` is a valid unit name (check.runtime.unit_problem)."""
    name = template_of(unit)
    name = ALIASES.get(name, name)
    if name in RESERVED:
        return name, RESERVED[name]
    for prefix, what in RESERVED_PREFIXES.items():
        if name.startswith(prefix) or unit.startswith(prefix):
            return name, what
    return None
