"""Many hosts per command: a selection of specs compiled in one process pool.

A selection (`hostc.fleet.selection`) is a directory (`hosts/*.toml`, `hosts/*/node.toml`), a glob
(`'hosts/dgx-*.toml'`) or a list file (`@hosts.txt`, one spec per line,
relative to the list file, `#` comments).  Each host is compiled on its own,
so one bad spec fails only its host: the others are still built, written and
reported.  Workers are processes (compilation is pure Python); each keeps
hostc's caches for its lifetime, so a node class's snapshot is parsed once per
worker, not once per host.  Nothing here prints: the CLI renders the results.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from hostc.artifact import deliverable
from hostc.delivery import contentkey, reuse
from hostc.delivery.compare import differences
from hostc.delivery.owned import FAILED as FAILED
from hostc.delivery.owned import mark_failed
from hostc.diagnostics import Diagnostic, HostcError, Severity, file_error, with_file
from hostc.fleet.selection import FLEET_FOLDER
from hostc.fleet.selection import HOST_NAME as HOST_NAME
from hostc.fleet.selection import FleetHost as FleetHost
from hostc.fleet.selection import host_name as host_name
from hostc.fleet.selection import named as named
from hostc.fleet.selection import select as select
from hostc.inputs import GLOB_CHARS as GLOB_CHARS
from hostc.inputs import is_selection as is_selection
from hostc.pipeline.build import changed, prune, stale_folders, target_scope, write, write_build
from hostc.pipeline.compile import compile_file, spec_files
from hostc.pipeline.emit import emit
from hostc.record import Record
from hostc.report import plan_view
from hostc.targets import TARGETS

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from hostc.delivery.disruption import Disruption
    from hostc.delivery.output import Judged


def affected(host: FleetHost, out: Path, changed: Iterable[str | os.PathLike[str]]) -> bool:
    """Whether a change to one of `changed` can change `hostc build --check`'s verdict for
    `host` (what `hostc pre-commit` re-checks): a file its build reads (the spec, the
    files it extends, its topology snapshot: `spec_files`) or one of its committed
    outputs under OUT/<host>/.  Paths compare absolute: pre-commit passes names relative
    to the repository, a fleet may be named by an absolute path."""
    wanted = {os.path.abspath(p) for p in changed}
    folder = os.path.join(os.path.abspath(out), host.name) + os.sep
    return bool(wanted & spec_files(host.spec)) or any(w.startswith(folder) for w in wanted)


@attrs.frozen(repr=False, eq=False)
class Job(Record):
    """What to do for every host: `build` (write or `check` against `out`) or `plan`."""

    mode: str  # "build", "check" (validate only), "plan" or "changed" (the disruption)
    targets: tuple[str, ...] = ("all",)
    out: Path | None = None
    compare: bool = False  # --check: compare with out/<host> instead of writing
    strict: bool = False
    topology: Path | None = None
    prune: bool = False  # remove the folders of hosts no longer selected
    #: what the command judged once for every host: `out` checked, the umask read
    judged: Judged | None = None


@attrs.frozen(repr=False, eq=False)
class Result(Record):
    host: str
    spec: str
    errors: tuple[Diagnostic, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()
    files: int = 0
    #: of those files, how many already held these bytes: left as they were
    unchanged: int = 0
    #: --check: (path under out/, unified diff) per differing file
    differences: tuple[tuple[str, str], ...] = ()
    plan: str | None = None  # plan --json: the Plan's JSON text
    #: the ansible target's deliverables (name, bytes), gathered into DIR/ansible/ for all hosts
    ansible: tuple[tuple[str, bytes], ...] = ()
    #: a row about the whole fleet (DIR/ansible/), not one host
    fleetwide: bool = False
    #: the previous build's files this build removed, and those it kept (with why)
    removed: tuple[str, ...] = ()
    kept: tuple[tuple[str, str], ...] = ()
    disruption: Disruption | None = None  # `hostc changed`: what the new build costs
    #: a folder of `out` whose host is no longer selected (kept, or removed by --prune)
    gone: bool = False
    #: a failed build: the folder of out/ that still holds the previous build (marked)
    previous: str | None = None

    @property
    def ok(self) -> bool:
        return not self.errors


def run_one(host: FleetHost, job: Job) -> Result:
    """Compile one host; every input problem becomes the Result's errors, never a raise.
    A build that fails marks the host's earlier output in `out/<host>/` (`.hostc-failed`)."""
    result = _attempt(host, job)
    if result.ok or job.mode != "build" or job.compare or job.out is None:
        return result

    folder = job.out / host.name
    try:
        kept = mark_failed(folder, "".join(d.render() + "\n" for d in result.errors))
    except OSError as e:
        err = file_error(str(folder), f"cannot mark the failed build: {e.strerror or e}")
        return attrs.evolve(result, errors=(*result.errors, err), previous=str(folder))
    return attrs.evolve(result, previous=str(folder)) if kept else result


