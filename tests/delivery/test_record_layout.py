"""The build record's bytes (`owned._dump`): whatever it holds reads back as itself, and a
recorded file is one line, so a diff of a committed `out/` shows one line a changed file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hostc import api
from hostc.delivery import contentkey
from hostc.delivery.owned import RECORD, _dump, _with_seal, sealed_body

from conftest import ROOT

SCALARS = st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), VALUES, max_size=8))
def test_any_record_reads_back_as_itself(doc: dict[str, Any]) -> None:
    data = _dump(doc)
    assert json.loads(data) == doc
    assert data.endswith(b"}\n")


def test_a_recorded_file_is_one_line(tmp_path: Path) -> None:
    plan, _ = api.compile_file(ROOT / "examples" / "fleet" / "hosts" / "dgx-r1-01.toml")
    api.write_build(plan, api.emit(plan, ["all"]), tmp_path)
    text = (tmp_path / RECORD).read_text()
    doc = json.loads(text)
    lines = text.splitlines()
    for row in doc["files"]:
        assert sum(f'"path": "{row["path"]}"' in line for line in lines) == 1, row["path"]
        assert any(line.strip().rstrip(",") == json.dumps(row, sort_keys=True) for line in lines)
    assert f' "fleet": {json.dumps(doc["fleet"])},' in lines


#: the fields `owned.write` gives every record, besides the seal
FIELDS = ("hostc_build", "note", "scope", "selected", "fleet", "facts", "dirs", "files")


@given(st.fixed_dictionaries({k: VALUES for k in FIELDS}), st.text())
def test_the_seal_goes_in_without_serialising_again(doc: dict[str, Any], found: str) -> None:
    """`_with_seal` (a fresh host's record, dumped once) writes the very bytes `_dump`
    writes with the seal among the fields, and `sealed_body` takes them back out."""
    body = _dump(doc)
    data = _with_seal(body, found)
    assert data == _dump({**doc, contentkey.FIELD: found})
    assert sealed_body(data, found) == body
