"""The `hostc` process: the console script and `python -m hostc` both start here.

How the process starts and ends is the one start-up apparatus hostc keeps (issue 34),
all of it here and nowhere else, because only a process may decide it (a program
embedding `hostc.api` keeps its own collector, its own `compile` and its own exit):

- the cyclic collector is off while the command's modules load: importing them makes
  ~200 classes and their tables and none of it is garbage, yet every 700 allocations
  the collector would walk it all again; after the imports everything is frozen into
  the permanent generation (`gc.freeze`: later collections, a fleet's thousands of
  hosts, skip it, and workers forked from here do not dirty its pages) and the
  collector is on again for the command itself;
- the code attrs and cattrs generate (each class's `__init__`, each structure hook)
  and the code `re` generates for each regular expression the modules compile are
  made once and kept, as Python keeps a module's bytecode (`hostc.cli.codecache`);
- the end is `os._exit` once both streams are flushed: the interpreter's finalization
  would free every object and module one by one, for a process about to vanish.
  Every file hostc writes is closed by then (each write is its own `with`, staged and
  renamed), the fleet's worker pool is shut down inside its command, and hostc
  registers no `atexit` hook.

The collector and the exit each earn less than the 10 % a speed trick must (callgrind,
a DGX build: the collector -26 M and the exit -58 M of 982 M instructions); together
they earn 13-16 % of a cold build's wall and CPU time in the benchmark's own row
(benchmarks/run.py, "P1d start-up apparatus earns", which fails below 10 %).  The
generated-code cache has its own rows there ("P1d generated-code cache earns"): 20.5 %
of the instructions (879 M -> 699 M; the row fails below 10 %), of which the regular
expressions are 60 M; by wall time the patterns alone earn 6.5 % (40 interleaved pairs,
farm-bench) and the whole cache 13-18 % in the benchmark's runs (O-Q, docs/speed.md).
The fleet benchmark starts through this module too (`run`, without the exit, so that it
can read the command's resource usage afterwards).
"""

try:  # Ctrl-C while Python still imports hostc: exit 130, as later, never a traceback
    import os
    import signal

    # From here to the end of the imports a Ctrl-C ends the process at once, wherever
    # the interpreter is (a module of the standard library's included); before it, the
    # `except` below does.  The command itself gets Python's own KeyboardInterrupt back.
    signal.signal(signal.SIGINT, lambda _signum, _frame: os._exit(130))

    import contextlib
    import gc
    import sys
    from typing import NoReturn

    from hostc.cli.codecache import GeneratedCode

    gc.disable()
    GENERATED = GeneratedCode.install()

    from hostc.cli.main import run

    signal.signal(signal.SIGINT, signal.default_int_handler)
except KeyboardInterrupt:
    import posix  # built in and loaded at start-up: nothing here can be cut off halfway

    posix._exit(130)

gc.freeze()
gc.enable()


def main() -> NoReturn:
    """Run `hostc ARGV`, keep what it compiled, flush, and end the process with its
    exit status."""
    code = run()
    GENERATED.save()
    for stream in (sys.stdout, sys.stderr):
        # the reader went away, or the stream is closed: nothing is left to say
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
