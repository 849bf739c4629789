"""The pipeline's targets half: a checked Plan → the artifacts of the named targets.

`hostc.api` re-exports it; the build directory (`hostc.pipeline.build`), the fleet
runner and the sides of a diff (`hostc.fleet`) reach `emit` here, below the facade
that imports them: no import cycle.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from hostc import targets as registry
from hostc.artifact import Artifact, ArtifactKind
from hostc.diagnostics import Diagnostic, HostcError, at, error, kind_of, warning
from hostc.knowledge.clouds import exceeded
from hostc.patharg import as_names, of_type
from hostc.plan.model import OsFamily, Plan
from hostc.targets import TARGETS

if TYPE_CHECKING:
    from hostc.targets import Target


def as_names_or_paths(value: object) -> list[object]:
    """`protect`: an iterable of paths, never one bare path."""
    if isinstance(value, str | bytes | os.PathLike) or not hasattr(value, "__iter__"):
        raise HostcError([error(at("protect"), "expected a list of paths")])
    return list(value)


def targets() -> dict[str, Target]:
    return TARGETS


def emit(plan: Plan, names: Iterable[str] = ("all",)) -> list[Artifact]:
    """Artifacts of the named targets, in registry order.

    `all` means every file target that applies to this host (a GRUB drop-in is
    skipped on a RHEL-family host); naming a target that does not apply is an
    error.  Wrapper targets receive every applicable file target's artifacts.
    """
    if not isinstance(plan, Plan):
        raise HostcError([error(at("plan"), f"expected a Plan, got {kind_of(plan)}")])
    wanted: Sequence[str] = as_names(names)
    unknown = [n for n in wanted if n != "all" and n not in registry.TARGETS]
    if unknown:
        raise HostcError(
            [
                error(
                    at("targets"),
                    f"unknown target {n!r}",
                    hint="targets: all, " + ", ".join(registry.TARGETS),
                )
                for n in unknown
            ]
        )
    if off := registry.not_applying(plan, wanted):
        raise HostcError(
            [
                error(at("targets"), f"target {n!r} does not apply to this host: {why}")
                for n, why in off
            ]
        )
    return registry.build(plan, wanted)


def target_warnings(plan: Plan, names: Iterable[str]) -> list[Diagnostic]:
    """Warnings about a target selection that is valid but likely not what the host
    reads: Ignition asked for a host that is not CoreOS-family (as grubby is refused
    for a Debian host, but Ignition may also provision a first boot elsewhere)."""
    plan = of_type(plan, Plan, "plan", "a Plan")
    out = []
    if "ignition" in as_names(names) and plan.host.os_family is not OsFamily.COREOS:
        out.append(
            warning(
                at("targets"),
                f"ignition is read by CoreOS-family hosts (Fedora CoreOS, RHCOS, Flatcar); "
                f"this host is {plan.host.os or plan.host.os_family}, which does not run "
                "Ignition unless its image does",
                hint="cloud-init or rootfs deliver the same files to other hosts",
            )
        )
    return out


#: What a first-boot config too big for a cloud's user-data can travel as instead
#: (docs/targets.md, "User-data size").
_SMALLER = {
    "cloud-init": "pass a two-line `#include` stub naming its URL as the user-data, or bake "
    "the rootfs target into the image (docs/targets.md, User-data size)",
    "ignition": "pass a config whose ignition.config.replace.source names its URL, or bake "
    "the rootfs target into the image (docs/targets.md, User-data size)",
}


def size_warnings(artifacts: Iterable[Artifact]) -> list[Diagnostic]:
    """One warning per first-boot config (cloud-init's user-data, Ignition's config) that
    passes a cloud's user-data limit, naming each such cloud and its limit
    (`hostc.knowledge.clouds`): the cloud's API refuses it at launch, long after the
    build."""
    out = []
    for art in artifacts:
        if art.kind is not ArtifactKind.DELIVERABLE or art.target not in _SMALLER:
            continue
        if over := exceeded(art.data):
            clouds = ", ".join(lim.describe() for lim in over)
            out.append(
                warning(
                    at("targets"),
                    f"{art.target} {art.path} is {len(art.data)} bytes: more than the "
                    f"user-data limit of {clouds}",
                    hint=_SMALLER[art.target],
                )
            )
    return out
