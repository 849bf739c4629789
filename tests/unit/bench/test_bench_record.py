"""The bench record: what `save` writes `load` reads back, and a name is never reused."""

from __future__ import annotations

import json
from pathlib import Path

from hostc.bench.readers import Better, Figure
from hostc.bench.record import FORMAT, VERSION, document, load, save
from hostc.bench.run import Run, Series
from hostc.bench.state import InEffect, SeenSetting


def series(values: list[float]) -> Series:
    effect = InEffect({"sha256": "ab" * 32, "host": "h"}, "ro quiet", (SeenSetting("x", "1", "1"),))
    runs = tuple(
        Run(
            i + 1,
            "2026-01-01T00:00:00+00:00",
            "2026-01-01T00:00:01+00:00",
            1.0,
            0,
            (
                Figure("avg_bus_bandwidth", v, "GB/s", Better.HIGHER),
                Figure("busbw_oop_8_float_sum", v / 2, "GB/s", Better.HIGHER, headline=False),
            ),
            effect,
        )
        for i, v in enumerate(values)
    )
    return Series(("all_reduce_perf", "-b", "8"), "nccl", runs)


def test_a_saved_record_loads_with_every_figure_and_run(tmp_path: Path) -> None:
    doc = document(series([1.0, 2.0, 3.0]), kind="bench", hostc="0.1.0", spec=None, root=Path("/"))
    path = save(tmp_path / "records", doc)
    assert path.name == "bench-20260101T000000Z.json"
    loaded = load(path)
    assert loaded.values == {
        "avg_bus_bandwidth": (1.0, 2.0, 3.0),
        "busbw_oop_8_float_sum": (0.5, 1.0, 1.5),
    }
    assert loaded.figures["avg_bus_bandwidth"].headline
    assert not loaded.figures["busbw_oop_8_float_sum"].headline
    assert loaded.command == ("all_reduce_perf", "-b", "8") and loaded.reader == "nccl"
    assert loaded.in_effect[0]["build"]["host"] == "h"
    raw = json.loads(path.read_text())
    assert (raw["format"], raw["version"]) == (FORMAT, VERSION)


def test_a_second_record_of_the_same_second_gets_its_own_name(tmp_path: Path) -> None:
    doc = document(series([1.0]), kind="bench", hostc="0.1.0", spec=None, root=Path("/"))
    first, second = save(tmp_path, doc), save(tmp_path, doc)
    assert (first.name, second.name) == (
        "bench-20260101T000000Z.json",
        "bench-20260101T000000Z-2.json",
    )
