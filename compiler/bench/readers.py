"""How a figure is read from a benchmark's output: one reader per known format.

Each built-in reader follows the format string of the program that prints it (the
source is named on the reader, and the tests read real outputs from public reports):

- `nccl`: nccl-tests' footer `# Avg bus bandwidth    : %g` and its result rows (the
  `busbw` columns of the header, out-of-place then in-place), GB/s, higher is better
  (NVIDIA/nccl-tests src/util.cu writeResultFooter, writeBenchmarkLineBody; before the
  split, src/common.cu).  A prefix such as mpirun's `--tag-output` `[1,0]<stdout>:`
  is taken off every line first.
- `vllm-throughput`: `Throughput: %.2f requests/s, %.2f total tokens/s, %.2f output
  tokens/s` (vllm benchmarks/benchmark_throughput.py, vllm/benchmarks/throughput.py;
  before vLLM PR 8914 the line had `%.2f tokens/s`, the same total).
- `vllm-serving`: the `==== Serving Benchmark Result ====` block of
  benchmark_serving.py / `vllm bench serve` (`{:<40} {:<10.2f}` rows): every row whose
  label ends in a unit, `(req/s)` and `(tok/s)` higher is better, `(ms)` and `(s)`
  lower; a row without a unit (a count) is no figure.
- `line:NAME`, `regex:PATTERN`, `json:PATH`: the user's own figure (`generic`).

The first figure a reader yields is its headline; `auto` tries the built-in readers
in turn and takes the first that finds a figure.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Iterator

import attrs

from hostc.record import Record

#: a decimal number as printf's %g, %f and Python's format print it
NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
#: mpirun --tag-output (`[1,0]<stdout>:`) and Slurm's srun --label (`0: `)
_TAG = re.compile(r"^(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: )")


class Better(enum.StrEnum):
    """Which way a figure improves."""

    HIGHER = "higher"
    LOWER = "lower"


@attrs.frozen(repr=False, eq=False)
class Figure(Record):
    """One number a run printed: its name, value, unit and which way is better."""

    name: str
    value: float
    unit: str
    better: Better
    #: shown by `compare` and acted on by `--ablate` unless a figure is named
    headline: bool = True


@attrs.frozen(repr=False, eq=False)
class FigureReader(Record):
    """A named way of reading figures from a run's output; `source` says where its
    format is defined."""

    name: str
    source: str
    read: Callable[[str], tuple[Figure, ...]] = attrs.field(repr=False)


def number(text: str) -> float | None:
    """A finite number, or None (`inf`, `nan` and what is no number are no figure)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def lines(text: str) -> Iterator[str]:
    """The output's lines, each without a launcher's tag prefix."""
    for line in text.splitlines():
        yield _TAG.sub("", line, count=1)


_AVG = re.compile(rf"^#\s*Avg bus bandwidth\s*:\s*({NUMBER})")


def _nccl_header(line: str) -> list[str] | None:
    """The column names of a results header (`#  size  count  type  redop  root  time
    algbw  busbw  #wrong …`; older releases have no `root` and call `#wrong` `error`)."""
    words = line.lstrip("#").split()
    if words[:2] == ["size", "count"] and "busbw" in words:
        return words
    return None


def _nccl_rows(out: list[str]) -> list[Figure]:
    found: dict[str, Figure] = {}
    header: list[str] | None = None
    for line in out:
        if line.startswith("#"):
            header = _nccl_header(line) or header
            continue
        words = line.split()
        if header is None or not words or not words[0].isdigit() or len(words) < len(header):
            continue  # not a row, or a row without its out-of-place columns
        cols = [i for i, w in enumerate(header) if w == "busbw"]
        key = [words[0]] + [words[header.index(c)] for c in ("type", "redop") if c in header]
        if "root" in header and words[header.index("root")] != "-1":
            key.append("root" + words[header.index("root")])
        for place, col in zip(("oop", "ip"), cols, strict=False):
            value = number(words[col])
            if value is not None:
                name = f"busbw_{place}_" + "_".join(key)
                found[name] = Figure(name, value, "GB/s", Better.HIGHER, headline=False)
    return list(found.values())


def read_nccl(text: str) -> tuple[Figure, ...]:
    out = list(lines(text))
    avg = [m.group(1) for line in out if (m := _AVG.match(line))]
    value = number(avg[-1]) if avg else None
    head = [Figure("avg_bus_bandwidth", value, "GB/s", Better.HIGHER)] if value is not None else []
    return tuple(head + _nccl_rows(out))


_THROUGHPUT = re.compile(
    rf"Throughput:\s*({NUMBER})\s*requests/s,\s*({NUMBER})\s*(?:total )?tokens/s"
    rf"(?:,\s*({NUMBER})\s*output tokens/s)?"
)


def read_vllm_throughput(text: str) -> tuple[Figure, ...]:
    found = [m for line in lines(text) if (m := _THROUGHPUT.search(line))]
    if not found:
        return ()
    m = found[-1]
    names = (
        ("requests_per_s", "req/s"),
        ("total_tokens_per_s", "tok/s"),
        ("output_tokens_per_s", "tok/s"),
    )
    out = []
    for (name, unit), text_value in zip(names, m.groups(), strict=True):
        value = number(text_value) if text_value is not None else None
        if value is not None:
            out.append(Figure(name, value, unit, Better.HIGHER))
    return tuple(out)


_BLOCK_START = re.compile(r"^=+ Serving Benchmark Result =+\s*$")
_BLOCK_END = re.compile(r"^={10,}\s*$")
_ROW = re.compile(rf"^([A-Za-z0-9][^:]*?)\s*\(([^()]+)\):\s+({NUMBER})")
#: a serving row's unit → which way is better (rows in other units are no figure)
SERVING_UNITS = {
    "req/s": Better.HIGHER,
    "tok/s": Better.HIGHER,
    "ms": Better.LOWER,
    "s": Better.LOWER,
}


def slug(label: str) -> str:
    """`Mean TTFT` → `mean_ttft`: a figure's name from a printed label."""
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def read_vllm_serving(text: str) -> tuple[Figure, ...]:
    block: list[str] | None = None
    last: list[str] = []
    for line in lines(text):
        if _BLOCK_START.match(line):
            block = []
        elif block is not None and _BLOCK_END.match(line):
            last, block = block, None
        elif block is not None:
            block.append(line)
    if block:  # a block the run did not close (cut short): still what it printed
        last = block
    found: dict[str, Figure] = {}
    for line in last:
        m = _ROW.match(line)
        value = number(m.group(3)) if m else None
        if m is None or value is None or m.group(2) not in SERVING_UNITS:
            continue
        name = slug(m.group(1))
        found[name] = Figure(name, value, m.group(2), SERVING_UNITS[m.group(2)])
    return tuple(found.values())


NCCL = FigureReader(
    "nccl",
    "NVIDIA/nccl-tests src/util.cu (writeResultFooter, writeBenchmarkLineBody)",
    read_nccl,
)
VLLM_THROUGHPUT = FigureReader(
    "vllm-throughput",
    "vllm-project/vllm vllm/benchmarks/throughput.py, benchmarks/benchmark_throughput.py",
    read_vllm_throughput,
)
VLLM_SERVING = FigureReader(
    "vllm-serving",
    "vllm-project/vllm benchmarks/benchmark_serving.py, vllm/benchmarks/serve.py",
    read_vllm_serving,
)
#: the built-in readers, in the order `auto` tries them
BUILT_IN: dict[str, FigureReader] = {r.name: r for r in (NCCL, VLLM_SERVING, VLLM_THROUGHPUT)}
