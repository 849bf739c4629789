"""A fleet host is compiled from the very bytes its content key was made from (issue 56).

The key reads the host's spec, the files it extends and its snapshot; the compile then
takes those bytes (`compile_file`'s `known`) instead of reading the files again.  Two
things follow, and are checked here: each input file is opened once per process, however
many hosts share it (a class and a snapshot once for the fleet, a host's spec once), and
a key can never describe other bytes than those the Plan was compiled from.  A
`--topology` whose lexical and real paths reach different files (a `..` after a link)
gets no key at all: its bytes would be read from one file and named by another.  And
`--out` is judged once for the fleet, not again for each host it writes."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from hostc.delivery import contentkey
from hostc.fleet.runner import Job
from hostc.pipeline.compile import compile_file
from tests.fleet.test_content_keys import _command, _make_fleet


def _sysctl(plan: object, key: str) -> str:
    return next(s.value for s in plan.sysctls if s.key == key)  # type: ignore[attr-defined]


def test_each_input_is_opened_once_for_the_whole_fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hosts = _make_fleet(tmp_path, 4, (10, 20)) / "hosts"
    inputs = {str(p) for p in (tmp_path / "fleet").rglob("*.toml")}
    inputs.add(str(tmp_path / "snap" / "topology.toml"))
    opened: Counter[str] = Counter()
    real = os.open

    def counted(path: object, *args: object, **kw: object) -> int:
        if isinstance(path, (str, os.PathLike)) and kw.get("dir_fd") is None:
            name = os.path.abspath(os.fspath(path))
            if name in inputs:
                opened[os.path.relpath(name, tmp_path)] += 1
        return real(path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counted)
    done = _command(hosts, Job("build", out=tmp_path / "out"))
    assert all(r.ok and r.files for r in done), [d.render() for r in done for d in r.errors]
    assert opened == {
        **{f"fleet/hosts/h{i}.toml": 1 for i in range(4)},
        "fleet/classes/c0.toml": 1,
        "fleet/classes/c1.toml": 1,
        "snap/topology.toml": 1,
    }


def test_the_plan_is_compiled_from_the_keyed_bytes(tmp_path: Path) -> None:
    """`known` wins over the disk (the key's bytes are the Plan's), file by file; bytes
    that are not text are read again from the disk, whose reader judges them."""
    hosts = _make_fleet(tmp_path, 2, (10, 20)) / "hosts"
    spec, cls = hosts / "h0.toml", tmp_path / "fleet" / "classes" / "c0.toml"
    assert _sysctl(compile_file(spec)[0], "vm.swappiness") == "10"
    known: dict[str, bytes] = {}
    assert contentkey.build_key(spec, ("all",), into=known) is not None
    assert set(known) == {
        os.path.normpath(p) for p in (spec, cls, tmp_path / "snap" / "topology.toml")
    }
    cls.write_text(cls.read_text().replace("= 10", "= 30"))  # after the key was made
    assert _sysctl(compile_file(spec, None, known)[0], "vm.swappiness") == "10"
    assert _sysctl(compile_file(spec)[0], "vm.swappiness") == "30"
    known[os.path.normpath(cls)] = b"\xff not text"
    assert _sysctl(compile_file(spec, None, known)[0], "vm.swappiness") == "30"


def test_a_topology_through_a_link_and_dotdot_gets_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hosts = _make_fleet(tmp_path, 1, (10, 20)) / "hosts"
    monkeypatch.chdir(tmp_path)
    snap = (tmp_path / "snap" / "topology.toml").read_bytes()
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "topology.toml").write_bytes(snap)  # what the compiler opens
    (tmp_path / "topology.toml").write_bytes(snap + b"# another file\n")  # the lexical name
    (tmp_path / "l").symlink_to("a/b")
    spec = hosts / "h0.toml"
    assert contentkey.build_key(spec, ("all",), Path("topology.toml")) is not None
    assert contentkey.build_key(spec, ("all",), Path("l/../topology.toml")) is None


def test_a_fleet_build_checks_its_out_once_not_for_every_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--out` is judged (`refusals.unsafe_out`: resolved, its file system, a directory)
    once for the whole fleet, as the one error it gives is; a one-host build's write
    still judges its own."""
    from hostc.cli.main import run
    from hostc.delivery import refusals

    hosts = _make_fleet(tmp_path, 3, (10, 20)) / "hosts"
    judged: list[Path] = []
    real = refusals.unsafe_out

    def counted(out: Path) -> str | None:
        judged.append(out)
        return real(out)

    monkeypatch.setattr(refusals, "unsafe_out", counted)
    argv = ["build", str(hosts), "--out", str(tmp_path / "out"), "--jobs", "1", "--quiet"]
    assert run(argv) == 0
    assert judged == [tmp_path / "out"]
    judged.clear()
    assert run(["build", str(hosts / "h0.toml"), "--out", str(tmp_path / "one"), "-q"]) == 0
    assert tmp_path / "one" in judged
