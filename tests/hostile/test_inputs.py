"""Hostile input: every found case, through the real CLI, exit 2 and nothing written.

Each case was a way to forge a line in an artifact (a shell command in the GRUB
drop-in, a sysctl, a limit), to break grub.cfg, to hang or crash hostc, or to make
it print content from a file that is not its own.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hostc import api
from hostc.delivery.owned import RECORD
from hostc.diagnostics import HostcError
from hostc.targets._escape import ESCAPING as ESCAPING_FILTERS
from hostc.topology import snapshot

from conftest import ROOT, run_hostc
from topogen import H100_KW, machine

H100 = H100_KW


def spec_text(name: str = "t", extra: str = "") -> str:
    return (
        f'version = 1\n\n[host]\nname = "{name}"\nrole = "inference"\n'
        f'topology = "topology.toml"\nkernel = "6.8"\n{extra}'
    )


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_hostc(*args, cwd=cwd, env={"PYTHONDONTWRITEBYTECODE": "1"})


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "topology.toml").write_text(snapshot.dumps(machine(**H100)))  # type: ignore[arg-type]
    return tmp_path


def refused(workdir: Path, text: str | bytes, key: str | None, word: str = "") -> str:
    spec = workdir / "node.toml"
    spec.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    out = workdir / "out"
    r = run("build", spec, "--out", out, cwd=workdir)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    assert not out.exists(), sorted(map(str, out.rglob("*")))
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert any(
        "node.toml" in ln and (key is None or f": {key}: " in ln) and word in ln for ln in errors
    ), r.stderr
    return r.stderr


# ---- shell injection through names -------------------------------------------------------

INJECTIONS = ["x\ntouch /tmp/PWNED\n#", "x\rtouch", "a b", "$(reboot)", "x;id", "-x", "x\x00y", ""]


@pytest.mark.parametrize("name", INJECTIONS, ids=repr)
def test_host_name_injection_is_refused(workdir: Path, name: str) -> None:
    toml_name = json.dumps(name)[1:-1]
    refused(workdir, spec_text(toml_name), "host.name")


def test_workload_name_newline_is_refused_by_plan(workdir: Path) -> None:
    spec = workdir / "node.toml"
    spec.write_text(
        spec_text(extra='\n[[workload]]\nname = "vllm\\nnumactl --all"\ngpus = ["GPU0"]\n')
    )
    r = run("plan", spec, cwd=workdir)
    assert r.returncode == 2, r.stderr
    assert "workload[0].name" in r.stderr
    assert "numactl --all" not in r.stdout


def test_host_name_built_in_python_is_refused_by_check() -> None:
    import attrs

    spec = api.load_spec  # noqa: F841 (the API path: a HostSpec built without the loader)
    from hostc.spec.model import Host, HostSpec, Role

    bad = HostSpec(host=Host(name="x\ntouch /tmp/PWNED", role=Role.INFERENCE))  # type: ignore[arg-type]
    with pytest.raises(HostcError) as e:
        api.compile_plan(bad, machine(**H100))  # type: ignore[arg-type]
    assert any(str(d.path) == "host.name" for d in e.value.errors)
    assert attrs.has(type(bad))


# ---- kernel arguments that break GRUB or the shell ----------------------------------------

BAD_ARGS = [
    "{a,b}",
    "a{",
    "b}",
    "#x",
    "a=b#c",
    "x\x00y",
    "a b",
    "a=$x",
    "a=`id`",
    "a;b",
    "a|b",
    "a>b",
    "a=\\x",
    "a='b'",
    'a="b"',
    "a&b",
    "a=*",
    "a=?",
    "a=[1]",
    "=x",
    "x=",
]


@pytest.mark.parametrize("arg", BAD_ARGS, ids=repr)
def test_unsafe_kernel_argument_is_refused(workdir: Path, arg: str) -> None:
    refused(
        workdir,
        spec_text(extra=f"\n[kernel]\nextra_args = [{json.dumps(arg)}]\n"),
        "kernel.extra_args[0]",
    )


def test_template_filters_refuse_what_checks_might_miss() -> None:
    from hostc.targets._escape import UnsafeValue, comment, grubarg, sysctl_value, word
    from hostc.targets._render import env

    assert comment("a\nb\rc\x00d\u2028e") == "# a b c d e"
    for bad in ("{a,b}", "#x", "a\x00", "a b"):
        with pytest.raises(UnsafeValue):
            grubarg(bad)
    with pytest.raises(UnsafeValue):
        sysctl_value("1\nkernel.x = 1")
    with pytest.raises(UnsafeValue):
        word("1 2")
    with pytest.raises(UnsafeValue):  # finalize: any {{ }} output with a control char
        env().from_string("{{ x }}").render(x="a\nb")


@given(st.text())
def test_oneline_fast_path_is_the_plain_definition(text: str) -> None:
    """`oneline` skips the regex and the re-join for printable collapsed text; it must
    still be exactly: control characters to spaces, whitespace runs collapsed."""
    from hostc.knowledge import charsets
    from hostc.targets._escape import oneline

    assert oneline(text) == " ".join(charsets.CONTROL.sub(" ", text).split())


@given(st.text(), st.sampled_from(sorted(ESCAPING_FILTERS)))
def test_escaping_filters_never_pass_a_control_character(text: str, name: str) -> None:
    """Each must refuse or drop control characters (finalize is the second guard)."""
    from hostc.knowledge import charsets
    from hostc.targets._escape import UnsafeValue
    from hostc.targets._render import env

    try:
        out = env().filters[name](text)
    except UnsafeValue:
        return
    assert type(out) is str
    assert charsets.CONTROL.search(out) is None, (name, text, out)


@given(st.text())
def test_shell_quotes_exactly_as_shlex_does(text: str) -> None:
    import shlex

    from hostc.knowledge import charsets
    from hostc.targets._escape import UnsafeValue, shell

    if charsets.CONTROL.search(text):
        with pytest.raises(UnsafeValue):
            shell(text)
    else:
        assert shell(text) == shlex.quote(text)


def test_finalize_guards_every_other_output() -> None:
    from hostc.targets._escape import UnsafeValue
    from hostc.targets._render import env

    e = env()
    for source in ("{{ x }}", "{{ x | string }}", "{{ x | upper }}", "{{ [x] | join }}"):
        with pytest.raises(UnsafeValue):
            e.from_string(source).render(x="a\nb")
    # the escaping filters' output passes through finalize too (no private code generator)
    assert "finalize" in e.compile("{{ x | comment }}", raw=True)
    assert "finalize" in e.compile("{{ x }}", raw=True)


# ---- unbounded reads and deep nesting ------------------------------------------------------


@pytest.mark.parametrize("dev", ["/dev/zero", "/dev/urandom"])
def test_device_as_spec_is_refused_quickly(tmp_path: Path, dev: str) -> None:
    r = run("build", dev, cwd=tmp_path)
    assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr


def test_huge_spec_is_refused(workdir: Path) -> None:
    stderr = refused(workdir, spec_text() + "# " + "x" * (2 << 20) + "\n", None, "MiB")
    assert len(stderr) < 2000


@pytest.mark.parametrize("opener", ["[", "{a="])
def test_deep_nesting_is_a_diagnostic(workdir: Path, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    deep = "x = " + opener * 600 + ("1" if opener != "[" else "") + closer * 600 + "\n"
    stderr = refused(workdir, spec_text() + deep, None, "nested too deeply")
    assert "RecursionError" not in stderr


# ---- no content from files that are not hostc's --------------------------------------------

SECRET = "root:$6$hunter2:19000:0:99999:7:::\n"


def test_errors_show_nothing_of_a_foreign_file(workdir: Path) -> None:
    secret = workdir / "shadow"
    secret.write_text(SECRET * 3)
    spec = workdir / "node.toml"
    spec.write_text(spec_text())
    for args in (
        ("build", secret),
        ("build", spec, "--topology", secret),
        ("import", "numactl", secret),
        ("import", "lscpu", secret),
        ("import", "hwloc", secret),
    ):
        r = run(*args, cwd=workdir)
        assert r.returncode == 2, (args, r.stderr)
        assert "hunter2" not in r.stderr + r.stdout, (args, r.stderr)


# ---- sysctl keys that alias -----------------------------------------------------------------


def build_sysctl(workdir: Path, table: str) -> str:
    spec = workdir / "node.toml"
    spec.write_text(spec_text(extra="\n[sysctl]\n" + table))
    r = run("build", spec, "-t", "sysctl", cwd=workdir)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_slash_form_replaces_the_preset_value(workdir: Path) -> None:
    out = build_sysctl(workdir, '"vm/swappiness" = 60\n')
    assert [ln for ln in out.splitlines() if "swappiness" in ln and not ln.startswith("#")] == [
        "vm.swappiness = 60"
    ]


def test_dot_inside_a_component_keeps_its_meaning(workdir: Path) -> None:
    out = build_sysctl(workdir, '"net/ipv4/conf/eth0.100/rp_filter" = 2\n')
    assert "net.ipv4.conf.eth0/100.rp_filter = 2" in out.splitlines()


def test_two_spellings_of_one_key_name_both(workdir: Path) -> None:
    stderr = refused(
        workdir,
        spec_text(extra='\n[sysctl]\n"vm.swappiness" = 1\n"vm/swappiness" = 2\n'),
        'sysctl."vm/swappiness"',
    )
    assert 'sysctl."vm.swappiness"' in stderr


@pytest.mark.parametrize(
    "table,key",
    [
        ('"VM.Swappiness" = 1\n', 'sysctl."VM.Swappiness"'),
        ('"vm.swappiness" = "1\\r"\n', 'sysctl."vm.swappiness"'),
        ('"vm.swappiness" = "1\\nkernel.panic = 1"\n', 'sysctl."vm.swappiness"'),
        ('"vm.swappiness" = "1 # x"\n', 'sysctl."vm.swappiness"'),
        ('"vm.swappiness" = "1; x"\n', 'sysctl."vm.swappiness"'),
        ('"vm.swappiness" = ""\n', 'sysctl."vm.swappiness"'),
        ('"vm.swap\\npiness" = 1\n', None),
    ],
)
def test_bad_sysctl_is_refused(workdir: Path, table: str, key: str | None) -> None:
    stderr = refused(workdir, spec_text(extra="\n[sysctl]\n" + table), key)
    assert "\nkernel.panic" not in stderr


# ---- output edges ----------------------------------------------------------------------------


@pytest.mark.parametrize("out", ["/", "/etc", "/usr", "/proc/self"])
def test_out_refuses_system_directories(workdir: Path, out: str) -> None:
    spec = workdir / "node.toml"
    spec.write_text(spec_text())
    before = set(os.listdir(out if os.path.isdir(out) else "/"))
    r = run("build", spec, "--out", out, cwd=workdir)
    assert r.returncode == 2 and "refusing to write" in r.stderr, r.stderr
    assert set(os.listdir(out if os.path.isdir(out) else "/")) == before


def test_out_through_a_symlink_to_root_is_refused(workdir: Path) -> None:
    (workdir / "link").symlink_to("/")
    spec = workdir / "node.toml"
    spec.write_text(spec_text())
    r = run("build", spec, "--out", workdir / "link", cwd=workdir)
    assert r.returncode == 2 and "refusing to write" in r.stderr, r.stderr


def test_failed_write_leaves_no_directory_skeleton(workdir: Path) -> None:
    spec = workdir / "node.toml"
    spec.write_text(spec_text())
    out = workdir / "out"
    out.mkdir()
    (out / "sysctl").write_text("a file where a directory must go")
    r = run("build", spec, "--out", out, cwd=workdir)
    assert r.returncode == 2, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["sysctl"], sorted(out.rglob("*"))


def test_huge_bad_value_is_echoed_short(workdir: Path) -> None:
    big = "y" * 900_000
    stderr = refused(workdir, spec_text(big), "host.name")
    assert len(stderr) < 2000
    stderr = refused(workdir, spec_text(extra=f'\n[sysctl]\n"vm.swappiness" = "1 #{big}"\n'), None)
    assert len(stderr) < 2000


# ---- the first ten minutes ------------------------------------------------------------------


def test_build_says_what_it_wrote_and_quiet_silences_it(workdir: Path) -> None:
    spec = workdir / "node.toml"
    spec.write_text(spec_text())
    r = run("build", spec, "--out", "out", cwd=workdir)
    assert r.returncode == 0 and r.stdout == ""
    # the build's record of what it wrote (`hostc.delivery.owned`) is not one of the files
    n = sum(1 for p in (workdir / "out").rglob("*") if p.is_file() and p.name != RECORD)
    assert r.stderr.strip().endswith(f"wrote {n} files under out"), r.stderr
    r = run("build", spec, "--out", "out", "--check", cwd=workdir)
    assert r.returncode == 0 and r.stderr.strip().endswith("out is up to date"), r.stderr
    for args in (("--out", "out", "-q"), ("--out", "out", "--check", "--quiet")):
        r = run("build", spec, *args, cwd=workdir)
        said = [ln for ln in r.stderr.splitlines() if ln.startswith(("wrote", "out "))]
        assert r.returncode == 0 and not said, r.stderr


def test_json_check_and_json_out_carry_warnings(workdir: Path) -> None:
    spec = workdir / "node.toml"
    spec.write_text(spec_text(extra='\n[cpu]\nisolate = "rest"\nhousekeeping_per_node = 1\n'))
    r = run("build", spec, "--out", "out", "--json", "-q", cwd=workdir)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["warnings"], "isolation without workloads warns"
    r = run("build", spec, "--out", "out", "--check", "--json", cwd=workdir)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ok"] is True and json.loads(r.stdout)["differences"] == []
    (workdir / "out/sysctl/etc/sysctl.d/90-hostc.conf").write_text("changed\n")
    r = run("build", spec, "--out", "out", "--check", "--json", cwd=workdir)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["ok"] is False
    assert [d["path"] for d in doc["differences"]] == ["sysctl/etc/sysctl.d/90-hostc.conf"]


def test_snapshot_output_into_a_directory(workdir: Path) -> None:
    src = workdir / "numa.txt"
    src.write_text(
        "available: 1 nodes (0)\nnode 0 cpus: 0 1\nnode 0 size: 1000 MB\nnode 0 free: 10 MB\n"
        "node distances:\nnode   0\n  0:  10\n"
    )
    sub = workdir / "snap"
    sub.mkdir()
    r = run("import", "numactl", src, "-o", ".", cwd=sub)
    assert r.returncode == 0, r.stderr
    assert (sub / "topology.toml").is_file()


def test_exit_code_3_is_documented() -> None:
    import hostc.cli.main

    assert "3 internal error" in (hostc.cli.main.__doc__ or "")
    assert "`3`" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("pci", "0000:17:00.0;reboot"),
        ("pci", "../../../../tmp"),
        ("netdev", 'eth0" x'),
        ("rdma", "mlx5_0 mlx5_1"),
        ("name", "$(touch /tmp/PWNED)"),
    ],
)
def test_snapshot_device_fields_that_reach_scripts_are_refused(field: str, value: str) -> None:
    """Device names and PCI addresses go into the tuning script, unit files and NCCL
    variables: a snapshot cannot smuggle shell words or paths through them."""
    from hostc.topology.validate import validate

    topo = machine(**H100)  # type: ignore[arg-type]
    nic = attrs.evolve(topo.nics[0], **{field: value})
    bad = attrs.evolve(topo, nics=[nic, *topo.nics[1:]])
    assert [str(d.path) for d in validate(bad)] == [f"nics[0].{field}"]
