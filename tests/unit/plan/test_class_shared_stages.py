"""A fleet's hosts of one class share the compile stages (`pipeline.compile._by_class`,
remembered by the value of the spec without its name and of the snapshot): each host
still gets its own name, its own values, and diagnostics that name its own file.  A
cache that answered by identity, or with the last host's result, fails these."""

from __future__ import annotations

from pathlib import Path

from hostc import api
from hostc.pipeline.compile import _by_class, compile_layered
from hostc.spec.layers import DISK

from conftest import ROOT

HOSTS = sorted((ROOT / "examples" / "fleet" / "hosts").glob("*.toml"))


def test_every_host_compiles_as_it_does_unshared() -> None:
    """Each example fleet host, its class's stages remembered from the hosts before it,
    is the Plan and the warnings of the same spec compiled afresh (the cache emptied;
    `compile_layered`, as a revision's files are), its own name in its Plan."""
    for path in HOSTS:
        plan, warnings = api.compile_file(path)
        _by_class.cache_clear()  # the same spec's stages run afresh
        alone, alone_warnings = compile_layered(path, DISK)
        assert plan == alone, path
        assert plan.host.name == path.stem
        assert [d.render() for d in warnings] == [d.render() for d in alone_warnings]
    for path in HOSTS:
        api.compile_file(path)
    assert _by_class.cache_info().hits > 0  # the fleet's classes were shared


def _pair(tmp: Path, extra: str) -> list[Path]:
    """Two hosts of one class (the 4-GPU inference example's), the second with `extra`."""
    example = ROOT / "examples" / "h100-4gpu-inference"
    (tmp / "class.toml").write_text(
        (example / "node.toml")
        .read_text()
        .replace('topology = "topology.toml"', f'topology = "{example}/topology.toml"')
    )
    hosts = [tmp / "h1.toml", tmp / "h2.toml"]
    for i, host in enumerate(hosts):
        body = extra if i else ""
        host.write_text(f'extends = ["class.toml"]\n[host]\nname = "h{i + 1}"\n{body}')
    return hosts


def test_hosts_of_one_class_keep_their_own_values(tmp_path: Path) -> None:
    first, second = _pair(tmp_path, '[sysctl]\n"vm.swappiness" = 7\n')
    a, b, again = api.compile_file(first), api.compile_file(second), api.compile_file(first)
    assert (a[0].host.name, b[0].host.name, again[0].host.name) == ("h1", "h2", "h1")
    assert {s.key: s.value for s in b[0].sysctls}["vm.swappiness"] == "7"
    assert {s.key: s.value for s in a[0].sysctls}.get("vm.swappiness") != "7"
    assert again[0] == a[0]


def test_a_warning_names_the_file_of_the_host_it_is_about(tmp_path: Path) -> None:
    """A warning about a value each host file sets (CPU isolation on a training host)
    names that host's file, also when the other host of its class, whose stages are the
    same, was compiled first."""
    first, second = _pair(tmp_path, "")
    for host in (first, second):
        text = host.read_text().replace("[host]\n", '[host]\nrole = "training"\n')
        host.write_text(text + '[cpu]\nisolate = "workload"\n')
    for host in (first, second, first):
        warnings = api.compile_file(host)[1]
        assert warnings, host
        assert all(d.file == str(host) for d in warnings), [d.render() for d in warnings]
