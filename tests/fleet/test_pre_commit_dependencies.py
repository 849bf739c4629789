"""Issue 32, class 5: the pre-commit hook models its real dependencies.  A host is
re-checked when a file its build reads changed (its spec, a class it extends, its
topology snapshot) or one of its committed outputs, whether pre-commit names the file
relative to the repository and the fleet is named by an absolute path or the reverse."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hostc.api import fleet

from conftest import ROOT

FLEET = ROOT / "examples" / "fleet"
HOSTS = fleet.select(str(FLEET / "hosts"))
CLASS_OF = {h.name: "dgx-inference" if h.name.startswith("dgx") else "epyc-training" for h in HOSTS}
SNAPSHOT = {
    "dgx-inference": "examples/dgx-h100-inference/topology.toml",
    "epyc-training": "examples/epyc-1s-training/topology.toml",
}


def _reads(host: str) -> dict[str, str]:
    """What each kind of change means for `host`: the repository file changed."""
    return {
        "spec": f"examples/fleet/hosts/{host}.toml",
        "class": f"examples/fleet/classes/{CLASS_OF[host]}.toml",
        "snapshot": SNAPSHOT[CLASS_OF[host]],
        "output": f"out/{host}/etc/sysctl.d/90-hostc.conf",
    }


@contextlib.contextmanager
def _in(folder: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(sorted(CLASS_OF)),
    st.sampled_from(["spec", "class", "snapshot", "output", "README.md"]),
    st.booleans(),
    st.booleans(),
)
def test_pre_commit_rechecks_every_host_whose_inputs_or_output_changed(
    host: str, kind: str, changed_absolute: bool, fleet_absolute: bool
) -> None:
    changed = _reads(host).get(kind, kind)
    shown = str(ROOT / changed) if changed_absolute else changed
    with _in(ROOT):
        hosts = fleet.select(str(FLEET / "hosts") if fleet_absolute else "examples/fleet/hosts")
        out = ROOT / "out" if fleet_absolute else Path("out")
        chosen = {h.name for h in hosts if fleet.affected(h, out, [shown])}
    expected = {h for h in CLASS_OF if changed in _reads(h).values()}
    assert chosen == expected, (changed, chosen)
