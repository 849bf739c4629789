"""Content keys (issue 56): a fleet host whose inputs did not change is not compiled
again, and the fast path gives exactly what the full path gives.

The property test generates small fleets (two classes over the EPYC example's snapshot,
a few hosts) and an edit (a byte in a class, a host or the snapshot, a comment, a host
renamed or removed, a class removed, an `extends` edit, another hostc version, other
targets), then runs `build`, `changed` and `diff DIR@REV DIR` twice: with the keys, and
with them switched off (the full path).  The results, and every file the two builds
leave under their --out (the build records included), must be equal.  Leaving any input
out of the key makes a skipped host keep its old output where the full path writes the
new one: the comparison of the trees fails."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import hostc
from hostc.delivery import contentkey
from hostc.fleet import diffskip, fleetdiff
from hostc.fleet import runner as fleet
from hostc.fleet.runner import Job
from tests.fleet.test_fleet_review import _git

from conftest import ROOT

SNAPSHOT = ROOT / "examples" / "epyc-1s-training" / "topology.toml"

EDITS = (
    "class-value",
    "class-comment",
    "host-value",
    "snapshot-value",
    "snapshot-comment",
    "rename-host",
    "remove-host",
    "remove-class",
    "extends",
    "version",
    "targets",
    "nothing",
)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The seal's secret in a folder of the test's own, never under $HOME."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = old


def _make_fleet(root: Path, hosts: int, swappiness: tuple[int, int]) -> Path:
    (root / "fleet" / "classes").mkdir(parents=True)
    (root / "fleet" / "hosts").mkdir()
    (root / "snap").mkdir()
    shutil.copy(SNAPSHOT, root / "snap" / "topology.toml")
    for i, value in enumerate(swappiness):
        (root / "fleet" / "classes" / f"c{i}.toml").write_text(
            'version = 1\n\n[host]\nname = "c"\nrole = "training"\n'
            'topology = "../../snap/topology.toml"\n\n'
            f'[sysctl]\n"vm.swappiness" = {value}\n\n[runtime]\nowner = "tuned"\n'
        )
    for h in range(hosts):
        (root / "fleet" / "hosts" / f"h{h}.toml").write_text(
            f'extends = ["../classes/c{h % 2}.toml"]\n\n[host]\nname = "h{h}"\n'
        )
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "fleet")
    return root / "fleet"


def _edit(root: Path, what: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """Apply one edit to the working tree; the targets the rebuild asks for."""
    hosts, classes = root / "fleet" / "hosts", root / "fleet" / "classes"
    snap = root / "snap" / "topology.toml"
    if what == "class-value":
        c = classes / "c0.toml"
        c.write_text(c.read_text().replace('"vm.swappiness" = ', '"vm.swappiness" = 1'))
    elif what == "class-comment":
        (classes / "c1.toml").write_text((classes / "c1.toml").read_text() + "# note\n")
    elif what == "host-value":
        h = hosts / "h0.toml"
        h.write_text(h.read_text() + '\n[sysctl]\n"vm.dirty_ratio" = 17\n')
    elif what == "snapshot-value":
        snap.write_text(snap.read_text().replace("6.8.0-49-generic", "6.8.0-51-generic"))
    elif what == "snapshot-comment":
        snap.write_text(snap.read_text() + "# re-probed\n")
    elif what == "rename-host":
        (hosts / "h1.toml").rename(hosts / "h9.toml")
    elif what == "remove-host":
        (hosts / "h0.toml").unlink()
    elif what == "remove-class":
        (classes / "c1.toml").unlink()
    elif what == "extends":
        h = hosts / "h0.toml"
        h.write_text(h.read_text().replace("c0.toml", "c1.toml"))
    elif what == "version":
        monkeypatch.setattr(hostc, "__version__", hostc.__version__ + ".post1")
    if what == "targets":
        return ("sysctl", "tuned")
    return ("all",)


def _full_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """No host skipped, and every host compiled from the disk, not from its key's bytes."""
    real = fleet.compile_file
    monkeypatch.setattr(fleet, "compile_file", lambda spec, topo=None, known=None: real(spec, topo))
    monkeypatch.setattr(fleet, "_unchanged", lambda host, job, key: None)
    monkeypatch.setattr(fleet, "changed_unchanged", lambda host, job: None)
    monkeypatch.setattr(fleetdiff, "same_hosts", lambda old, new, pairs: set())


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _same_out(text: str) -> str:
    return text.replace("out-fast", "OUT").replace("out-full", "OUT")


