"""sysctl: /etc/sysctl.d/90-hostc.conf, each key under the reason it is set."""

from __future__ import annotations

from hostc.artifact import Action, Activation
from hostc.plan.model import Plan
from hostc.targets._emitter import Emitter
from hostc.targets._escape import sysctl_key, sysctl_value
from hostc.targets._render import Row, config, header

PATH = "/etc/sysctl.d/90-hostc.conf"


def emit(plan: Plan, out: Emitter) -> None:
    rows = tuple(
        Row(s.reason, f"{sysctl_key(s.key)} = {sysctl_value(s.value)}") for s in plan.sysctls
    )
    out.file(PATH, config(header(plan), "sysctl.conf.j2", rows=rows), Activation(Action.SYSCTL))