def _attempt(host: FleetHost, job: Job) -> Result:
    try:
        return _run(host, job)
    except HostcError as e:
        return Result(host.name, str(host.spec), errors=e.diagnostics)
    except OSError as e:
        err = file_error(e.filename or str(job.out), f"cannot read or write: {e.strerror or e}")
        return Result(host.name, str(host.spec), errors=(err,))
    except Exception as e:  # a bug in hostc: this host fails, the fleet goes on
        err = file_error(
            str(host.spec), f"internal error (a bug, please report it): {type(e).__name__}: {e}"
        )
        return Result(host.name, str(host.spec), errors=(err,))


def _run(host: FleetHost, job: Job) -> Result:
    known: dict[str, bytes] = {}  # the bytes the key was made from: those are compiled
    key = _key(host, job, known)
    skipped = _unchanged(host, job, key) if key is not None else None
    if job.mode == "changed" and job.out is not None:
        skipped = changed_unchanged(host, job)
    if skipped is not None:
        return skipped
    plan, warnings = compile_file(host.spec, job.topology, known if key is not None else None)
    if job.strict and warnings:
        errs = tuple(attrs.evolve(d, severity=Severity.ERROR) for d in warnings)
        return Result(host.name, str(host.spec), errors=errs)
    base = Result(host.name, str(host.spec), warnings=tuple(warnings))
    if job.mode == "check":
        return base
    if job.mode == "plan":
        return attrs.evolve(base, plan=plan_view.dumps(plan))
    if job.mode == "changed":
        assert job.out is not None
        return attrs.evolve(base, disruption=changed(plan, job.out / host.name))

    try:
        artifacts = emit(plan, job.targets)
    except HostcError as e:
        raise HostcError(with_file(e.diagnostics, str(host.spec))) from None
    playbook = tuple((a.path, a.data) for a in artifacts if a.target == FLEET_FOLDER)
    base = attrs.evolve(base, ansible=playbook)
    if job.out is None:
        return attrs.evolve(base, files=len(artifacts))
    dest = job.out / host.name
    if job.compare:
        if os.path.islink(dest):
            raise HostcError(
                [file_error(str(dest), "is a symbolic link; hostc never follows one in --out")]
            )
        found = tuple(differences(artifacts, dest))
        return attrs.evolve(base, files=len(artifacts), differences=found)
    sealed = key if not warnings else None  # a skip could not repeat the warnings
    done = write_build(
        plan,
        artifacts,
        job.out,
        (),
        job.targets,
        host=host.name,
        key=sealed,
        judged=job.judged,
    )
    removed = tuple(str(p) for p in done.removed)
    kept = tuple((str(p), why) for p, why in done.kept)
    return attrs.evolve(
        base, files=len(done.written), unchanged=len(done.unchanged), removed=removed, kept=kept
    )


def _key(host: FleetHost, job: Job, known: dict[str, bytes]) -> str | None:
    """The content key of a build that writes under `out`, or compares with it (`--check`,
    `pre-commit`) (`hostc.delivery.contentkey`), or None where none applies: another
    mode, the ansible target (every host's variables are gathered into OUT/ansible/
    from the compiled build).  `known` receives the bytes the key was made from."""
    if job.mode != "build" or job.out is None or "ansible" in job.targets:
        return None
    return contentkey.build_key(host.spec, job.targets, job.topology, job.strict, into=known)


def _unchanged(host: FleetHost, job: Job, key: str) -> Result | None:
    """A host whose build would leave OUT/<host>/ as it is (`reuse.unchanged`), or whose
    `--check` would find no difference (`reuse.current`): its Result, not compiled;
    None to compile it."""
    assert job.out is not None
    scope = set(target_scope(tuple(job.targets)))
    if job.compare:  # --check: nothing to write, and nothing that differs
        files = reuse.current(job.out / host.name, key, scope)
        return None if files is None else Result(host.name, str(host.spec), files=files)
    paths = reuse.unchanged(job.out / host.name, key)
    if paths is None:
        return None
    if any(p.split("/")[0] not in scope for p in paths):
        return None  # another target's files carried along: compiled, as before
    return Result(host.name, str(host.spec), files=len(paths), unchanged=len(paths))


def changed_unchanged(host: FleetHost, job: Job) -> Result | None:
    """`hostc changed`: a host whose recorded build was made from these very inputs
    (sealed, `contentkey.sealed`) and carries no other target's files changes nothing:
    its disruption is the record against itself, without compiling."""
    from hostc.delivery.disruption import HostState, compute

    assert job.out is not None
    found = reuse.record(job.out / host.name)  # not validated: trusted once sealed, below
    doc = found[0] if found is not None else None
    names = doc.get("selected") if doc is not None else None
    if found is None or doc is None or not isinstance(names, list):
        return None
    if not all(isinstance(n, str) and (n in TARGETS or n == "all") for n in names):
        return None
    selected = tuple(names) or ("all",)
    key = contentkey.build_key(host.spec, selected, job.topology, False)
    if key is None or not reuse.sealed(key, found):
        return None
    if "ansible" in selected:
        return None
    scope = set(target_scope(selected))
    if any(r["path"].split("/")[0] not in scope for r in doc["files"]):
        return None
    # the record against itself changes nothing: every entry's digest is the same
    # (`effects.changed_effects`), so the empty states give the same Disruption
    return Result(host.name, str(host.spec), disruption=compute(HostState({}), HostState({})))


