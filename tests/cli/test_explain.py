# ruff: noqa: E501  (the expected output is asserted line for line, as printed)
"""`hostc explain`: the chain from source to output, asserted exactly on the examples."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest

from hostc import api
from hostc.plan.kernelargs import cmdline

from conftest import ROOT, run_hostc

DGX = ROOT / "examples" / "dgx-h100-inference" / "node.toml"
EPYC = ROOT / "examples" / "epyc-1s-training" / "node.toml"

FLEET_HOST = ROOT / "examples" / "fleet" / "hosts" / "dgx-r1-01.toml"
FLEET_CLASS = ROOT / "examples" / "fleet" / "classes" / "dgx-inference.toml"

# (spec, WHAT, the exact text).  An inherited value's `source` line names the file of
# the chain that set it (the Plan's provenance), not the host's own spec.
CASES = [
    (
        "inherited",
        FLEET_HOST,
        "kernel.iommu",
        """\
iommu = pt  [takes effect: boot]
  source   spec key kernel.iommu, inherited ({fleet_class}:48)
           as force.kernel.iommu
  plan     kernel.iommu: set by the spec (preset had pt)
  emitted  kernel-cmdline:@  {cmdline}
  emitted  /etc/default/grub.d/90-hostc.cfg:@  GRUB_CMDLINE_LINUX_DEFAULT="${{GRUB_CMDLINE_LINUX_DEFAULT:+$GRUB_CMDLINE_LINUX_DEFAULT }}iommu=pt"
  observe  /proc/cmdline (cat /proc/cmdline)

