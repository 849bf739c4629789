"""The API of a build directory that hostc owns (`hostc.delivery.owned`): write a build with its
record, remove a host's earlier build, and say what a new build costs the hosts that
run the recorded one (`hostc changed`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hostc.api.emit import as_names_or_paths, emit
from hostc.artifact import Artifact
from hostc.delivery import owned
from hostc.delivery.owned import RECORD, Written, is_fleet_host, plan_facts, read
from hostc.delivery.owned import prune as remove
from hostc.diagnostics import HostcError, file_error
from hostc.patharg import artifact_list, as_names, as_path, of_type
from hostc.plan.model import Plan
from hostc.targets import TARGETS, TargetRole

if TYPE_CHECKING:
    from hostc.delivery.disruption import Disruption


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
) -> Written:
    """`hostc build --out`: write the artifacts (`hostc.delivery.output.write`), remove the files
    of the previous build in `out` that this one no longer makes under the targets it
    writes (only hostc's own, unchanged, never through a link), and record this build
    in `out/.hostc-build.json`.  `host`: a fleet's host, written in `out/host` (one word,
    `hostc.api.fleet.HOST_NAME`), its folder opened like every other (never a link)."""
    plan = of_type(plan, Plan, "plan", "a Plan")
    paths = [as_path(p, "protect") for p in as_names_or_paths(protect)]
    names = tuple(as_names(targets))
    owner = owned.Owner(target_scope(names), names, owned.plan_facts(plan), bool(host))
    return owned.write(artifact_list(artifacts), as_path(out, "out"), paths, owner, host)


def stale_hosts(out: str | os.PathLike[str], hosts: Iterable[str]) -> list[Path]:
    """Folders of `out` that a fleet build wrote for a host no longer among `hosts`."""
    root, keep = as_path(out, "out"), set(hosts)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [root / n for n in names if n not in keep and is_fleet_host(root / n)]


def prune(folder: str | os.PathLike[str]) -> Written:
    """Remove an earlier build from `folder`: what its record lists, while unchanged."""
    return remove(as_path(folder, "folder"))


def changed(plan: Plan, out: str | os.PathLike[str]) -> Disruption:
    """What building `plan` costs a host that runs the build recorded in `out`: the same
    targets rebuilt, their host files compared with the record's (`hostc.delivery.disruption`)."""
    from hostc.delivery.disruption import compute, from_facts, host_files, recorded_files

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
    fresh = [a for a in emit(plan, doc["selected"] or ["all"]) if a.target in scope]
    old = from_facts(recorded_files(doc), doc.get("facts", {}))
    return compute(old, from_facts(host_files(fresh), plan_facts(plan)))


def fleet_line(found: Mapping[str, Disruption]) -> str:
    """What rolling out a fleet's builds costs, in one line (`hostc changed HOSTS/`)."""
    from hostc.delivery.disruption import fleet_line as line

    return line(found)