def _chunk(hosts: list[FleetHost], jobs: int) -> list[list[FleetHost]]:
    """A few chunks per worker: little inter-process traffic, still a moving progress bar."""
    size = max(1, min(32, len(hosts) // (jobs * 4) or 1))
    return [hosts[i : i + size] for i in range(0, len(hosts), size)]


def _run_chunk(hosts: list[FleetHost], job: Job) -> list[Result]:
    return [run_one(h, job) for h in hosts]


def _executor(jobs: int) -> Executor:
    """fork where there is one: a worker starts with hostc already imported."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)


def run(
    hosts: list[FleetHost], job: Job, jobs: int | None, progress: Callable[[int, int], None]
) -> list[Result]:
    """Every host's Result, in `hosts` order; `progress(done, total)` after each chunk."""
    jobs = max(1, jobs or os.cpu_count() or 1)
    total = len(hosts)
    if jobs == 1 or total == 1:
        return list(_serial(hosts, job, progress))
    from concurrent.futures import as_completed

    _warm()
    results: dict[str, Result] = {}
    with _executor(min(jobs, total)) as pool:
        futures = [pool.submit(_run_chunk, c, job) for c in _chunk(hosts, jobs)]
        for f in as_completed(futures):
            for r in f.result():
                results[r.host] = r
            progress(len(results), total)
    return [results[h.name] for h in hosts]


def _serial(
    hosts: list[FleetHost], job: Job, progress: Callable[[int, int], None]
) -> Iterator[Result]:
    for i, h in enumerate(hosts, start=1):
        yield run_one(h, job)
        progress(i, len(hosts))


def _warm() -> None:
    """Import the compiler and every target before forking: each worker inherits them."""
    from hostc.check import check  # noqa: F401
    from hostc.lower import lower  # noqa: F401

    for t in TARGETS.values():
        t.load()


def stale_hosts(results: list[Result], job: Job) -> list[Result]:
    """One row per folder of `job.out` a fleet build wrote for a host no longer selected:
    reported, and with `job.prune` removed (only what its record lists, unchanged); one
    with a warning per other folder whose record is not hostc's, left alone."""
    if job.mode != "build" or job.compare or job.out is None:
        return []
    found, unread = stale_folders(job.out, {r.host for r in results})
    foreign = "its build record is not hostc's: left alone"
    rows = [Result(f.name, str(f), warnings=w, kept=((str(f), foreign),)) for f, w in unread]
    for folder in found:
        if not job.prune:
            why = "no longer in the fleet; --prune removes it"
            rows.append(Result(folder.name, str(folder), kept=((str(folder), why),)))
            continue
        done = prune(folder)
        removed = tuple(str(p) for p in done.removed)
        kept = tuple((str(p), why) for p, why in done.kept)
        rows.append(Result(folder.name, str(folder), removed=removed, kept=kept))
    return [attrs.evolve(r, gone=True) for r in sorted(rows, key=lambda r: r.host)]


def ansible_fleet(results: list[Result], job: Job) -> list[Result]:
    """With the ansible target: DIR/ansible/ holds the one playbook and every built host's
    variables, so `ansible-playbook -i INVENTORY DIR/ansible/playbook.yml` pushes the
    fleet.  Returned as one more Result (`ansible`), compared instead with --check."""
    if job.out is None or not any(r.ansible for r in results):
        return []
    arts: dict[str, bytes] = {}
    errors = []
    for r in results:
        for name, data in r.ansible:
            if name in arts and arts[name] != data:
                errors.append(
                    file_error(r.spec, f"two hosts write ansible/{name}: host.name must differ")
                )
            arts[name] = data
    found = [deliverable(FLEET_FOLDER, n, d) for n, d in sorted(arts.items())]
    name = "ansible (all hosts)"
    if errors:
        return [Result(name, str(job.out / FLEET_FOLDER), errors=tuple(errors), fleetwide=True)]
    if job.compare:
        diffs = tuple(differences(found, job.out))
        return [
            Result(
                name,
                str(job.out / FLEET_FOLDER),
                files=len(found),
                differences=diffs,
                fleetwide=True,
            )
        ]

    try:  # OUT's own record (`hostc.delivery.owned`) says what the fleet wrote there
        written = write(found, job.out)
    except HostcError as e:  # that record is not hostc's: this row fails, not the command
        return [Result(name, str(job.out / FLEET_FOLDER), errors=e.diagnostics, fleetwide=True)]
    return [Result(name, str(job.out / FLEET_FOLDER), files=len(written), fleetwide=True)]
