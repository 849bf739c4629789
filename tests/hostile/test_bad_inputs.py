"""Bad inputs through the real CLI: exit 2, file:line: key path on stderr, nothing written.

Every case writes a spec (and a snapshot where it needs one) into tmp_path and
runs `python -m hostc build SPEC --target all --out OUT` in a subprocess, the
way a user or a provisioning pipeline runs it.  The expected line is found in
the text the case wrote (the line where the offending key is written), never
taken from hostc's own output.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import NamedTuple

import attrs
import pytest

from hostc.topology import snapshot
from hostc.topology.model import Topology

from conftest import run_hostc
from topogen import H100_KW, machine

H100 = H100_KW  # the h100 example's machine

HEAD = """\
version = 1

[host]
name = "t"
role = "inference"
topology = "topology.toml"
"""

WORKLOAD = """
[[workload]]
name = "vllm"
gpus = ["GPU0", "GPU1"]
"""


class Case(NamedTuple):
    id: str
    spec: str | None  # node.toml text; None: no spec file at all
    topology: Topology | str | None = "default"  # Topology, raw text, or None: no file
    file: str = "node.toml"  # the file the diagnostic must name
    key: str | None = None  # the exact TOML key path it must name
    at: str | None = None  # a unique substring of the line the key is written on
    message: str | None = None  # a word of the message, to tell the rule apart


def _default() -> Topology:
    return machine(**H100)  # type: ignore[arg-type]


def _broken_snapshot() -> str:
    """An online CPU on NUMA node 7, which `nodes` does not list."""
    topo = _default()
    cpus = [attrs.evolve(c, node=7) if c.id == 5 else c for c in topo.cpus]
    return snapshot.dumps(attrs.evolve(topo, cpus=cpus), version=1)  # v2 cannot say it


def _many_extra_args() -> str:
    args = ", ".join(f'"hostc.padding{i:03d}=0123456789abcdef0123456789"' for i in range(60))
    return HEAD + f"\n[kernel]\nextra_args = [{args}]\n"


CASES: list[Case] = [
    Case(
        "toml-syntax",
        HEAD + '\n[cpu]\nisolate = "rest\nhousekeeping_per_node = 1\n',
        at='isolate = "rest',
        message="TOML syntax error",
    ),
    Case(
        "unknown-table",
        HEAD + "\n[bogus]\nx = 1\n",
        key="bogus",
        at="[bogus]",
        message="unknown key",
    ),
    Case(
        "unknown-key-typo",
        HEAD + WORKLOAD + '\n[cpu]\nhousekeeping_per_node = 1\nisolte = "workload"\n',
        key="cpu.isolte",
        at="isolte =",
        message="unknown key",
    ),
    Case(
        "wrong-type",
        HEAD + WORKLOAD + '\n[cpu]\nhousekeeping_per_node = "2"\nisolate = "workload"\n',
        key="cpu.housekeeping_per_node",
        at="housekeeping_per_node =",
        message="integer",
    ),
    Case(
        "host-name-missing",
        HEAD.replace('name = "t"\n', ""),
        key="host.name",
        at="[host]",
        message="missing",
    ),
    Case("host-not-a-table", "version = 1\nhost = 3\n", key="host", at="host = 3", message="table"),
    Case("empty-spec", "", key="host", message="missing"),
    Case("spec-not-utf8", HEAD + "# caf\udcff\n", message="not UTF-8"),
    Case(
        "bad-enum",
        HEAD.replace('role = "inference"', 'role = "inferenc"'),
        key="host.role",
        at='role = "inferenc"',
        message="inferenc",
    ),
    Case(
        "cpu-not-in-topology",
        HEAD + WORKLOAD + '\n[cpu]\nhousekeeping = "0-1,64-65,900"\nisolate = "rest"\n',
        key="cpu.housekeeping",
        at="housekeeping =",
        message="900",
    ),
    Case(
        "offline-cpu",
        HEAD + WORKLOAD + '\n[cpu]\nhousekeeping = "0-1,64-65,32,96"\n'
        'isolate = "2-31,66-95,33-63,97-127"\n',
        topology=machine(**H100, offline=frozenset({127})),  # type: ignore[arg-type]
        key="cpu.isolate",
        at="isolate =",
        message="offline",
    ),
    Case(
        "split-smt-pair",
        HEAD + WORKLOAD + '\n[cpu]\nhousekeeping = "0"\n'
        'isolate = "rest"\nallow_node_without_housekeeping = true\n',
        key="cpu.housekeeping",
        at='housekeeping = "0"',
        message="SMT",
    ),
    Case(
        "node-without-housekeeping",
        HEAD + WORKLOAD + '\n[cpu]\nhousekeeping = "0-1,64-65"\nisolate = "rest"\n',
        key="cpu.housekeeping",
        at="housekeeping =",
        message="NUMA node 1",
    ),
    Case(
        "housekeeping-per-node-zero",
        HEAD + WORKLOAD + '\n[cpu]\nhousekeeping_per_node = 0\nisolate = "workload"\n',
        key="cpu.housekeeping_per_node",
        at="housekeeping_per_node = 0",
        message="at least 1",
    ),
    Case(
        "isolate-everything",
        HEAD + WORKLOAD + '\n[cpu]\nisolate = "0-127"\n',
        key="cpu.isolate",
        at="isolate =",
        message="every online CPU",
    ),
    Case(
        "isolate-boot-cpu",
        HEAD + WORKLOAD + '\n[cpu]\nisolate = "0,64"\n',
        key="cpu.isolate",
        at="isolate =",
        message="boot CPU",
    ),
    Case(
        "hugepages-over-memory",
        HEAD + '\n[hugepages]\nsize = "1G"\n\n[hugepages.per_node]\n0 = 16\n1 = 600\n',
        key="hugepages.per_node.1",
        at="1 = 600",
        message="does not fit",
    ),
    Case(
        "hugepages-total-over-memory",
        HEAD + '\n[hugepages]\nsize = "1G"\ntotal = 2000\n',
        key="hugepages.total",
        at="total = 2000",
        message="does not fit",
    ),
    Case(
        "hugepages-node-missing",
        HEAD + '\n[hugepages]\nsize = "1G"\nper_node = { 0 = 4, 5 = 4 }\n',
        key="hugepages.per_node.5",
        at="per_node =",
        message="NUMA node 5",
    ),
    Case(
        "hugepages-per-node-unknown-kernel",
        HEAD + '\n[hugepages]\nsize = "1G"\nper_node = { 0 = 4 }\n',
        topology=machine(**H100, kernel=None),  # type: ignore[arg-type]
        key="host.kernel",
        at="[host]",
        message="kernel",
    ),
    Case(
        "hugepages-negative",
        HEAD + '\n[hugepages]\nsize = "1G"\ntotal = -2\n',
        key="hugepages.total",
        at="total = -2",
        message="negative",
    ),
    Case(
        "hugepages-both-forms",
        HEAD + '\n[hugepages]\nsize = "1G"\nper_node = { 0 = 4 }\ntotal = 8\n',
        key="hugepages",
        at="[hugepages]",
        message="exactly one",
    ),
    Case(
        "hugepages-unsupported-size",
        HEAD + '\n[hugepages]\nsize = "16G"\ntotal = 2\n',
        key="hugepages.size",
        at='size = "16G"',
        message="16G",
    ),
    Case(
        "cpulist-descending",
        HEAD + WORKLOAD + '\n[cpu]\nisolate = "3-1"\n',
        key="cpu.isolate",
        at="isolate =",
        message="descending",
    ),
    Case(
        "cpulist-garbage",
        HEAD + WORKLOAD + '\n[cpu]\nisolate = "1,,x"\n',
        key="cpu.isolate",
        at="isolate =",
        message="cpulist",
    ),
    Case(
        "missing-topology-file",
        HEAD.replace('"topology.toml"', '"nope.toml"'),
        file="nope.toml",
        message="not found",
    ),
    Case("missing-spec-file", None, file="node.toml", message="not found"),
    Case(
        "isolate-workload-without-workload",
        HEAD + '\n[cpu]\nisolate = "workload"\n',
        key="cpu.isolate",
        at="isolate =",
        message="[[workload]]",
    ),
    Case(
        "workload-gpu-missing",
        HEAD + WORKLOAD + '\n[[workload]]\nname = "second"\ngpus = ["GPU9"]\n',
        key='workload "second".gpus[0]',
        at='gpus = ["GPU9"]',
        message="GPU9",
    ),
    Case(
        "workload-missing-gpus-key",
        HEAD + '\n[[workload]]\nname = "vllm"\n',
        key='workload "vllm".gpus',
        at="[[workload]]",
        message="missing",
    ),
    Case(
        "workload-defined-twice",
        HEAD + WORKLOAD + '\n[[workload]]\nname = "vllm"  # again\ngpus = ["GPU2"]\n',
        key="workload[1].name",
        at="# again",
        message="twice",
    ),
    Case(
        "workload-no-gpus",
        HEAD + '\n[[workload]]\nname = "vllm"\ngpus = []\n',
        key='workload "vllm".gpus',
        at="gpus = []",
        message="at least one GPU",
    ),
    Case(
        "extra-arg-dollar",
        HEAD + '\n[kernel]\nextra_args = [\n  "iommu=pt",\n  "console=$TTY",\n]\n',
        key="kernel.extra_args[1]",
        at='"console=$TTY"',
        message="$",
    ),
    Case(
        "extra-arg-quote",
        HEAD + "\n[kernel]\nextra_args = ['foo=\"bar\"']\n",
        key="kernel.extra_args[0]",
        at="extra_args =",
        message="quote",
    ),
    Case(
        "extra-arg-owned-key",
        HEAD + '\n[kernel]\nextra_args = ["isolcpus=2-5"]\n',
        key="kernel.extra_args[0]",
        at="extra_args =",
        message="isolcpus",
    ),
    Case(
        "extra-arg-twice",
        HEAD + '\n[kernel]\nextra_args = ["iommu=pt", "iommu=on"]\n',
        key="kernel.extra_args[1]",
        at="extra_args =",
        message="twice",
    ),
    Case(
        "preset-exclude-unknown",
        HEAD + '\n[preset]\nexclude = ["net.core.somaxconnn"]\n',
        key="preset.exclude[0]",
        at="exclude =",
        message="somaxconnn",
    ),
    Case(
        "sysctl-bad-name",
        HEAD + '\n[sysctl]\n"swappiness" = 1\n',
        key="sysctl.swappiness",
        at='"swappiness" = 1',
        message="not a sysctl name",
    ),
    Case(
        "sysctl-float-value",
        HEAD + '\n[sysctl]\n"vm.swappiness" = 1.5\n',
        key='sysctl."vm.swappiness"',
        at='"vm.swappiness" = 1.5',
        message="float",
    ),
    Case(
        "limits-nofile-too-small",
        HEAD + "\n[limits]\nnofile = 10\n",
        key="limits.nofile",
        at="nofile = 10",
        message="too small",
    ),
    Case("cmdline-too-long", _many_extra_args(), key="kernel", at="[kernel]", message="bytes"),
    Case(
        "broken-snapshot",
        HEAD,
        topology=_broken_snapshot(),
        file="topology.toml",
        key="cpus[5].node",
        at="{ id = 5,",
        message="NUMA node 7",
    ),
    Case(
        "snapshot-syntax",
        HEAD,
        topology='version = 1\narch = "x86_64"\ncpus = [\n',
        file="topology.toml",
        at=None,
        message="TOML syntax error",
    ),
    Case(
        "unsupported-version",
        HEAD.replace("version = 1", "version = 2"),
        key="version",
        at="version = 2",
        message="version",
    ),
    # the NCCL bootstrap interface lands in an Environment= line of a unit run as root
    Case(
        "nccl-socket-ifname-too-long",
        HEAD + WORKLOAD + '\n[nccl]\nsocket_ifname = "enp1s0f0np0-mgmt0"\n',
        key="nccl.socket_ifname",
        at="socket_ifname =",
        message="interface name",
    ),
    Case(
        "nccl-socket-ifname-injection",
        HEAD + WORKLOAD + '\n[nccl]\nsocket_ifname = "eth0 LD_PRELOAD"\n',
        key="nccl.socket_ifname",
        at="socket_ifname =",
        message="interface name",
    ),
]


def _line(text: str, needle: str) -> int:
    hits = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(hits) == 1, f"test bug: {needle!r} is on lines {hits}"
    return hits[0]


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_hostc(*args, cwd=cwd)


def _write_topology(where: Path, topology: Topology | str | None) -> str | None:
    if topology is None:
        return None
    if topology == "default":
        topology = _default()
    text = topology if isinstance(topology, str) else snapshot.dumps(topology)
    (where / "topology.toml").write_text(text, encoding="utf-8")
    return text


def _assert_nothing_written(out: Path) -> None:
    assert not out.exists() or not any(out.iterdir()), sorted(map(str, out.rglob("*")))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_reported_and_nothing_written(case: Case, tmp_path: Path) -> None:
    spec = tmp_path / "node.toml"
    if case.spec is not None:
        spec.write_bytes(case.spec.encode("utf-8", "surrogateescape"))
    topo_text = _write_topology(tmp_path, case.topology)
    out = tmp_path / "out"

    r = _run("build", spec, "--target", "all", "--out", out, cwd=tmp_path)

    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    assert "internal error" not in r.stderr
    assert r.stdout == ""
    assert case.file in r.stderr, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert errors, r.stderr
    # The diagnostic for this case: names the file, and (where there is one) the key path.
    mine = [
        ln
        for ln in errors
        if case.file in ln
        and (case.key is None or f": {case.key}: " in ln)
        and (case.message is None or case.message in ln)
    ]
    assert mine, f"no error naming {case.file} / {case.key} / {case.message!r}:\n{r.stderr}"
    if case.at is not None:
        text = case.spec if case.file == "node.toml" else topo_text
        assert text is not None
        want = _line(text, case.at)
        located = [ln for ln in mine if f"{case.file}:{want}:" in ln]
        assert located, f"expected {case.file}:{want}: in:\n" + "\n".join(mine)
    _assert_nothing_written(out)


def test_bad_input_cases_cover_enough() -> None:
    assert len(CASES) >= 18
    assert len({c.id for c in CASES}) == len(CASES)


def test_several_problems_reported_in_one_run(tmp_path: Path) -> None:
    """Every rule runs: a spec with six independent mistakes gets six errors at once.

    (Text that is refused while loading, such as `$` in a kernel argument, stops the
    build before the rules run; these mistakes are all semantic.)"""
    spec = tmp_path / "node.toml"
    text = (
        HEAD
        + WORKLOAD
        + """
