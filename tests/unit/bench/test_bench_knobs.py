"""Which settings `--ablate` reverts, to what, and which it never touches (and why)."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_host import put
from bench_sandbox import GOVERNOR, ROOT, plan, sandbox

from hostc import api
from hostc.bench.knobs import Knob, Skip, plan_at
from hostc.diagnostics import HostcError


def names(found: list[Knob] | list[Skip]) -> list[str]:
    return [k.name for k in found]


def why(skips: list[Skip], name: str) -> str:
    return next(s.why for s in skips if s.name == name)


def test_live_settings_with_an_old_value_are_reverted_to_it(tmp_path: Path) -> None:
    p, root, before = sandbox(tmp_path)
    knobs, skips = plan_at(p, root, before, {})
    assert names(knobs) == ["vm.swappiness", "vm.overcommit_memory"]
    swap = knobs[0]
    assert (swap.now, swap.before, swap.source) == ("10", "60", f"--before {before}")
    assert swap.files[0].path == "/proc/sys/vm/swappiness"
    assert "vm.max_map_count" in [s.name for s in skips if s.same]


def test_a_sysctl_read_when_a_socket_is_made_is_never_touched(tmp_path: Path) -> None:
    """tcp_rmem differs before hostc, but its initial buffer is read when a socket is
    made, so running servers keep it until they restart (hostc.delivery.effects'
    sysctl:KEY entry): reverting it live measures nothing; skipped in the rule's words."""
    p, root, before = sandbox(tmp_path)
    knobs, skips = plan_at(p, root, before, {})
    assert "net.ipv4.tcp_rmem" not in names(knobs)
    assert why(skips, "net.ipv4.tcp_rmem") == (
        "running servers keep the previous net.ipv4.tcp_rmem until their next start "
        "(the initial buffer is read when a socket is made)"
    )


def test_boot_and_many_file_settings_are_never_touched(tmp_path: Path) -> None:
    """The DGX example: somaxconn read at listen(), IRQ placement (once), the IOMMU."""
    dgx = plan(ROOT / "examples" / "dgx-h100-inference" / "node.toml")
    _, skips = plan_at(dgx, tmp_path, tmp_path, {})
    assert why(skips, "net.core.somaxconn") == (
        "running servers keep the previous net.core.somaxconn until their next start "
        "(read at listen(), which caps the backlog then)"
    )
    assert names(skips).count("IRQ placement") == 1
    assert why(skips, "IOMMU") == "set by kernel arguments: a reboot"


def test_thp_mode_and_the_governor_are_live(tmp_path: Path) -> None:
    """THP's mode is a boot argument the running kernel also takes from sysfs
    (knowledge.kernel.APPLIED_LIVE); the governor is a runtime row."""
    p, root, before = sandbox(
        tmp_path,
        {
            "/sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never",
            GOVERNOR: "schedutil",
        },
    )
    put(root, "/sys/devices/system/cpu/cpufreq/policy1/scaling_governor", "performance\n")
    put(before, "/sys/devices/system/cpu/cpufreq/policy1/scaling_governor", "powersave\n")
    knobs, _ = plan_at(p, root, before, {})
    by = {k.name: k for k in knobs}
    assert (by["transparent_hugepage"].now, by["transparent_hugepage"].before) == (
        "madvise",
        "always",
    )
    gov = by["cpu_governor"]
    assert [(f.path.split("/")[-2], f.before) for f in gov.files] == [
        ("policy0", "schedutil"),
        ("policy1", "powersave"),
    ]


def test_without_an_old_value_nothing_is_reverted(tmp_path: Path) -> None:
    """hostc keeps no value from before it: without --before or --revert, say so."""
    p, root, _ = sandbox(tmp_path)
    knobs, skips = plan_at(p, root, None, {})
    assert knobs == []
    assert why(skips, "vm.swappiness").startswith("no previous value known: hostc keeps none")


def test_revert_names_an_old_value_by_hand(tmp_path: Path) -> None:
    p, root, _ = sandbox(tmp_path)
    knobs, _ = plan_at(p, root, None, {"vm.swappiness": "30"})
    assert [(k.name, k.before, k.source) for k in knobs] == [("vm.swappiness", "30", "--revert")]
    with pytest.raises(HostcError, match=r"no setting 'vm\.swapiness' in the Plan"):
        plan_at(p, root, None, {"vm.swapiness": "30"})


def test_the_old_values_come_from_a_probe_capture_of_the_host_before_hostc(
    tmp_path: Path,
) -> None:
    """The pristine record is `hostc probe --capture FILE --spec SPEC` taken before hostc:
    it holds exactly the files audit reads, so the same observers read the old values."""
    p, root, before = sandbox(tmp_path)
    archive = tmp_path / "before.tar.gz"
    api.capture(archive, before, api.audit_state(p, before))
    knobs, _ = plan_at(p, root, archive, {})
    assert [(k.name, k.before) for k in knobs] == [
        ("vm.swappiness", "60"),
        ("vm.overcommit_memory", "0"),
    ]


def test_a_capture_that_lacks_a_file_skips_that_setting(tmp_path: Path) -> None:
    p, root, before = sandbox(tmp_path)
    (before / "proc/sys/vm/swappiness").unlink()
    knobs, skips = plan_at(p, root, before, {})
    assert "vm.swappiness" not in names(knobs)
    assert why(skips, "vm.swappiness").startswith("the --before capture does not show it")


def test_the_audit_groups_bench_names_are_the_audit_tables_own() -> None:
    """`hostc bench` picks audit groups by name (what a run records, what --ablate may
    write): a group renamed in the audit table must not silently drop out of both (the
    kernel-argument rows' group was `transparent hugepages` until issue 55)."""
    from hostc.audit.observe import TABLE
    from hostc.bench.knobs import GROUPS
    from hostc.bench.state import RECORDED

    names = {name for name, _ in TABLE}
    assert set(GROUPS) <= names and set(RECORDED) <= names, (set(GROUPS) | set(RECORDED)) - names
