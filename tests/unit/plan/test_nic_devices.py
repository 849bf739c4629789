"""`irq.nic_devices` (issue 52): the Plan's NIC queue rows are only the NICs it chooses
(name globs, `vendor=`, `pci=`, `!` to exclude, as NTO's net.devices), in the row shape
hostc-tuning and the TuneD profile already read; an entry that matches no NIC of the
snapshot is an error with its key path, never a silent empty selection."""

from __future__ import annotations

from pathlib import Path

import pytest
from refused import refused_build
from test_runtime import SCRIPT, compile_, files, h100, spec

from hostc import api
from hostc.audit.observe import expectations
from hostc.diagnostics import HostcError
from hostc.plan.model import Plan
from hostc.spec import model as m

from conftest import ROOT, run_hostc

#: h100(nics_per_node=2): mlx5_0/1 (ibp24s0, ibp40s0) on node 0, mlx5_2/3 on node 1
TOPO = {"nics_per_node": 2}


def chosen(*entries: str, **irq: object) -> Plan:
    cpu = m.Cpu(housekeeping_per_node=2, isolate=m.IsolateMode.REST)
    return compile_(spec(cpu=cpu, irq=m.Irq(nic_devices=entries, **irq)), h100(**TOPO))  # type: ignore[arg-type]


def rows(plan: Plan) -> list[str]:
    return [c.device for c in plan.runtime.nic_channels]


def test_every_nic_without_a_selection() -> None:
    assert rows(chosen()) == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]


@pytest.mark.parametrize(
    ("entries", "want"),
    [
        (("mlx5_[01]",), ["mlx5_0", "mlx5_1"]),
        (("ibp40s0",), ["mlx5_1"]),  # by netdev
        (("!mlx5_3",), ["mlx5_0", "mlx5_1", "mlx5_2"]),  # exclusions only: all others
        (("mlx5_*", "!ibp24s0"), ["mlx5_1", "mlx5_2", "mlx5_3"]),
        (("vendor=mellanox",), ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]),
    ],
)
def test_only_the_chosen_nics_get_queue_rows(entries: tuple[str, ...], want: list[str]) -> None:
    plan = chosen(*entries)
    assert rows(plan) == want
    for c in plan.runtime.nic_channels:
        assert "chosen by irq.nic_devices" in c.reason.why
        assert str(c.reason.source) == "irq.nic_devices"
    script = files(plan, "systemd")[SCRIPT]
    all_rows = chosen().runtime.nic_channels
    for c in all_rows:
        assert (f"nic_channels {c.pci} " in script) == (c.device in want)
    audited = {e.setting for e in expectations(plan) if e.kind == "nic-channels"}
    assert audited == {f"{d} channels" for d in want}


def test_pci_glob_and_the_channels_key_name_both_keys() -> None:
    plan = chosen("pci=0000:18:*", nic_channels=m.NicChannelChoice.HOUSEKEEPING)
    (row,) = plan.runtime.nic_channels
    assert row.pci.startswith("0000:18:")
    assert str(row.reason.source) == "irq.nic_devices, irq.nic_channels"


@pytest.mark.parametrize(
    ("entries", "path", "message"),
    [
        (("mlx5_9",), "irq.nic_devices[0]", "'mlx5_9' matches no NIC of the snapshot"),
        (("mlx5_0", "!eth9"), "irq.nic_devices[1]", "'!eth9' excludes no NIC"),
        (("mlx5_0", "!mlx5_*"), "irq.nic_devices", "chooses no NIC"),
        (("device=0x1021",), "irq.nic_devices[0]", "'device'= is no field"),
        (("ib p24",), "irq.nic_devices[0]", "is not a NIC pattern"),
        (("",), "irq.nic_devices[0]", "is not a NIC pattern"),
    ],
)
def test_a_selection_that_names_nothing_is_an_error(
    entries: tuple[str, ...], path: str, message: str
) -> None:
    with pytest.raises(HostcError) as e:
        chosen(*entries)
    (d,) = [d for d in e.value.diagnostics if d.severity == "error"]
    assert str(d.path) == path and message in d.message, d


def test_a_selection_with_nothing_to_change_warns() -> None:
    s = spec(
        cpu=m.Cpu(housekeeping_per_node=2, isolate=m.IsolateMode.REST),
        irq=m.Irq(nic_devices=("mlx5_0",), nic_channels=m.NicChannelChoice.KEEP),
    )
    plan, found = api.compile_plan(s, h100(**TOPO), spec_file="t.toml")
    assert not plan.runtime.nic_channels
    assert [(str(d.path), d.severity) for d in found if "nic_devices" in str(d.path)] == [
        ("irq.nic_devices", "warning")
    ]


def test_cli_refuses_a_typo_with_file_and_key_path_exit_2_nothing_written(tmp_path: Path) -> None:
    _, err = refused_build(tmp_path, "epyc-rhel9-inference", '["!ibp72s0"]', '["!ibp27s0"]')
    assert "irq.nic_devices[0]" in err and "excludes no NIC" in err


def test_hostc_explain_irq_nic_devices() -> None:
    r = run_hostc("explain", ROOT / "examples/epyc-rhel9-inference/node.toml", "irq.nic_devices")
    assert r.returncode == 0, r.stderr
    assert "nic.mlx5_0" in r.stdout and "nic.mlx5_3" not in r.stdout
