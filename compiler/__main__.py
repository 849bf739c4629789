"""The `hostc` process: the console script and `python -m hostc` both start here.

No start-up tricks: turning the cyclic collector off before the imports saved 3.5 % of
a build's instructions (858 M against 889 M, callgrind, `--target all`), and ending
with `os._exit` instead of the interpreter's finalization 6 % (858 M against 912 M):
both under the 10 % a speed trick must earn to be kept, so both are gone (issue 33).
"""

from hostc.cli.main import main

if __name__ == "__main__":
    main()
