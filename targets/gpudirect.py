"""hostc-gpudirect: the oneshot that loads nvidia-peermem where it is the GPUDirect RDMA
path (review N5).  Ordered after openibd and the NVIDIA driver's persistence daemon,
tolerant of a host without the module; never modules-load.d, which runs before openibd
and fails systemd-modules-load.service on a symbol mismatch (NVIDIA/gpu-operator #2868).
Mode `dmabuf` gets no unit: nothing is loaded, and hostc-verify reports the path.
"""

from __future__ import annotations

from hostc.artifact import Action, Activation
from hostc.plan.model import Plan
from hostc.targets._emitter import Emitter
from hostc.targets._render import config, header, script

UNIT = "hostc-gpudirect.service"
UNIT_PATH = f"/etc/systemd/system/{UNIT}"
SCRIPT = "/usr/local/sbin/hostc-gpudirect"


def emit(plan: Plan, out: Emitter) -> None:
    g = plan.runtime.gpudirect
    if g is None or not g.peermem:
        return
    host = header(plan)
    unit = config(host, "hostc-gpudirect.service.j2", mode=g.mode, script=SCRIPT)
    out.unit(UNIT_PATH, unit, UNIT)
    text = script(host, "hostc-gpudirect.sh.j2", mode=g.mode, reason=g.reason)
    out.file(SCRIPT, text, Activation(Action.START, UNIT), mode=0o755)
