"""locate: a key path → the line of the spec that writes it (diagnostics, provenance)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from hostc.locate import _split, locate, scan

SOURCE = """\
version = 1

[host]
name = "n1"
"role" = "inference"

[cpu]
housekeeping_per_node = 2

[[workload]]
name = "a"
gpus = [
  "GPU0",
  "GPU1",
]

[[workload]]
name = "b"
"""


def _split_by_regex(dotted: str) -> list[str]:
    """The general splitter (quoted parts keep their dots), the fast path's reference."""
    parts = re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", dotted)
    return [p.strip().strip("\"'") for p in parts if p.strip()]


@given(st.text(alphabet=st.sampled_from(list("ab_-.1 \t\"'")), max_size=30))
def test_split_fast_path_agrees_with_the_regex(dotted: str) -> None:
    assert _split(dotted) == _split_by_regex(dotted)


def test_lines_of_keys_tables_and_array_elements() -> None:
    assert locate("host.name", SOURCE) == 4
    assert locate("host.role", SOURCE) == 5  # a quoted key
    assert locate("cpu.housekeeping_per_node", SOURCE) == 8
    assert locate("workload[1].name", SOURCE) == 18
    assert locate("workload[0].gpus[1]", SOURCE) == 14
    assert locate("cpu.isolate", SOURCE) == 7  # not written: its nearest written parent
    assert locate("kernel.thp", SOURCE) is None


def test_one_scan_answers_like_the_text() -> None:
    found = scan(SOURCE)
    for path in ("host.name", "workload[0].gpus[0]", "workload[1]", "cpu", "nothing"):
        assert locate(path, found) == locate(path, SOURCE)