[[workload]]
name = "second"
gpus = ["GPU9"]

[cpu]
housekeeping = "0-1,64-65,900"
isolate = "rest"

[hugepages]
size = "1G"
per_node = { 0 = 4, 5 = 4 }

[kernel]
extra_args = ["isolcpus=2-5", "quiet", "quiet"]

[preset]
exclude = ["bogus.key"]
"""
    )
    spec.write_text(text, encoding="utf-8")
    _write_topology(tmp_path, "default")
    out = tmp_path / "out"

    r = _run("build", spec, "--target", "all", "--out", out, cwd=tmp_path)

    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    expected = {
        'workload "second".gpus[0]': _line(text, 'gpus = ["GPU9"]'),
        "cpu.housekeeping": _line(text, "housekeeping ="),
        "hugepages.per_node.5": _line(text, "per_node ="),
        "kernel.extra_args[0]": _line(text, "extra_args ="),
        "kernel.extra_args[2]": _line(text, "extra_args ="),
        "preset.exclude[0]": _line(text, "exclude ="),
    }
    for key, line in expected.items():
        assert any(f"node.toml:{line}: {key}: " in ln for ln in errors), (key, r.stderr)
    assert len(errors) >= len(expected), r.stderr
    _assert_nothing_written(out)


def test_shape_errors_reported_together(tmp_path: Path) -> None:
    """Type and key errors from the loader come in one run too, not one per attempt."""
    spec = tmp_path / "node.toml"
    text = (
        HEAD.replace('role = "inference"', 'role = "inferenc"')
        + """
[cpu]
housekeeping_per_node = "2"
isolte = "rest"

[bogus]
x = 1
"""
    )
    spec.write_text(text, encoding="utf-8")
    _write_topology(tmp_path, "default")

    r = _run("build", spec, "--target", "all", "--out", tmp_path / "out", cwd=tmp_path)

    assert r.returncode == 2, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    for key, at in (
        ("host.role", "role ="),
        ("cpu.housekeeping_per_node", "housekeeping_per"),
        ("cpu.isolte", "isolte ="),
        ("bogus", "[bogus]"),
    ):
        line = _line(text, at)
        assert any(re.search(rf"node\.toml:{line}: {re.escape(key)}: ", ln) for ln in errors), (
            key,
            r.stderr,
        )
    assert len(errors) == 4, r.stderr
    _assert_nothing_written(tmp_path / "out")
