"""A build directory that hostc owns (`hostc.delivery.owned`): write a build with its
record, remove a host's earlier build, and say what a new build costs the hosts that
run the recorded one (`hostc changed`).  `hostc.api` re-exports it; the fleet runner
(`hostc.fleet.runner`) writes each host's build through it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from hostc.artifact import Artifact
from hostc.delivery import owned
from hostc.delivery.effects import plan_facts
from hostc.delivery.owned import RECORD, Written, is_fleet_host, read
from hostc.delivery.owned import prune as remove
from hostc.diagnostics import Diagnostic, HostcError, Severity, file_error
from hostc.patharg import artifact_list, as_names, as_path, of_type
from hostc.pipeline.emit import as_names_or_paths, emit
from hostc.plan.model import Plan
from hostc.targets import TARGETS, TargetRole

if TYPE_CHECKING:
    from hostc.delivery.disruption import Disruption
    from hostc.delivery.output import Judged


def target_scope(names: Iterable[str]) -> tuple[str, ...]:
    """The target folders a selection writes, whether or not each applies to the host:
    `all` is every file target, so a target that stopped applying (a kubelet removed
    from the spec) has its earlier files removed too."""
    wanted = set(as_names(names))
    return tuple(
        n
        for n, t in TARGETS.items()
        if n in wanted or ("all" in wanted and t.role is TargetRole.FILE)
    )


def write_build(
    plan: Plan,
    artifacts: Iterable[Artifact],
    out: str | os.PathLike[str],
    protect: Iterable[Path] = (),
    targets: Sequence[str] = ("all",),
    *,
    host: str = "",
    key: str | None = None,
    judged: Judged | None = None,
) -> Written:
    """`hostc build --out`: write the artifacts (`hostc.delivery.output.write`), remove the files
    of the previous build in `out` that this one no longer makes under the targets it
    writes (only hostc's own, unchanged, never through a link), and record this build
    in `out/.hostc-build.json`.  `host`: a fleet's host, written in `out/host` (one word,
    `hostc.fleet.selection.HOST_NAME`), its folder opened like every other (never a link).
    `key`: the inputs' content key (`hostc.delivery.contentkey`), sealed into the record.
    `judged`: what the caller judged once for many hosts (`hostc.delivery.output.Judged`)."""
    plan = of_type(plan, Plan, "plan", "a Plan")
    paths = [as_path(p, "protect") for p in as_names_or_paths(protect)]
    names = tuple(as_names(targets))
    owner = owned.Owner(target_scope(names), names, plan_facts(plan).to_json(), bool(host), key)
    return owned.write(artifact_list(artifacts), as_path(out, "out"), paths, owner, host, judged)


def write(
    artifacts: Iterable[Artifact], out: str | os.PathLike[str], protect: Iterable[Path] = ()
) -> list[Path]:
    """Write the artifacts under `out` atomically (`hostc.delivery.output.write`), and own them as
    `write_build` does: the previous write's files under the same target folders that
    this one does not make are removed (only hostc's own, unchanged)."""
    paths = [as_path(p, "protect") for p in as_names_or_paths(protect)]
    arts = artifact_list(artifacts)
    owner = owned.Owner(tuple(sorted({a.target for a in arts})))
    return list(owned.write(arts, as_path(out, "out"), paths, owner).written)


def stale_hosts(out: str | os.PathLike[str], hosts: Iterable[str]) -> list[Path]:
    """Folders of `out` that a fleet build wrote for a host no longer among `hosts`."""
    return stale_folders(out, hosts)[0]


def stale_folders(
    out: str | os.PathLike[str], hosts: Iterable[str]
) -> tuple[list[Path], list[tuple[Path, tuple[Diagnostic, ...]]]]:
    """`stale_hosts`, and each other folder whose build record is not one hostc wrote,
    with a warning naming the record: such a folder is no host's that hostc knows, so it
    is left alone (never pruned) and the fleet's build goes on."""
    root, keep = as_path(out, "out"), set(hosts)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return [], []
    found: list[Path] = []
    unread: list[tuple[Path, tuple[Diagnostic, ...]]] = []
    for n in names:
        if n in keep:
            continue
        try:
            if is_fleet_host(root / n):
                found.append(root / n)
        except HostcError as e:
            why = "; the folder is left alone, never pruned"
            warn = Severity.WARNING
            diags = (attrs.evolve(d, severity=warn, message=d.message + why) for d in e.diagnostics)
            unread.append((root / n, tuple(diags)))
    return found, unread


def prune(folder: str | os.PathLike[str]) -> Written:
    """Remove an earlier build from `folder`: what its record lists, while unchanged."""
    return remove(as_path(folder, "folder"))


def changed(plan: Plan, out: str | os.PathLike[str]) -> Disruption:
    """What building `plan` costs a host that runs the build recorded in `out`: the same
    targets rebuilt, their host files compared with the record's (`hostc.delivery.disruption`)."""
    from hostc.delivery.disruption import compute, recorded, state

    plan = of_type(plan, Plan, "plan", "a Plan")
    where = as_path(out, "out")
    doc = read(where)
    if doc is None:
        raise HostcError(
            [
                file_error(
                    str(where / RECORD),
                    "no record of an earlier build here",
                    hint="`hostc build SPEC --out DIR` writes one; compare with it afterwards",
                )
            ]
        )
    scope = set(doc["scope"])
    unknown = [n for n in doc["selected"] if n != "all" and n not in TARGETS]
    if unknown:  # the record's error, not the command line's
        why = f"selected: {unknown[0][:40]!r} is no target of this hostc"
        raise HostcError([file_error(str(where / RECORD), why)])
    fresh = [a for a in emit(plan, doc["selected"] or ["all"]) if a.target in scope]
    return compute(recorded(doc), state(plan, fresh))


def fleet_line(found: Mapping[str, Disruption]) -> str:
    """What rolling out a fleet's builds costs, in one line (`hostc changed HOSTS/`)."""
    from hostc.delivery.disruption import fleet_line as line

    return line(found)
