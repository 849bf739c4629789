"""Fuzzing: malformed specs (and snapshots) never crash hostc and never write anything.

Hypothesis mutates the valid h100 example: byte flips, key deletions and renames,
type swaps, injected control characters, huge values.  Each input goes through
what `hostc build --out DIR` does (load, read, check, lower, emit, write): it
either builds, or raises HostcError whose every diagnostic names a file, with
nothing written.  Any other exception is a bug (the CLI's exit 3).  A sample
also runs through the real CLI in a subprocess.

The default profile is derandomized and sized for CI; `HYPOTHESIS_PROFILE=fuzz-long`
runs many more examples (not run by CI).  The last test counts the distinct
malformed inputs seen (at least 200).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.cli.main import _show
from hostc.diagnostics import HostcError
from hostc.topology import snapshot

from conftest import ROOT
from topogen import H100_KW, machine

SPEC = (ROOT / "examples/h100-4gpu-inference/node.toml").read_text()
H100 = H100_KW
TOPOLOGY = snapshot.dumps(machine(**H100))  # type: ignore[arg-type]

settings.register_profile(
    "fuzz-default",
    max_examples=70,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "fuzz-long",
    max_examples=3000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
PROFILE = settings.get_profile(
    "fuzz-long" if os.environ.get("HYPOTHESIS_PROFILE") == "fuzz-long" else "fuzz-default"
)

#: Every distinct input that was refused (exit 2), across the module.
MALFORMED: set[bytes] = set()


def attempt(spec_bytes: bytes, work: Path, topology: bytes | None = None) -> bool:
    """What `hostc build SPEC --out DIR` does; True when it built, False when refused."""
    spec = work / "node.toml"
    spec.write_bytes(spec_bytes)
    (work / "topology.toml").write_bytes(TOPOLOGY.encode() if topology is None else topology)
    out = work / "out"
    if out.exists():
        import shutil

        shutil.rmtree(out)
    try:
        plan, _ = api.compile_file(spec)
        api.write(api.emit(plan, ["all"]), out)
    except HostcError as e:
        assert e.errors, e.diagnostics
        for d in e.errors:
            assert d.file, d
            shown = _show(d)  # what the CLI prints: one line per field, short
            assert len(shown) < 4000 and "\n" not in str(d.path), shown[:200]
        assert not out.exists(), sorted(map(str, out.rglob("*")))
        MALFORMED.add(spec_bytes + b"\0" + (topology or b""))
        return False
    return True


def leaves(d: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(d, dict):
        out = [(*path, k) for k in d] if path else []
        for k, v in d.items():
            out += leaves(v, (*path, k))
        return out or [path]
    if isinstance(d, list):
        out = []
        for i, v in enumerate(d):
            out += [(*path, i), *leaves(v, (*path, i))]
        return out
    return []


def parent_and_key(data: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    node = data
    for k in path[:-1]:
        node = node[k]
    return node, path[-1]


BASE = tomllib.loads(SPEC)
PATHS = sorted({p for p in leaves(BASE) if p}, key=repr)
CONTROL = ["\n", "\r", "\x00", "\t", "\x1b", "\x7f", "\u2028", "\x85"]
ODD_VALUES: list[Any] = [
    "",
    "x" * 5000,
    10**30,
    -(10**18),
    -1,
    0,
    1.5,
    True,
    [],
    {},
    [[["deep"]]],
    {"a": {"b": 1}},
    "{a,b}",
    "#x",
    "$(id)",
    "../../etc/passwd",
    "\ud7ff",
    "0-100000000",
]


def dumps(data: Any) -> bytes:
    return tomli_w.dumps(data).encode()


@st.composite
def byte_flips(draw: st.DrawFn) -> bytes:
    raw = bytearray(SPEC.encode())
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(raw) - 1))
        raw[i] = draw(st.integers(0, 255))
    return bytes(raw)


@st.composite
def deletions(draw: st.DrawFn) -> bytes:
    import copy

    data = copy.deepcopy(BASE)
    path = draw(st.sampled_from(PATHS))
    node, key = parent_and_key(data, path)
    del node[key]
    return dumps(data)


@st.composite
def renames(draw: st.DrawFn) -> bytes:
    import copy

    data = copy.deepcopy(BASE)
    path = draw(st.sampled_from([p for p in PATHS if isinstance(p[-1], str)]))
    node, key = parent_and_key(data, path)
    new = draw(st.text(min_size=1, max_size=12) | st.sampled_from(CONTROL))
    node[new] = node.pop(key)
    return dumps(data)


@st.composite
def swaps(draw: st.DrawFn) -> bytes:
    import copy

    data = copy.deepcopy(BASE)
    path = draw(st.sampled_from(PATHS))
    node, key = parent_and_key(data, path)
    node[key] = draw(st.sampled_from(ODD_VALUES))
    return dumps(data)


@st.composite
def injections(draw: st.DrawFn) -> bytes:
    import copy

    data = copy.deepcopy(BASE)
    strings = [p for p in PATHS if isinstance(parent_and_key(data, p)[0][p[-1]], str)]
    path = draw(st.sampled_from(strings))
    node, key = parent_and_key(data, path)
    value = node[key]
    i = draw(st.integers(0, len(value)))
    node[key] = value[:i] + draw(st.sampled_from(CONTROL)) + draw(st.text(max_size=8)) + value[i:]
    return dumps(data)


@pytest.mark.parametrize("kind", [byte_flips, deletions, renames, swaps, injections])
def test_mutated_specs_never_crash_nor_write(kind: Any, tmp_path_factory: Any) -> None:
    work = tmp_path_factory.mktemp("fuzz")

    @PROFILE
    @given(kind())
    def run(spec: bytes) -> None:
        attempt(spec, work)

    run()


@st.composite
def snapshot_mutations(draw: st.DrawFn) -> bytes:
    raw = bytearray(TOPOLOGY.encode())
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(raw) - 1))
        raw[i] = draw(st.sampled_from([0, 10, 13, 34, 35, 61, 91, 93, 123, 125, 48, 57, 255]))
    return bytes(raw)


def test_mutated_snapshots_never_crash_nor_write(tmp_path_factory: Any) -> None:
    work = tmp_path_factory.mktemp("fuzz-snap")

    @PROFILE
    @given(snapshot_mutations())
    def run(topo: bytes) -> None:
        attempt(SPEC.encode(), work, topo)

    run()


def test_a_sample_through_the_real_cli(tmp_path: Path) -> None:
    rng = random.Random(7)
    raw = SPEC.encode()
    (tmp_path / "topology.toml").write_text(TOPOLOGY)
    for n in range(8):
        data = bytearray(raw)
        for _ in range(3):
            data[rng.randrange(len(data))] = rng.choice(b'\x00\n"[]{}#=\xff')
        spec = tmp_path / "node.toml"
        spec.write_bytes(bytes(data))
        out = tmp_path / f"out{n}"
        r = subprocess.run(
            [sys.executable, "-m", "hostc", "build", spec, "--out", out],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert r.returncode in (0, 2), r.stderr
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
        if r.returncode == 2:
            assert "node.toml" in r.stderr or "topology.toml" in r.stderr, r.stderr
            assert not out.exists()
            MALFORMED.add(bytes(data))


def test_zz_enough_malformed_inputs_were_tried() -> None:
    """Runs last in this module: the suite tried at least 200 distinct malformed inputs."""
    assert len(MALFORMED) >= 200, len(MALFORMED)
