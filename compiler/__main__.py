"""The `hostc` process: the console script and `python -m hostc` both start here.

Two start-up costs a short-lived process need not pay (benchmarks/run.py, P1d):

- the cyclic garbage collector is off before anything is imported: the imports
  create thousands of objects (attrs classes, cattrs and jinja2 code), and the
  collections they would trigger free nothing, since a process this short frees
  its memory by reference counting and by exiting;
- after the command, both streams are flushed and the process ends with
  `os._exit`: every file was written and closed by the command itself, so the
  interpreter's finalization (tearing down every module and object) has nothing
  left to do for the user.  Where a stream cannot be flushed (a closed pipe) the
  interpreter's own exit runs, and reports it as it always has.

`hostc.cli.main.main` stays the in-process entry (tests, embedders): it only raises
SystemExit.
"""

import gc


def main() -> None:
    gc.disable()
    import os
    import sys

    from hostc.cli.main import main as command

    try:
        command()
    except SystemExit as e:
        code = e.code
    else:
        code = None
    if code is not None and not isinstance(code, int):
        raise SystemExit(code)  # a message: the interpreter prints it and exits 1
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BaseException:
        raise SystemExit(code) from None
    os._exit(code or 0)


if __name__ == "__main__":
    main()
