"""The API of `hostc measure`: count what interrupts the Plan's CPUs for a window and
attribute each count (hostc.measure), its text and JSON, the record file, and the lines
`hostc audit` shows from the last record.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hostc.diagnostics import HostcError, file_error, json_text
from hostc.inputs import loads_json, read_text_bounded
from hostc.measure import report
from hostc.measure.attribute import attribute
from hostc.measure.host import ProcRoot
from hostc.measure.limits import RECORD as RECORD  # by default: the live host, as root only
from hostc.measure.model import Measurement
from hostc.measure.promise import promises
from hostc.measure.run import MAX_WINDOW as MAX_WINDOW
from hostc.measure.run import window
from hostc.patharg import as_path, of_type
from hostc.plan.model import Plan

#: A record is a few hundred rows at most; past this it is not one.
RECORD_LIMIT = 16 << 20


def _root(path: Path, what: str) -> ProcRoot:
    if not path.is_dir():
        raise HostcError([file_error(str(path), f"no such directory ({what})")])
    return ProcRoot(path, live=path.resolve() == Path("/"))


def measure(
    plan: Plan,
    seconds: float,
    root: str | os.PathLike[str] = Path("/"),
    after: str | os.PathLike[str] | None = None,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Measurement:
    """Count for `seconds` under `root` (`/`: this host, live; a copy: its /proc read
    twice), or between two copies `root` and `after` taken a window apart (nothing
    waits), and attribute every count to the Plan's settings.  Live, hostc moves itself
    to the housekeeping CPUs first, so as not to be the disturbance it counts."""
    plan = of_type(plan, Plan, "plan", "a Plan")
    if not 0 <= seconds <= MAX_WINDOW:
        raise HostcError([file_error("--window", f"must be 0 to {MAX_WINDOW:g} seconds")])
    start = _root(as_path(root, "root"), "the host's root")
    end = _root(as_path(after, "after"), "the window's end") if after is not None else None
    p = promises(plan)
    skip = None
    if start.live and end is None:
        skip = os.getpid()
        hk = [c for c in p.housekeeping if c in os.sched_getaffinity(0)]
        if hk:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, hk)
    first = start.counters()
    if first.interrupts is None and first.softirqs is None:
        raise HostcError(
            [
                file_error(
                    str(start.root / "proc"),
                    "has neither interrupts nor softirqs: not a Linux /proc, nothing to count",
                )
            ]
        )
    w = window(start, seconds, p.isolated, end=end, clock=clock, sleep=sleep, skip=skip)
    return attribute(p, w)


def measure_text(m: Measurement, host: str, spec: str) -> str:
    return report.text(m, host=host, spec=spec)


def measure_doc(m: Measurement, host: str, spec: str) -> dict[str, Any]:
    return report.document(m, host=host, spec=spec)


def measure_json(m: Measurement, host: str, spec: str) -> str:
    return json_text(report.document(m, host=host, spec=spec), ascii_only=True) + "\n"


def default_record(root: str | os.PathLike[str]) -> Path | None:
    """Where a measurement is recorded unless told: RECORD on the live host as root, else
    nowhere (a user's run and a copy's never write by default)."""
    live = as_path(root, "root").resolve() == Path("/")
    return RECORD if live and os.geteuid() == 0 else None


def write_record(doc: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """`doc` with the time it was taken, written to `path` (its folder made, mode 0755;
    the file staged and renamed, never written through a link)."""
    from hostc.delivery.descriptors import replace_at

    dest = as_path(path, "record")
    text = json_text({**doc, "taken": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    try:
        dest.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        dfd = os.open(dest.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as e:
        raise HostcError([file_error(str(dest), f"cannot write: {e.strerror or e}")]) from None
    try:
        replace_at(dfd, dest.name, (text + "\n").encode(), 0o644)
    except OSError as e:
        raise HostcError([file_error(str(dest), f"cannot write: {e.strerror or e}")]) from None
    finally:
        os.close(dfd)
    return dest


def last_measure(root: str | os.PathLike[str]) -> str | None:
    """The lines `hostc audit` adds from the last record under `root` (RECORD there):
    None without one; a record that cannot be read says so in one line."""
    base = as_path(root, "root")
    if not base.is_dir():
        return None
    path = base / RECORD.relative_to("/")
    if not path.is_file():
        return None
    try:
        doc = loads_json(
            read_text_bounded(path, limit=RECORD_LIMIT, what="record"), str(path), "record"
        )
    except HostcError as e:
        return f"last hostc measure: {e.diagnostics[0].message}\n"
    if not isinstance(doc, dict) or doc.get("schema") != report.SCHEMA:
        return f"last hostc measure: {path} is not a {report.SCHEMA} record\n"
    return report.summary(doc, str(RECORD))
