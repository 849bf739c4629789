"""NIC queue counts when TuneD owns the runtime settings (issue 52, F1).

`irq.nic_channels` lowers each NIC's combined channels to the housekeeping CPUs of its
node.  With `runtime.owner = "tuned"` hostc-tuning.service leaves them to TuneD, so the
profile must carry them: one `[net_<device>]` instance of TuneD's net plugin per NIC,
with that NIC's own count, found by its netdev name (or, where the snapshot names none,
by its PCI function); a TuneD that cannot read `[net] channels` gets no such option and
`hostc check` says nothing sets them; `hostc audit` and hostc-verify read the counts back
under either owner.  The profile goes through TuneD's own loader and device matchers.
"""

from __future__ import annotations

import configparser
import json
import re
import subprocess
from pathlib import Path

import pytest
from audit_host import channel_queues, perfect_host
from tuned_variant import variant

from hostc import api
from hostc.audit.findings import Status
from hostc.knowledge.distro import TUNED_OPTION_SINCE
from hostc.plan.model import Plan
from hostc.targets import verify

from conftest import ROOT, need_tool

RHEL9 = "epyc-rhel9-inference"  # RHEL 9.4: TuneD 2.16 or newer, 4 NICs on 2 nodes
TUNED_PY = Path("/usr/lib/python3/dist-packages/tuned")


def profile(plan: Plan) -> str:
    return next(a.text for a in api.emit(plan, ["tuned"]) if a.path.endswith("/tuned.conf"))


def ini(text: str) -> configparser.ConfigParser:
    """The profile as TuneD's loader parses it (configparser, `=`, inline `#`)."""
    out = configparser.ConfigParser(
        delimiters=("=",), inline_comment_prefixes=("#",), strict=False, interpolation=None
    )
    out.optionxform = str  # type: ignore[assignment,method-assign]
    out.read_string(text)
    return out


def test_every_nic_gets_its_own_tuned_net_section_with_its_channels(tmp_path: Path) -> None:
    """F1: the Plan's count per NIC reaches the TuneD profile; before, the profile had no
    `[net]` at all on this host (its TuneD was unknown) or one count for every device."""
    plan, _ = api.compile_file(variant(tmp_path, RHEL9))
    assert len(plan.runtime.nic_channels) == 4
    parsed = ini(profile(plan))
    for c in plan.runtime.nic_channels:
        unit = parsed[f"net_{c.device}"]
        assert unit["type"] == "net"
        assert unit["devices"] == c.netdev
        assert unit["channels"] == f"combined {c.count}"
        assert unit["dynamic"] == "0"  # TuneD never slows an idle NIC down to 100 Mb/s
    assert "net" not in parsed  # no instance for every network device


def test_a_nic_without_netdev_is_matched_by_its_pci_function(tmp_path: Path) -> None:
    """A NIC the snapshot names no netdev for (an RDMA device seen without its netdev) is
    never dropped: its instance matches every netdev of its PCI function by the kernel's
    DEVPATH property, as TuneD's udev matcher reads it (properties KEY=value per line,
    re.search with MULTILINE), and no netdev of another function."""
    text = (ROOT / "examples" / RHEL9 / "topology.toml").read_text()
    topo = re.sub(
        r'(name = "mlx5_3"\npci = "0000:48:00.0"\nnode = 1\n)netdev = "ibp72s0"\n', r"\1", text
    )
    assert topo != text
    spec = variant(tmp_path, RHEL9)
    (tmp_path / "topology.toml").write_text(topo)
    plan, _ = api.compile_file(spec)
    unit = ini(profile(plan))["net_mlx5_3"]
    assert "devices" not in unit
    regex = unit["devices_udev_regex"]

    def props(devpath: str) -> str:
        found = {"DEVPATH": devpath, "INTERFACE": devpath.rsplit("/", 1)[1], "SUBSYSTEM": "net"}
        return "".join(f"{k}={v}\n" for k, v in sorted(found.items()))

    mine = "/devices/pci0000:40/0000:40:01.1/0000:48:00.0/net/ibp72s0"
    other = "/devices/pci0000:30/0000:30:01.1/0000:38:00.0/net/ibp56s0"
    assert re.search(regex, props(mine), re.MULTILINE)
    assert not re.search(regex, props(other), re.MULTILINE)


