"""Issue 32 (second round, still open): an importer writes only what hostc's own
snapshot reader takes (its string rules, its validation, SNAPSHOT_LIMIT), and the
nvidia-smi matrix is bounded in devices before its cells are read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.diagnostics import HostcError
from hostc.topology import snapshot
from hostc.topology.importers import nvidia_smi

# what lscpu's text lines may carry past the importer's own binary check: C1 (NEL …),
# the line and paragraph separators, bidi and zero-width characters
_ODD = "\x85\x9b\u2028\u2029\u202e\u2066\u200b\u200d\ufeff\u061c"
MODELS = st.text(
    st.one_of(st.sampled_from(list(_ODD)), st.characters(min_codepoint=0x20, max_codepoint=0x7E)),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(MODELS)
def test_an_imported_snapshot_is_one_the_reader_takes_or_none_is_written(model: str) -> None:
    text = (
        "Architecture:            x86_64\n"
        "Vendor ID:               AuthenticAMD\n"
        f"Model name:              {model}\n"
        "\n# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n"
    )
    try:
        topo = api.import_source("lscpu", text, file="lscpu.txt")
        written = api.dumps_snapshot(topo)  # what `hostc import … -o` writes
    except HostcError as e:
        assert e.diagnostics
        return
    snapshot.loads(written, "topology.toml")  # what check and build will read


def test_an_nvidia_smi_matrix_past_the_device_bound_is_refused_from_its_header() -> None:
    n = nvidia_smi.MAX_DEVICES + 1
    names = [f"GPU{i}" for i in range(n)]
    rows = ["\t".join([a, *("X" if a == b else "SYS" for b in names), "0-7", "0"]) for a in names]
    text = "\t" + "\t".join(names) + "\tCPU Affinity\tNUMA Affinity\n" + "\n".join(rows) + "\n"
    with pytest.raises(HostcError, match="device columns"):
        api.import_source("nvidia-smi", text, file="smi.txt")
