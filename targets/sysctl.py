"""sysctl: /etc/sysctl.d/90-hostc.conf, each key under the reason it is set."""

from __future__ import annotations

from hostc.artifact import Action, Activation, Artifact, file
from hostc.plan import Plan
from hostc.targets._render import render

PATH = "/etc/sysctl.d/90-hostc.conf"


def emit(plan: Plan) -> list[Artifact]:
    return [file("sysctl", PATH, render("sysctl.conf.j2", plan=plan), Activation(Action.SYSCTL))]