def test_tuned_loads_the_net_sections_and_matches_only_each_nic(tmp_path: Path) -> None:
    """TuneD's own profile loader reads each section as a net instance with its device
    match and options, and TuneD's own matchers pick exactly that NIC's netdev."""
    if not TUNED_PY.is_dir():
        need_tool("tuned-adm")  # fails under CI, skips elsewhere
    text = (ROOT / "examples" / RHEL9 / "topology.toml").read_text()
    spec = variant(tmp_path / "spec", RHEL9)
    (tmp_path / "spec/topology.toml").write_text(text.replace('netdev = "ibp72s0"\n', ""))
    plan, _ = api.compile_file(spec)
    d = tmp_path / "profiles/hostc"
    d.mkdir(parents=True)
    (d / "tuned.conf").write_text(profile(plan))
    code = (
        "import sys, json\n"
        "import tuned.profiles as P\n"
        "from tuned.utils.global_config import GlobalConfig\n"
        "from tuned.profiles.variables import Variables\n"
        "from tuned.hardware.device_matcher import DeviceMatcher\n"
        "from tuned.hardware.device_matcher_udev import DeviceMatcherUdev\n"
        "v = Variables()\n"
        "p = P.Loader(P.Locator([sys.argv[1]]), P.Factory(), P.Merger(), GlobalConfig(), v)"
        ".load(['hostc'])\n"
        "names = ['ibp24s0', 'ibp40s0', 'ibp56s0', 'ens1f0']\n"
        "dev = lambda n, pci: {'DEVPATH': '/devices/pci0000:00/0000:00:01.0/%s/net/%s' % (pci, n),"
        " 'INTERFACE': n}\n"
        "udev = [dev('ibp24s0', '0000:18:00.0'), dev('ibp72s0', '0000:48:00.0')]\n"
        "out = {}\n"
        "for name, u in p.units.items():\n"
        "    if u.type != 'net':\n"
        "        continue\n"
        "    opts = {k: v.expand(x) for k, x in u.options.items()}\n"
        "    if u.devices_udev_regex:\n"
        "        m = DeviceMatcherUdev()\n"
        "        hit = [d['INTERFACE'] for d in udev if m.match(u.devices_udev_regex, d)]\n"
        "    else:\n"
        "        hit = DeviceMatcher().match_list(u.devices, names)\n"
        "    out[name] = {'options': opts, 'hit': hit}\n"
        "print(json.dumps(out))\n"
    )
    r = subprocess.run(
        ["/usr/bin/python3", "-c", code, str(d.parent)], capture_output=True, check=False
    )
    assert r.returncode == 0, r.stderr.decode()
    units = json.loads(r.stdout)
    assert set(units) == {f"net_{c.device}" for c in plan.runtime.nic_channels}
    want = {"mlx5_0": ["ibp24s0"], "mlx5_1": ["ibp40s0"], "mlx5_2": ["ibp56s0"]}
    want["mlx5_3"] = ["ibp72s0"]  # by its PCI function: the snapshot names no netdev
    for c in plan.runtime.nic_channels:
        got = units[f"net_{c.device}"]
        assert got["hit"] == want[c.device]
        assert got["options"] == {"dynamic": "0", "channels": f"combined {c.count}"}


def test_every_option_of_a_net_section_is_read_by_each_tuned_that_reads_channels() -> None:
    """The sections are written only for a TuneD that reads `[net] channels` (2.16); each
    other option they hold is older, so that one gate covers them all."""
    gate = TUNED_OPTION_SINCE["net.channels"]
    for option in ("net.dynamic", "unit.devices_udev_regex", "unit.type"):
        assert TUNED_OPTION_SINCE[option] <= gate, option


def test_a_tuned_that_may_not_read_channels_gets_none_and_check_says_so(tmp_path: Path) -> None:
    """ubuntu-22.04's TuneD is not in hostc's table: no option it may not read (an older
    TuneD logs "Unknown option" and leaves the queues), a comment saying so, and a
    warning naming the NICs: a Plan row no artifact carries is never silent."""
    plan, diags = api.compile_file(variant(tmp_path, "dgx-h100-inference"))
    assert plan.runtime.nic_channels and not plan.host.tuned.net_channels
    text = profile(plan)
    assert not [s for s in ini(text).sections() if s.startswith("net")]
    assert "# NIC channels not set ([net] channels needs TuneD 2.16.0; hostc does not" in text
    said = [d.message for d in diags if "combined channels" in d.message]
    assert len(said) == 1 and "mlx5_0" in said[0] and "not set" in said[0]
    keep, diags = api.compile_file(
        variant(tmp_path / "keep", "dgx-h100-inference", {"irq": {"nic_channels": "keep"}})
    )
    assert not keep.runtime.nic_channels
    assert not [d for d in diags if "combined channels" in d.message]


@pytest.mark.parametrize("example", [RHEL9, "dgx-h100-inference"])
def test_nic_channels_are_audited_under_the_tuned_owner(example: str, tmp_path: Path) -> None:
    """`hostc audit` and hostc-verify read each NIC's queues back with TuneD as the owner
    too (they were skipped: observe.py read them only where hostc-tuning set them)."""
    plan, _ = api.compile_file(variant(tmp_path / "spec", example))
    names = {f"{c.device} channels" for c in plan.runtime.nic_channels}
    assert names
    root = perfect_host(plan, tmp_path / "root")
    found = {f.setting: f for f in api.audit(plan, root)}
    assert {found[n].status for n in names} == {Status.APPLIED}
    c = plan.runtime.nic_channels[0]
    channel_queues(root, c.pci, c.count + 8, c.count + 8)  # the driver's full count
    assert {f.setting: f for f in api.audit(plan, root)}[f"{c.device} channels"].status is (
        Status.DIFFERS
    )
    assert {x.setting for x in verify.checks(plan) if x.function == "check_channels"} == names