def _rows(results: list[fleet.Result]) -> list[tuple[object, ...]]:
    return [
        (
            r.host,
            r.ok,
            r.files,
            r.unchanged,
            _same_out(str((r.removed, r.kept))),
            r.disruption,
            r.gone,
            tuple(_same_out(d.render()) for d in (*r.errors, *r.warnings)),
            r.differences,
        )
        for r in results
    ]


def _command(hosts: Path, job: Job) -> list[fleet.Result]:
    found = fleet.run(fleet.select(str(hosts)), job, 1, lambda done, total: None)
    return found + fleet.stale_hosts(found, job)


#: the hosts the fast path compiled in the last `_both`
COMPILED: list[str] = []


def _both(
    root: Path, job: Job, out_fast: Path, out_full: Path
) -> tuple[list[fleet.Result], list[fleet.Result]]:
    hosts = root / "fleet" / "hosts"
    COMPILED.clear()
    with pytest.MonkeyPatch.context() as mp:
        real = fleet.compile_file

        def counted(spec: object, *args: object) -> object:
            COMPILED.append(Path(str(spec)).stem)
            return real(spec, *args)  # type: ignore[arg-type]

        mp.setattr(fleet, "compile_file", counted)
        fast = _command(hosts, attrs_evolve(job, out=out_fast))
    with pytest.MonkeyPatch.context() as mp:
        _full_path(mp)
        full = _command(hosts, attrs_evolve(job, out=out_full))
    return fast, full


def attrs_evolve(job: Job, **kw: object) -> Job:
    import attrs

    return attrs.evolve(job, **kw)


@settings(
    max_examples=2,
    deadline=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),  # a failure is shown as found
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    hosts=st.integers(min_value=2, max_value=4),
    swappiness=st.tuples(st.integers(1, 60), st.integers(1, 60)),
)
@pytest.mark.parametrize("edit", EDITS)
def test_the_fast_path_gives_exactly_the_full_path_result(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    hosts: int,
    swappiness: tuple[int, int],
    edit: str,
) -> None:
    root = tmp_path_factory.mktemp("fleet")
    fleet_dir = _make_fleet(root, hosts, swappiness)
    out_fast, out_full = root / "out-fast", root / "out-full"
    monkeypatch.chdir(root)  # the key holds the working directory: the same throughout
    first = Job("build", ("all",))
    fast, full = _both(root, first, out_fast, out_full)
    assert _rows(fast) == _rows(full)
    with monkeypatch.context() as mp:
        targets = _edit(root, edit, mp)
        # what the pull request costs, against the recorded build, before rebuilding
        changed = Job("changed")
        fast, full = _both(root, changed, out_fast, out_full)
        assert _rows(fast) == _rows(full), edit
        # `build --check` (what `pre-commit` runs for the hosts it picks): stale hosts
        # and their differences as the full path finds them
        check = Job("build", targets, compare=True)
        fast, full = _both(root, check, out_fast, out_full)
        assert _rows(fast) == _rows(full), edit
        # the review of the edit against the commit
        review_fast = fleetdiff.fleet_json(
            fleetdiff.fleet_review("fleet/hosts@HEAD", "fleet/hosts", 1)
        )
        with pytest.MonkeyPatch.context() as off:
            _full_path(off)
            review_full = fleetdiff.fleet_json(
                fleetdiff.fleet_review("fleet/hosts@HEAD", "fleet/hosts", 1)
            )
        assert review_fast == review_full, edit
        # the rebuild, and every file it leaves
        fast, full = _both(root, Job("build", targets), out_fast, out_full)
        assert _rows(fast) == _rows(full), edit
        assert _tree(out_fast) == _tree(out_full), edit
        if edit in ("version", "targets"):  # the same bytes, but never a key of another job
            assert sorted(COMPILED) == sorted(p.stem for p in (fleet_dir / "hosts").iterdir())
        # and once more, nothing changed: the fast path skips and still agrees
        fast, full = _both(root, Job("build", targets), out_fast, out_full)
        assert _rows(fast) == _rows(full), edit
        assert _tree(out_fast) == _tree(out_full), edit
        # compiled again: a host that fails (no key: the compiler says what is wrong), and
        # every host of a build of fewer targets (its record carries the others' files)
        again = {r.host for r in fast if not r.ok or edit == "targets"}
        assert set(COMPILED) == again, edit
        # the check of the rebuilt output: current everywhere, and nothing compiled
        fast, full = _both(root, check, out_fast, out_full)
        assert _rows(fast) == _rows(full), edit
        assert set(COMPILED) == again and not any(r.differences for r in fast), edit
    assert fleet_dir.exists()


