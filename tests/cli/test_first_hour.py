"""The first hour: what a new user meets, from a fresh clone to a first build."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hostc import api
from hostc.cli.main import TARGET_HELP
from hostc.diagnostics import HostcError
from hostc.targets import TARGETS, TargetRole
from hostc.topology import snapshot

from conftest import ROOT, run_hostc
from topogen import H100_KW, machine

SPEC = 'version = 1\n[host]\nname = "t"\nrole = "inference"\nkernel = "6.8"\n'


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "topology.toml").write_text(snapshot.dumps(machine(**H100_KW)))  # type: ignore[arg-type]
    (tmp_path / "node.toml").write_text(SPEC + 'topology = "topology.toml"\n')
    return tmp_path


def test_target_help_names_what_all_includes() -> None:
    for name, t in TARGETS.items():
        assert name in TARGET_HELP, name
        where = TARGET_HELP.index(name)
        in_wrappers = where > TARGET_HELP.index("wrappers")
        assert in_wrappers == (t.role is TargetRole.WRAPPER), name


def test_an_unknown_os_is_a_warning_in_check_and_an_error_under_strict(work: Path) -> None:
    r = run_hostc("check", work / "node.toml", cwd=work)
    assert r.returncode == 0, r.stderr
    assert "warning:" in r.stderr and "Debian GRUB" in r.stderr and "host.os" in r.stderr
    r = run_hostc("check", work / "node.toml", "--strict", cwd=work)
    assert r.returncode == 2 and "error:" in r.stderr and "host.os" in r.stderr


def test_ignition_for_a_host_that_is_not_coreos_warns() -> None:
    plan, _ = api.compile_file(ROOT / "examples" / "h100-kubeadm" / "node.toml")
    found = api.target_warnings(plan, ["ignition"])
    assert found and "CoreOS" in found[0].message
    assert not api.target_warnings(plan, ["cloud-init"])


def test_the_summary_names_the_one_file_written(work: Path) -> None:
    r = run_hostc("build", work / "node.toml", "-t", "sysctl", "-o", work / "out", cwd=work)
    assert r.returncode == 0, r.stderr
    assert re.search(r"wrote 1 file: .*out/sysctl/etc/sysctl.d/90-hostc.conf", r.stderr)


def test_import_says_what_it_found(work: Path) -> None:
    lscpu = work / "lscpu.txt"
    lscpu.write_text("# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n2,2,1,1\n3,3,1,1\n")
    r = run_hostc("import", "lscpu", lscpu, "--arch", "x86_64", "-o", work / "s.toml")
    assert r.returncode == 0, r.stderr
    assert "found 4 CPUs, 2 NUMA nodes, 0 GPUs, 0 NICs" in r.stderr


def test_an_empty_host_topology_is_named(work: Path) -> None:
    (work / "node.toml").write_text(SPEC + 'topology = ""\n')
    r = run_hostc("check", work / "node.toml", cwd=work)
    assert r.returncode == 2 and "host.topology: is empty" in r.stderr, r.stderr


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ("[limits]\nnofile = 99999999999999999999\n", "limits.nofile"),
        ("[limits]\nnofile = 2000000000\n", "limits.nofile"),
        ("[limits]\nmemlock = 99999999999999999999\n", "limits.memlock"),
        ("[limits]\nmemlock = 9223372036854775807\n", "limits.memlock"),
        ('[sysctl]\n"vm.swappiness" = 99999999999999999999999\n', "sysctl"),
        ("[cpu]\nhousekeeping_per_node = 99999999\n", "cpu.housekeeping_per_node"),
    ],
)
def test_a_number_that_is_too_large_is_called_too_large(extra: str, path: str) -> None:
    with pytest.raises(HostcError) as e:
        api.compile_plan(api.loads_spec(SPEC + extra), machine(**H100_KW))  # type: ignore[arg-type]
    assert "too large" in str(e.value) and path in str(e.value), str(e.value)


def test_no_test_runs_a_hard_coded_interpreter() -> None:
    for path in (ROOT / "tests").rglob("*.py"):
        if path.name != "test_first_hour.py":
            assert ".venv/bin/python" not in path.read_text(), path.name


def test_a_fresh_clone_skips_what_needs_shared_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's fresh clone has no ../shared: the corpus parametrisations still collect
    one test each, which skips naming the folder (never an empty set).  Outside CI, as a
    fresh clone runs (under CI=true the same call fails collection instead)."""
    import conftest
    from conftest import nonempty

    monkeypatch.setattr(conftest, "IN_CI", False)
    (param,) = nonempty([], "no corpus under /nowhere")
    assert param.id == "absent" and "no corpus" in str(param.marks)


def test_a_topology_that_cannot_be_read_points_at_host_topology(work: Path) -> None:
    (work / "node.toml").write_text(SPEC + 'topology = "."\n')
    r = run_hostc("check", work / "node.toml", cwd=work)
    assert r.returncode == 2 and "host.topology" in r.stderr, r.stderr


def test_a_missing_shared_path_skips_locally_and_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every test that needs ../shared (real topologies, consumers' harnesses) asks
    `conftest.shared`: a fresh clone (no ../shared at all) skips naming ../shared, one
    reason for all (`pytest -rs` folds them into one line); a ../shared without the file
    skips naming the file; CI fails."""
    import conftest

    monkeypatch.setattr(conftest, "SHARED", Path("/nowhere"))
    monkeypatch.setattr(conftest, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception, match=r"^/nowhere not present"):
        conftest.shared("tools", "cloud-init-apply")
    monkeypatch.setattr(conftest, "SHARED", tmp_path)
    named = rf"^{re.escape(str(tmp_path))}/tools/cloud-init-apply"
    with pytest.raises(pytest.skip.Exception, match=named):
        conftest.shared("tools", "cloud-init-apply")
    monkeypatch.setattr(conftest, "SHARED", Path("/nowhere"))
    monkeypatch.setattr(conftest, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match="CI must provide"):
        conftest.shared("tools", "cloud-init-apply")