pci = disable_acs_redir=pci:0:0  [takes effect: boot]
  source   spec key kernel.iommu, inherited ({fleet_class}:48)
           as force.kernel.iommu
  plan     kernel.iommu: VT-d may be on without intel_iommu=on (the firmware's DMAR opt-in, a kernel built with CONFIG_INTEL_IOMMU_DEFAULT_ON, an admin's intel_iommu=on) and firmware may set ACS on PCIe switches itself (NCCL issue #304)
           the kernel clears redirect even where it did not enable ACS (pci_enable_acs) and, with the IOMMU off, changes nothing else (NVIDIA's H100 profiles include nvidia-acs-disable on every host): the kernel requests PCIe ACS redirect wherever an IOMMU is on (pci_request_acs), which sends GPU-NIC peer traffic through the root complex
           NVIDIA's nvidia-acs-disable turns it off on every device (this merges IOMMU groups)
  emitted  kernel-cmdline:@  {cmdline}
  emitted  /etc/default/grub.d/90-hostc.cfg:@  GRUB_CMDLINE_LINUX_DEFAULT="${{GRUB_CMDLINE_LINUX_DEFAULT:+$GRUB_CMDLINE_LINUX_DEFAULT }}pci=disable_acs_redir=pci:0:0"
  observe  /proc/cmdline (cat /proc/cmdline)
""",
    ),
    (
        "preset",
        DGX,
        "vm.swappiness",
        """\
vm.swappiness = 1  [takes effect: sysctl]
  source   preset layer `base` ({dgx} does not set it)
           condition: every host (this host: role inference, arch x86_64, vendor intel, kernel 5.15)
  change   sysctl."vm.swappiness" in the spec overrides it
           preset.exclude = ["vm.swappiness"] leaves it out
  plan     preset:base: a swapped-out page is a millisecond fault on the hot path
           1 keeps swap as a last resort
  emitted  /etc/sysctl.d/90-hostc.conf:@  vm.swappiness = 1
  observe  /proc/sys/vm/swappiness (sysctl -n vm.swappiness)
""",
    ),
    (
        "spec",
        EPYC,
        'sysctl."vm.swappiness"',
        """\
vm.swappiness = 10  [takes effect: sysctl]
  source   spec key sysctl."vm.swappiness" ({epyc}:11)
  plan     sysctl."vm.swappiness": set by the spec (preset had 1)
  emitted  /etc/sysctl.d/90-hostc.conf:@  vm.swappiness = 10
  emitted  /etc/tuned/hostc/tuned.conf:@  vm.swappiness=10
  observe  /proc/sys/vm/swappiness (sysctl -n vm.swappiness)
""",
    ),
    (
        "topology",
        DGX,
        "irq.mlx5_0",
        """\
irq.mlx5_0 = 0-3,112-115  [takes effect: runtime]
  source   hardware fact `mlx5_0` in the topology snapshot ({dgx_topo}:{mlx5_0})
  plan     topology:mlx5_0: mlx5_0 sits on NUMA node 0: its interrupts go to that node's housekeeping CPUs
  emitted  /usr/local/sbin/hostc-tuning:@  nic_channels 0000:18:00.0 8
  emitted  /usr/local/sbin/hostc-tuning:@  pin_device 0000:18:00.0 0-3,112-115
  emitted  /etc/udev/rules.d/90-hostc-tuning.rules:@  ACTION=="add", SUBSYSTEM=="net", NAME=="ibp104s0|ibp120s0|ibp136s0|ibp24s0|ibp40s0|ibp56s0|ibp72s0|ibp88s0", RUN+="/usr/bin/systemd-run --no-block --collect --on-active=5 --unit=hostc-tuning-udev /bin/systemctl --no-block restart hostc-tuning.service"
  emitted  /etc/udev/rules.d/90-hostc-tuning.rules:@  ACTION=="add", SUBSYSTEM=="net", KERNEL=="ibp104s0|ibp120s0|ibp136s0|ibp24s0|ibp40s0|ibp56s0|ibp72s0|ibp88s0", RUN+="/usr/bin/systemd-run --no-block --collect --on-active=5 --unit=hostc-tuning-udev /bin/systemctl --no-block restart hostc-tuning.service"
  emitted  /etc/udev/rules.d/90-hostc-tuning.rules:@  ACTION=="add", SUBSYSTEM=="infiniband", KERNEL=="mlx5_0|mlx5_1|mlx5_2|mlx5_3|mlx5_4|mlx5_5|mlx5_6|mlx5_7", RUN+="/usr/bin/systemd-run --no-block --collect --on-active=5 --unit=hostc-tuning-udev /bin/systemctl --no-block restart hostc-tuning.service"
  observe  /proc/irq/<n>/smp_affinity_list for each IRQ in /sys/bus/pci/devices/0000:18:00.0/msi_irqs
""",
    ),
    (
        "artifact-line",
        DGX,
        "/etc/sysctl.d/90-hostc.conf:@vm.overcommit_memory = 1",
        """\
vm.overcommit_memory = 1  [takes effect: sysctl]
  source   preset layer `inference` ({dgx} does not set it)
           condition: role inference (this host: role inference, arch x86_64, vendor intel, kernel 5.15)
  change   sysctl."vm.overcommit_memory" in the spec overrides it
           preset.exclude = ["vm.overcommit_memory"] leaves it out
  plan     preset:inference: the heuristic mode (0) refuses any single allocation larger than RAM plus swap
           anonymous and private writable memory (host copies of weights, forked loader workers) counts, read-only or shared file mappings of weights do not
           1 never refuses
  emitted  /etc/sysctl.d/90-hostc.conf:@  vm.overcommit_memory = 1
  observe  /proc/sys/vm/overcommit_memory (sysctl -n vm.overcommit_memory)
""",
    ),
]


@functools.cache
def _artifacts(spec: Path) -> dict[str, list[str]]:
    plan, _ = api.compile_file(spec)
    return {a.path: a.data.decode().splitlines() for a in api.emit(plan)}


def _line(spec: Path, path: str, text: str) -> int:
    """The number of the one line of artifact `path` (as explain names it) that reads
    `text` (less its indent), in what the spec builds: the expected output reads its line
    numbers from the artifact, so a line added above them changes the golden, not this test."""
    found = [n for n, line in enumerate(_artifacts(spec)[path], 1) if line.strip() == text]
    assert len(found) == 1, f"{path} has {len(found)} lines reading {text!r}"
    return found[0]


def _topology_line(text: str) -> int:
    lines = (DGX.parent / "topology.toml").read_text().splitlines()
    (n,) = [n for n, line in enumerate(lines, 1) if line == text]
    return n


def _fill(text: str, spec: Path) -> str:
    """The expected text: `{…}` names a file; `{cmdline}` is the spec's whole command line
    (its arguments are the golden files' to pin); `PATH:@  TEXT` is the line of PATH that
    reads TEXT, and `PATH:@TEXT` (a WHAT) that line's `PATH:N`."""
    text = text.format(
        cmdline=cmdline(api.compile_file(spec)[0]) if "{cmdline}" in text else "",
        dgx=DGX,
        epyc=EPYC,
        dgx_topo=DGX.parent / "topology.toml",
        fleet_class=FLEET_CLASS,
        mlx5_0=_topology_line('name = "mlx5_0"'),
    )
    text = re.sub(
        r"^(  emitted  (\S+)):@(  (.*))$",
        lambda m: f"{m[1]}:{_line(spec, m[2], m[4])}{m[3]}",
        text,
        flags=re.M,
    )
    path, at, line = text.partition(":@")
    return f"{path}:{_line(spec, path, line)}" if at and "\n" not in text else text


@pytest.mark.parametrize(
    ("spec", "what", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_explain_shows_the_whole_chain(spec: Path, what: str, want: str) -> None:
    assert api.explain(spec, _fill(what, spec)).render() == _fill(want, spec)


def test_explain_a_spec_key_the_spec_leaves_to_a_preset() -> None:
    found = api.explain(DGX, "kernel.transparent_hugepage")
    assert found.how == "spec key"
    (f,) = found.found
    assert (f.name, f.value, f.origin.kind) == ("transparent_hugepage", "madvise", "preset")
    grub = "/etc/default/grub.d/90-hostc.cfg"
    thp = 'GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT:+$GRUB_CMDLINE_LINUX_DEFAULT }transparent_hugepage=madvise"'
    tuning = "/usr/local/sbin/hostc-tuning"  # written live too (review-outputs-4 R10)
    live = "put madvise /sys/kernel/mm/transparent_hugepage/enabled"
    assert [(c.path, c.line) for c in f.lines] == [
        ("kernel-cmdline", 1),
        (grub, _line(DGX, grub, thp)),
        (tuning, _line(DGX, tuning, live)),
    ]
    assert "/sys/kernel/mm/transparent_hugepage/enabled" in f.observe


def test_explain_json_and_unknown_what_exits_2_with_close_matches() -> None:
    r = run_hostc("explain", DGX, "vm.swappiness", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["matched_as"] == "setting"
    (s,) = doc["settings"]
    line = _line(DGX, "/etc/sysctl.d/90-hostc.conf", "vm.swappiness = 1")
    assert s["origin"]["kind"] == "preset" and s["lines"][0]["line"] == line
    bad = run_hostc("explain", DGX, "vm.swapines")
    assert bad.returncode == 2 and bad.stdout == ""
    assert f"{DGX}: WHAT: 'vm.swapines' is no setting" in bad.stderr
    assert "close: vm.swappiness" in bad.stderr
    comment = run_hostc("explain", DGX, "/etc/sysctl.d/90-hostc.conf:1")
    assert comment.returncode == 2 and "carries no setting" in comment.stderr


@pytest.mark.parametrize(
    "example", sorted(p.parent.name for p in (ROOT / "examples").glob("*/node.toml"))
)
def test_every_setting_of_the_examples_is_found_in_the_artifacts(example: str) -> None:
    """The spellings follow the targets: a target that renames a key breaks this test,
    not `explain` silently.  Only a partition with nothing isolated has no line."""
    from hostc.report.explain import _lines, settings

    plan, _ = api.compile_file(ROOT / "examples" / example / "node.toml")
    arts = api.emit(plan)
    missing = {s.name for s in settings(plan) if not _lines(s, arts)}
    # what no artifact line carries: who applies the runtime settings (the artifacts'
    # kind says it), and what is left out on purpose
    missing -= {"runtime_owner", *(x.setting for x in plan.left_out)}
    assert missing == ({"housekeeping", "isolated"} if not plan.partition.isolated else set())


def test_isolcpus_is_read_back_from_the_isolated_file_only_with_the_domain_flag() -> None:
    """drivers/base/cpu.c prints possible CPUs outside housekeeping(HK_TYPE_DOMAIN): with
    `isolcpus=managed_irq,…` alone /sys/devices/system/cpu/isolated stays empty."""
    import attrs

    from hostc.report.catalog import ISOLATED_FILE, isolated_file

    plan, _ = api.compile_file(DGX)
    iso = plan.isolation_by("isolcpus")
    assert iso is not None and iso.flags == ("managed_irq",)
    assert isolated_file(plan).startswith(f"not {ISOLATED_FILE}")
    (isolcpus,) = [f for f in api.explain(DGX, "isolcpus").found]
    assert ISOLATED_FILE not in isolcpus.observe
    for flags in (("domain", "managed_irq"), ()):
        other = attrs.evolve(iso, flags=flags)
        assert isolated_file(attrs.evolve(plan, isolation=(other,))) == ISOLATED_FILE


def test_the_boot_verifier_is_no_carrier_of_a_setting() -> None:
    """hostc-verify checks every kernel argument; its lines are an observation, so
    explain lists only the files that set the value."""
    from hostc.report.explain import CHECKERS
    from hostc.targets.verify import SCRIPT

    assert SCRIPT in CHECKERS
    (f,) = api.explain(DGX, "kernel.transparent_hugepage").found
    assert all(c.path != SCRIPT for c in f.lines)
