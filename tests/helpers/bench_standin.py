"""A stand-in benchmark for `hostc bench` tests: it prints an nccl-tests footer whose
figure depends on a live setting it reads, as a real benchmark depends on the host.

    python bench_standin.py ROOT TUNED [MARKER]

It reads ROOT/proc/sys/vm/swappiness: with TUNED (the Plan's value) the bus bandwidth
is 100 GB/s, with anything else 80.  With MARKER, a run under any other value writes its
pid there and sleeps (a run long enough to be interrupted).  STANDIN_FAIL=1 makes it
exit 3 (STANDIN_FAIL=reverted: only under another value); STANDIN_SILENT=1 prints no
figure; STANDIN_NOISE=1 scatters the figure by up to 1 % (docs/bench.md's example).
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

root = Path(sys.argv[1])
tuned = sys.argv[2]
value = (root / "proc/sys/vm/swappiness").read_text().strip()
if len(sys.argv) > 3 and value != tuned:
    Path(sys.argv[3] + ".tmp").write_text(str(os.getpid()))
    os.replace(sys.argv[3] + ".tmp", sys.argv[3])  # whole, or not there
    time.sleep(60)
fail = os.environ.get("STANDIN_FAIL")
if fail == "1" or (fail == "reverted" and value != tuned):
    print("# Out of bounds values : 3 FAILED")
    sys.exit(3)
if not os.environ.get("STANDIN_SILENT"):
    print("# Out of bounds values : 0 OK")
    figure = 100.0 if value == tuned else 80.0
    if os.environ.get("STANDIN_NOISE"):
        figure *= 1 + random.uniform(-0.01, 0.01)
    print(f"# Avg bus bandwidth    : {figure:g} ")
print("# Collective test concluded: all_reduce_perf")