def test_an_unchanged_rebuild_compiles_nothing_and_notices_an_edited_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hosts = _make_fleet(tmp_path, 3, (10, 20)) / "hosts"
    out = tmp_path / "out"
    _command(hosts, Job("build", out=out))
    compiled: list[str] = []
    real = fleet.compile_file

    def counted(spec: object, *args: object) -> object:
        compiled.append(str(spec))
        return real(spec, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(fleet, "compile_file", counted)
    again = _command(hosts, Job("build", out=out))
    assert compiled == [] and all(r.unchanged == r.files > 0 for r in again)
    # an output edited (or removed) on disk: that host is built again, as before
    edited = next((out / "h1" / "sysctl").rglob("*.conf"))
    edited.write_text(edited.read_text() + "# edited\n")
    (next((out / "h2").rglob("*.service"))).unlink()
    again = _command(hosts, Job("build", out=out))
    assert sorted(Path(c).stem for c in compiled) == ["h1", "h2"]
    assert "# edited" not in edited.read_text()
    assert [r.files - r.unchanged for r in again] == [0, 1, 1]


def test_a_planted_record_is_never_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record committed under out/ (a pull request's) carries no seal of this cache's
    secret: the host is compiled and its planted file replaced."""
    hosts = _make_fleet(tmp_path, 2, (10, 20)) / "hosts"
    out = tmp_path / "out"
    _command(hosts, Job("build", out=out))
    conf = next((out / "h0" / "sysctl").rglob("*.conf"))
    good = conf.read_bytes()
    # another machine's cache: a new secret, so every seal here is foreign
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other-cache"))
    conf.write_bytes(good + b"vm.swappiness = 99\n")
    record = out / "h0" / ".hostc-build.json"
    import hashlib
    import json

    doc = json.loads(record.read_text())
    for row in doc["files"]:
        if conf.as_posix().endswith(row["path"]):
            row["sha256"] = hashlib.sha256(conf.read_bytes()).hexdigest()
    record.write_text(json.dumps(doc))
    _command(hosts, Job("build", out=out))
    assert conf.read_bytes() == good


def test_the_key_names_every_input(tmp_path: Path) -> None:
    hosts = _make_fleet(tmp_path, 2, (10, 20)) / "hosts"
    found = contentkey.walk(hosts / "h0.toml", contentkey.DISK)
    assert found is not None
    names = {os.path.relpath(n, tmp_path) for n, _ in found}
    assert names == {"fleet/hosts/h0.toml", "fleet/classes/c0.toml", "snap/topology.toml"}
    assert diffskip.same_hosts("a", "b", []) == set()


def test_a_check_without_compiling_still_reports_a_file_the_build_does_not_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`build --check` skips a host only when nothing under its target folders differs:
    a file planted beside the recorded ones (not in the record) is stale, as the full
    path reports it; an edited output likewise."""
    hosts = _make_fleet(tmp_path, 3, (10, 20)) / "hosts"
    monkeypatch.chdir(tmp_path)
    out_fast, out_full = tmp_path / "out-fast", tmp_path / "out-full"
    _both(tmp_path, Job("build"), out_fast, out_full)
    for out in (out_fast, out_full):
        (out / "h0" / "sysctl" / "planted.conf").write_text("vm.swappiness = 1\n")
        edited = next((out / "h1" / "sysctl").rglob("*.conf"))
        edited.write_text(edited.read_text() + "# edited\n")
    fast, full = _both(tmp_path, Job("build", compare=True), out_fast, out_full)
    assert _rows(fast) == _rows(full)
    assert sorted(COMPILED) == ["h0", "h1"], "h2 is current: not compiled"
    assert [bool(r.differences) for r in fast] == [True, True, False]
    assert hosts.is_dir()


def test_pre_commit_gives_the_full_path_answer_and_the_switch_turns_the_keys_off(
    tmp_path: Path,
) -> None:
    """`hostc pre-commit --json` after a class edit, then after the rebuild: the same
    answer with the keys as with `HOSTC_BENCH_FULL_PATH=1` (the benchmarks' full path,
    which must compile every host: a key it left on would time the fast path twice)."""
    from conftest import run_hostc

    _make_fleet(tmp_path, 4, (10, 20))
    env = {"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    full = {**env, contentkey.FULL_PATH: "1"}
    assert run_hostc("build", "fleet/hosts", "-o", "out", cwd=tmp_path, env=env).returncode == 0
    cls = tmp_path / "fleet" / "classes" / "c0.toml"
    cls.write_text(cls.read_text().replace('"vm.swappiness" = ', '"vm.swappiness" = 2'))
    args = ("pre-commit", "fleet/hosts", "fleet/classes/c0.toml", "--json")
    for expect in (1, 0):
        fast = run_hostc(*args, cwd=tmp_path, env=env)
        slow = run_hostc(*args, cwd=tmp_path, env=full)
        assert (fast.returncode, fast.stdout) == (slow.returncode, slow.stdout)
        assert fast.returncode == expect, fast.stderr
        run_hostc("build", "fleet/hosts", "-o", "out", cwd=tmp_path, env=env)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(contentkey.FULL_PATH, "1")
        assert contentkey.build_key(tmp_path / "fleet/hosts/h0.toml", ("all",)) is None
        mp.chdir(tmp_path)
        pair = [("h1", "fleet/hosts/h1.toml@HEAD", "fleet/hosts/h1.toml")]  # c1: not edited
        assert diffskip.same_hosts("fleet/hosts@HEAD", "fleet/hosts", pair) == set()
        mp.delenv(contentkey.FULL_PATH)
        assert diffskip.same_hosts("fleet/hosts@HEAD", "fleet/hosts", pair) == {"h1"}


def test_a_record_is_sealed_as_its_bytes_without_the_seal(tmp_path: Path) -> None:
    """The seal covers the record's bytes as written, less its own line
    (`owned.sealed_body`): exactly `_dump` of the other fields.  A second seal line finds
    no body; one byte changed anywhere else breaks the seal (a rebuild)."""
    from hostc.delivery import owned, reuse

    hosts = _make_fleet(tmp_path, 2, (10, 20)) / "hosts"
    out = tmp_path / "out"
    _command(hosts, Job("build", out=out))
    for host in ("h0", "h1"):
        record = out / host / owned.RECORD
        data = record.read_bytes()
        doc = json.loads(data)
        mark = doc.pop(contentkey.FIELD)
        assert owned.sealed_body(data, mark) == owned._dump(doc)
        line = f'\n "{contentkey.FIELD}": "{mark}",'.encode()
        assert owned.sealed_body(data.replace(line, line + line), mark) is None
        key = contentkey.build_key(hosts / f"{host}.toml", ("all",))
        assert key is not None
        assert reuse.sealed(key, (json.loads(data), data, os.stat(record)))
        edited = data.replace(b'"all"', b'"al1"')
        found = (json.loads(data), edited, os.stat(record))
        assert edited != data and not reuse.sealed(key, found)
