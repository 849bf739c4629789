"""Run the user's benchmark N times and read its figures from each run's output.

A run is the command as given (no shell), its standard output and error read together
as one stream (a figure may be printed by a logger on stderr), stdin empty.  Before
each run what is in effect is read (`hostc.bench.state`), so a record says what every
run ran under.  A run that exits non-zero, prints no figure or outlives `timeout`
stops the series (`RunFailed`, exit 2): three runs are a method, two are not.  Only
the output's last OUTPUT_LIMIT bytes are kept: a long log cannot exhaust memory.
On an interrupt (Ctrl-C, or SIGTERM and SIGHUP, which raise `Interrupted` while a series
runs) the running benchmark is ended (TERM, then KILL) before the interrupt goes on, so
that nothing runs on under a host being restored, nor after hostc.
"""

from __future__ import annotations

import collections
import datetime
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import attrs

from hostc.bench.generic import read_auto
from hostc.bench.readers import Figure, FigureReader
from hostc.bench.state import InEffect, host_tree, in_effect
from hostc.diagnostics import HostcError, file_error
from hostc.plan.model import Plan
from hostc.record import Record

OUTPUT_LIMIT = 8 << 20
#: lines of a failed run's output shown with its error
TAIL_LINES = 12
#: seconds an interrupted benchmark gets to end after SIGTERM, before SIGKILL
GRACE = 5.0
Say = Callable[[str], None]


#: the signals that end a bench early (Ctrl-C raises KeyboardInterrupt itself)
STOPS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s)


class Interrupted(BaseException):
    """SIGTERM or SIGHUP arrived while a bench ran (a BaseException, as Ctrl-C's
    KeyboardInterrupt: no `except Exception` may swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


@contextmanager
def stopping() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Interrupted while benchmarks run, as Ctrl-C raises
    KeyboardInterrupt: the running one is ended and an ablation restores its values
    (main thread only: Python delivers signals there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Interrupted(signum)

    old = {s: signal.signal(s, stop) for s in STOPS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@attrs.frozen(repr=False, eq=False)
class Run(Record):
    index: int
    started: str
    finished: str
    seconds: float
    exit_status: int
    figures: tuple[Figure, ...]
    in_effect: InEffect


@attrs.frozen(repr=False, eq=False)
class Series(Record):
    """N runs of one command, read by one reader."""

    command: tuple[str, ...]
    reader: str
    runs: tuple[Run, ...]


class RunFailed(HostcError):
    """A run that exited non-zero, printed no figure or ran too long; `tail` holds the
    last lines it printed."""

    def __init__(self, command: str, message: str, tail: tuple[str, ...]) -> None:
        super().__init__([file_error(command, message)])
        self.tail = tail


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


class _Output:
    """The last OUTPUT_LIMIT bytes of a stream, read on a thread; each line echoed."""

    def __init__(self, stream: IO[bytes], echo: Say | None) -> None:
        self.chunks: collections.deque[bytes] = collections.deque()
        self.size = 0
        self.thread = threading.Thread(target=self._read, args=(stream, echo), daemon=True)
        self.thread.start()

    def _read(self, stream: IO[bytes], echo: Say | None) -> None:
        for line in stream:
            if echo is not None:
                echo(line.decode("utf-8", "replace").rstrip("\n"))
            self.chunks.append(line)
            self.size += len(line)
            while self.size > OUTPUT_LIMIT and len(self.chunks) > 1:
                self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        self.thread.join(timeout=GRACE)
        return b"".join(self.chunks)[-OUTPUT_LIMIT:].decode("utf-8", "replace")


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Stop the benchmark: TERM, a grace period, then KILL."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _execute(argv: Sequence[str], timeout: float | None, echo: Say | None) -> tuple[int, str]:
    """(exit status, output) of one run; -1: it ran past `timeout` and was ended."""
    try:
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
    except OSError as e:
        raise HostcError([file_error(argv[0], f"cannot run it: {e.strerror or e}")]) from None
    assert proc.stdout is not None
    out = _Output(proc.stdout, echo)
    try:
        status = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end(proc)
        status = -1
    except BaseException:
        _end(proc)
        raise
    return status, out.text()


def run_once(
    argv: Sequence[str],
    index: int,
    reader: FigureReader | None,
    *,
    root: Path,
    plan: Plan | None,
    timeout: float | None = None,
    echo: Say | None = None,
) -> tuple[Run, FigureReader]:
    """One run (`index` counts from 1), read by `reader` (None: the first built-in
    reader that finds a figure); the reader that read it comes back with it."""
    state = in_effect(root, plan)
    started, t0 = now(), time.monotonic()
    status, text = _execute(argv, timeout, echo)
    seconds = round(time.monotonic() - t0, 3)
    tail = tuple(text.splitlines()[-TAIL_LINES:])
    where = f"run {index}"
    if status == -1:
        raise RunFailed(argv[0], f"{where} ran past --timeout {timeout:g} s and was ended", tail)
    if status != 0:
        raise RunFailed(argv[0], f"{where} exited with status {status}", tail)
    if reader is None:
        found = read_auto(text)
        if found is None:
            raise RunFailed(argv[0], f"{where} printed no figure any built-in reader knows", tail)
        reader, figures = found
    else:
        figures = reader.read(text)
    if not figures:
        raise RunFailed(argv[0], f"{where} printed no figure the {reader.name} reader knows", tail)
    return Run(index, started, now(), seconds, status, figures, state), reader


def run_series(
    argv: Sequence[str],
    n: int,
    reader: FigureReader | None,
    *,
    root: Path,
    plan: Plan | None,
    timeout: float | None = None,
    say: Say | None = None,
    echo: Say | None = None,
) -> Series:
    """`n` runs; the reader `auto` settles on in the first run reads the others."""
    host_tree(root)
    runs: list[Run] = []
    with stopping():
        for i in range(1, n + 1):
            run, reader = run_once(
                argv, i, reader, root=root, plan=plan, timeout=timeout, echo=echo
            )
            runs.append(run)
            if say is not None:
                head = next((f for f in run.figures if f.headline), run.figures[0])
                shown = f"{head.value:g} {head.unit}".rstrip()
                say(f"run {i}/{n}: {head.name} {shown} ({run.seconds:g} s)")
    assert reader is not None
    return Series(tuple(argv), reader.name, tuple(runs))
