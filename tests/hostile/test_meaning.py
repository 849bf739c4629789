"""Values that change meaning downstream: one rule each, checked over arbitrary text.

Sysctl keys as systemd-sysctl and procps read them, kernel parameter names as the
kernel compares them, `${` that TuneD would expand, and every echo of hostc made
safe for a terminal.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.diagnostics import Diagnostic, HostcError, Severity, printable
from hostc.knowledge import charsets
from hostc.spec import text
from hostc.spec.load import loads
from hostc.topology.model import Topology

from topogen import H100_KW, machine

TOPO: Topology = machine(**H100_KW)  # type: ignore[arg-type]


def spec(extra: str = "") -> str:
    return (
        'version = 1\n[host]\nname = "t"\nrole = "inference"\nkernel = "6.8"\n'
        'topology = "topology.toml"\n' + extra
    )


def problems(source: str) -> list[str]:
    """Every error message for a spec, through the loader and the checks."""
    try:
        s = loads(source)
        api.compile_plan(s, TOPO)
    except HostcError as e:
        return [d.render() for d in e.errors]
    return []


# --- sysctl keys: the key checked is the file written --------------------------------


def _sysctl_path(key: str) -> str:
    """The /proc/sys path systemd-sysctl writes for a key (sysctl_normalize, then
    path_simplify: `//` and `.` components collapse)."""
    first = next((c for c in key if c in "./"), "")
    path = key if first == "/" else key.translate(str.maketrans("./", "/."))
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return "/".join(parts)


@pytest.mark.parametrize(
    "key",
    [
        "-fs.nr_open",
        "fs.nr_*",
        "fs.nr_open?",
        "vm..swappiness",
        "vm./.swappiness",
        "vm.//.swappiness",
        "vm.swappiness.",
        ".vm.swappiness",
        "vm/./swappiness",
        "vm//swappiness",
        "vm/../vm/swappiness",
    ],
)
def test_sysctl_spellings_that_sysctl_reads_as_another_key_are_refused(key: str) -> None:
    found = problems(spec(f'[sysctl]\n"{key}" = 1\n'))
    assert found and all("sysctl" in p for p in found), found


@given(st.text(alphabet="abvm._/-*", min_size=1, max_size=12))
@settings(max_examples=300, deadline=None)
def test_an_accepted_sysctl_key_is_the_file_sysctl_writes(key: str) -> None:
    """Any key the loader accepts normalises to exactly the /proc/sys path systemd-sysctl
    would write, with no ignore-errors prefix and no glob, so every rule sees the real key."""
    if text.sysctl_key_problem(key) is not None:
        return
    norm = text.normalize_sysctl_key(key)
    assert charsets.SYSCTL_KEY.fullmatch(norm)
    assert not norm.startswith("-") and "*" not in norm
    assert _sysctl_path(norm) == norm.translate(str.maketrans("./", "/."))
    assert _sysctl_path(key) == _sysctl_path(norm)


def test_nofile_rule_cannot_be_stepped_around_by_a_slash_spelling() -> None:
    found = problems(spec('[limits]\nnofile = 2000000\n[sysctl]\n"fs/nr_open" = 1048576\n'))
    assert found, "fs/nr_open below limits.nofile was accepted"


# --- kernel parameter names -----------------------------------------------------------


@pytest.mark.parametrize(
    "arg",
    [
        "nohz-full=1-3",
        "rcu-nocbs=1",
        "intel-idle.max_cstate=0",
        "transparent-hugepage=always",
        "default-hugepagesz=2M",
        "--",
        "--=x",
        "-x",
    ],
)
def test_extra_args_cannot_redefine_a_derived_parameter_or_end_the_command_line(
    arg: str,
) -> None:
    found = problems(spec(f'[kernel]\nextra_args = ["{arg}"]\n'))
    assert any("kernel.extra_args[0]" in p for p in found), found


def test_extra_args_spelled_twice_with_dash_and_underscore_are_one_parameter() -> None:
    found = problems(spec('[kernel]\nextra_args = ["skew_tick=1", "skew-tick=1"]\n'))
    assert any("given twice" in p for p in found), found


@given(st.from_regex(charsets.KERNEL_ARG, fullmatch=True))
@settings(max_examples=200, deadline=None)
def test_no_accepted_extra_arg_ends_the_kernel_parameters(arg: str) -> None:
    if text.kernel_arg_problem(arg) is None:
        assert arg.partition("=")[0] != "--" and not arg.startswith("-")


# --- TuneD expansion -------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [
        '[sysctl]\n"kernel.core_pattern" = "${f:exec:/bin/sh:-c:id}"\n',
        '[sysctl]\n"kernel.core_pattern" = "x${isolated_cores}"\n',
        '[modules]\noptions = { nvidia = "NVreg=${f:exec:id}" }\n',
    ],
)
def test_a_value_tuned_would_expand_is_refused(extra: str) -> None:
    found = problems(spec(extra))
    assert any("TuneD" in p for p in found), found


# --- terminal-safe echoes --------------------------------------------------------------

UNSAFE = (
    "\x1b\x07\x9b\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    "\u200b\u200c\u200d\ufeff\u200e\u200f\u061c"
)


@given(st.text())
def test_every_rendered_diagnostic_is_terminal_safe(s: str) -> None:
    d = Diagnostic(Severity.ERROR, s, s, hint=s, file=s)
    out = d.render()
    assert charsets.TERMINAL_UNSAFE.search(out.replace("\n  hint: ", " ")) is None


@pytest.mark.parametrize("ch", list(UNSAFE))
def test_bidi_and_zero_width_characters_are_escaped(ch: str) -> None:
    assert ch not in printable(f"a{ch}b")
    assert "\\" in printable(f"a{ch}b")


def test_a_key_path_with_a_bidi_override_is_echoed_escaped() -> None:
    found = problems(spec('[sysctl]\n"vm.swap\u202epiness" = 1\n'))
    assert found and not any("\u202e" in p for p in found), found


# --- collisions: one key, one unit, one path ---------------------------------------------


@pytest.mark.parametrize(
    "unit",
    ["irqbalance.service", "hostc-tuning.service", "kubelet.service", "rke2-agent.service",
     "containerd.service", "tuned.service", "hostc-anything.service"],
)  # fmt: skip
def test_a_workload_in_one_of_hostcs_own_units_is_refused(unit: str) -> None:
    found = problems(spec(f'[[workload]]\nname = "w"\ngpus = ["GPU0"]\nunit = "{unit}"\n'))
    assert any('workload "w".unit' in p and "hostc" in p for p in found), found


@pytest.mark.parametrize(
    ("workload", "path", "unit"),
    [
        ('name = "w"\nunit = "cri-o.service"', 'workload "w".unit', "crio.service"),
        ('name = "cri-o"', 'workload "cri-o".name', "crio.service"),
        ('name = "w"\nunit = "autovt@tty2.service"', 'workload "w".unit', "getty@.service"),
        ('name = "udev"', 'workload "udev".name', "systemd-udevd.service"),
        (
            'name = "w"\nunit = "dbus-org.freedesktop.login1.service"',
            'workload "w".unit',
            "systemd-logind.service",
        ),
    ],
)
def test_a_workload_on_another_name_of_a_reserved_unit_is_refused(
    workload: str, path: str, unit: str
) -> None:
    """systemd reads a unit's drop-ins under each of its names: an alias (CRI-O's
    `Alias=cri-o.service`) or a workload name without its suffix reaches the same unit,
    so it is judged by the unit it is, in one error at the key that names it."""
    found = problems(spec(f'[[workload]]\n{workload}\ngpus = ["GPU0"]\n'))
    assert len(found) == 1 and path in found[0] and unit in found[0], found


@pytest.mark.parametrize(
    "unit",
    ["systemd-modules-load.service", "systemd-sysctl.service", "systemd-udevd.service",
     "systemd-journald.service", "dbus.service", "getty@tty1.service", "user@1000.service",
     "openibd.service", "nvidia-persistenced.service", "docker.service"],
)  # fmt: skip
def test_a_workload_on_an_early_boot_or_infrastructure_unit_is_refused(unit: str) -> None:
    """A drop-in's After=hostc-tuning.service on a DefaultDependencies=no unit that runs
    before sysinit.target (or on a unit hostc-tuning itself starts after) is an ordering
    cycle, and systemd breaks it by dropping a start job."""
    found = problems(spec(f'[[workload]]\nname = "w"\ngpus = ["GPU0"]\nunit = "{unit}"\n'))
    assert len(found) == 1 and 'workload "w".unit' in found[0], found
    assert "hint:" in found[0], found


@pytest.mark.parametrize("unit", ["crio-exporter.service", "my-getty.service", "vllm@a.service"])
def test_a_workload_named_like_a_reserved_unit_but_not_it_is_accepted(unit: str) -> None:
    found = problems(spec(f'[[workload]]\nname = "w"\ngpus = ["GPU0"]\nunit = "{unit}"\n'))
    assert found == [], found


@pytest.mark.parametrize(
    ("names", "hard"),
    [('"nvidia-peermem", "ib_umad"', "true"), ('"nvidia_peermem", "ib-umad"', "false")],
)
def test_a_module_hostc_loads_is_never_blacklisted(names: str, hard: str) -> None:
    """gpudirect loads nvidia-peermem (hostc-gpudirect.service) and the GPU+RDMA preset
    loads ib_umad (modules-load.d): blocking either contradicts the build.  One error per
    blacklist entry, at its key, naming what loads it; `-` and `_` are one name."""
    found = problems(
        spec(f'[modules]\nblacklist = [{names}]\nhard_block = {hard}\ngpudirect = "peermem"\n')
    )
    assert len(found) == 2, found
    assert "modules.blacklist[0]" in found[0] and "modules.gpudirect" in found[0], found
    assert "modules.blacklist[1]" in found[1] and "load_ib_umad" in found[1], found


def test_a_module_the_default_gpudirect_loads_is_never_hard_blocked() -> None:
    found = problems(spec('[modules]\nblacklist = ["nvidia-peermem"]\nhard_block = true\n'))
    assert len(found) == 1 and "modules.blacklist[0]" in found[0], found
    assert 'modules.gpudirect = "auto" (the default)' in found[0], found


def test_a_module_hostc_does_not_load_may_be_hard_blocked() -> None:
    found = problems(
        spec(
            '[modules]\nblacklist = ["nvidia-peermem", "ib_umad"]\nhard_block = true\n'
            'gpudirect = "dmabuf"\n[preset]\nexclude = ["load_ib_umad"]\n'
        )
    )
    assert found == [], found


@pytest.mark.parametrize(
    "table",
    [
        '[hugepages]\nsize = "2M"\nper_node = { "01" = 8, "1" = 8 }\n',
        '[hugepages]\nsize = "2M"\nper_node = { "0" = 8, "00" = 4 }\n',
        '[kubelet]\nversion = "1.30"\nreserved_memory = { "1" = "1Gi", "001" = "1Gi" }\n',
    ],
)
def test_two_spellings_of_one_numa_node_are_a_collision(table: str) -> None:
    found = problems(spec(table))
    assert any("same NUMA node" in p for p in found), found


@pytest.mark.parametrize("key", ["\u0661", "\u00b2", " 1", "+1", "-1", "1.0"])
def test_a_numa_node_key_that_is_not_ascii_decimal_is_refused(key: str) -> None:
    found = problems(spec(f'[hugepages]\nsize = "2M"\nper_node = {{ "{key}" = 8 }}\n'))
    assert any("hugepages.per_node" in p for p in found), found


def test_two_spellings_of_one_module_are_a_collision() -> None:
    found = problems(
        spec('[modules]\noptions = { nvidia-drm = "modeset=1", nvidia_drm = "modeset=0" }\n')
    )
    assert any("same module" in p for p in found), found


def test_emit_refuses_two_artifacts_at_one_path() -> None:
    from hostc.artifact import Artifact
    from hostc.targets import one_artifact_per_path

    plan, _ = api.compile_plan(loads(spec()), TOPO)
    arts = api.emit(plan, ["sysctl"])
    with pytest.raises(AssertionError, match="share the path"):
        one_artifact_per_path([*arts, *arts])
    assert isinstance(arts[0], Artifact)


def test_click_usage_errors_echo_arguments_escaped() -> None:
    from conftest import run_hostc

    r = run_hostc("schema", "node", "b\u202ec\u200b")
    assert r.returncode == 2
    assert "\u202e" not in r.stderr and "\u200b" not in r.stderr and "\\u202e" in r.stderr


@pytest.mark.parametrize(
    "extra",
    [
        '[services]\ndisable = ["hostc-tuning.service"]\n',
        '[[workload]]\nname = "w"\ngpus = ["GPU0"]\n[services]\ndisable = ["w.service"]\n',
        '[irq]\nowner = "irqbalance"\n[services]\ndisable = ["irqbalance.service"]\n',
        '[modules]\nblacklist = ["nouveau", "nouveau"]\n',
        '[modules]\nblacklist = ["snd-hda-intel", "snd_hda_intel"]\n',
    ],
)
def test_a_unit_or_module_named_twice_or_against_hostc_is_refused(extra: str) -> None:
    found = problems(spec(extra))
    assert any("services.disable" in p or "modules.blacklist" in p for p in found), found


def test_two_spellings_of_one_package_in_a_snapshot_are_a_collision() -> None:
    from hostc.topology import snapshot

    text = snapshot.dumps(TOPO)
    assert "[packages]" in text
    text = text.replace('[packages]\n"0"', '[packages]\n"00"').replace(
        "[packages]\n0 =", '[packages]\n"00" ='
    )
    text = text.replace("[packages]\n", '[packages]\n"000" = "0"\n', 1)
    with pytest.raises(HostcError, match="name the same package"):
        snapshot.loads(text, "topology.toml")


# --- systemd's drop-in lookup: a drop-in hostc writes reaches one unit ------------------

_UNIT_CHARS = st.text("abcdefghijklmnopqrstuvwxyz0123456789:_-.", min_size=1, max_size=30).filter(
    lambda s: s[0] != "." and s[0] != "-"
)


@settings(max_examples=50, deadline=None)
@given(_UNIT_CHARS, st.sampled_from(["-", "@"]))
def test_a_workload_unit_whose_drop_in_folder_systemd_applies_to_other_units_is_refused(
    stem: str, end: str
) -> None:
    """systemd reads `foo-.service.d/` for every `foo-*.service` and `foo@.service.d/` for
    every instance: hostc writes a workload's drop-in for that unit alone."""
    unit = f"{stem.rstrip('-@')}{end}.service"
    found = problems(spec(f'[[workload]]\nname = "w"\ngpus = ["GPU0"]\nunit = "{unit}"\n'))
    assert any('workload "w".unit' in p and "other units" in p for p in found), (unit, found)


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=246, max_value=300))
def test_a_workload_unit_whose_drop_in_folder_is_past_name_max_is_refused(n: int) -> None:
    unit = "a" * n + ".service"  # the folder is unit + ".d"
    found = problems(spec(f'[[workload]]\nname = "w"\ngpus = ["GPU0"]\nunit = "{unit}"\n'))
    assert any('workload "w".unit' in p for p in found) == (len(unit) + 2 > 255), (n, found)


@pytest.mark.parametrize("unit", ["vllm.service", "vllm-server.service", "llm@gpu0.service"])
def test_a_workload_unit_of_its_own_passes(unit: str) -> None:
    found = problems(spec(f'[[workload]]\nname = "w"\ngpus = ["GPU0"]\nunit = "{unit}"\n'))
    assert not any('workload "w".unit' in p for p in found), found
