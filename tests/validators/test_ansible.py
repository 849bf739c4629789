"""The Ansible target, proven by the real ansible-playbook (ansible-core from PyPI):
`--syntax-check` on every example host, and a real run against a directory as the
host's root, twice: the first run installs (changed), the second changes nothing.

The first install of dgx-r1-01 is run once for the module (`installed`); each test that
starts from an installed host gets its own copy of that root.  One xdist worker runs the
whole module (tests/conftest.py ONE_WORKER), so the install is run once."""

from __future__ import annotations

import base64
import getpass
import grp
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from hostc import api
from hostc.plan.model import Plan
from hostc.targets import ansible

from conftest import ROOT, need_tool

SPECS = sorted(ROOT.glob("examples/*/node.toml")) + sorted(ROOT.glob("examples/fleet/hosts/*.toml"))


def _env(tmp: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ANSIBLE_HOME": str(tmp / ".ansible"),
        "ANSIBLE_LOCAL_TEMP": str(tmp / ".ansible-tmp"),
        # the modules' temp on the "remote" host (this one, -c local): its default
        # ~/.ansible/tmp is the user's home from passwd, whatever $HOME says
        "ANSIBLE_REMOTE_TEMP": str(tmp / ".ansible-remote"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "LC_ALL": "C.UTF-8",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }


def _build(spec: Path, out: Path) -> str:
    plan, _ = api.compile_file(spec)
    api.write(api.emit(plan, ["ansible"]), out)
    return plan.host.name


def _playbook(
    tmp: Path, host: str, *extra: str, out: Path | None = None, inventory: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """ansible-playbook on `host` (or the hosts of `inventory`) with the playbook under
    `out` (default `tmp`/out)."""
    tool = need_tool("ansible-playbook")
    user, group = getpass.getuser(), grp.getgrgid(os.getgid()).gr_name
    argv = [
        tool,
        "-i",
        str(inventory) if inventory else f"{host},",
        "-c",
        "local",
        str((out or tmp / "out") / "ansible" / "playbook.yml"),
        "-e",
        f"ansible_python_interpreter={sys.executable}",
        "-e",
        "hostc_become=false",
        "-e",
        f"hostc_owner={user}",
        "-e",
        f"hostc_group={group}",
        *extra,
    ]
    return subprocess.run(argv, capture_output=True, text=True, env=_env(tmp), timeout=300)


DGX = ROOT / "examples" / "fleet" / "hosts" / "dgx-r1-01.toml"


@attrs.frozen
class Installed:
    """dgx-r1-01's playbook run once into a fresh directory root."""

    plan: Plan
    out: Path  # its build (the playbook and the host's variables); read only
    root: Path  # the installed root; tests copy it (`_copy`)
    first: subprocess.CompletedProcess[str]  # the installing run

    @property
    def host(self) -> str:
        return self.plan.host.name


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp = tmp_path_factory.mktemp("installed")
    plan, _ = api.compile_file(DGX)
    api.write(api.emit(plan, ["ansible"]), tmp / "out")
    root = tmp / "root"
    root.mkdir()
    first = _playbook(tmp, plan.host.name, "-e", f"hostc_root={root}")
    assert first.returncode == 0, first.stdout + first.stderr
    return Installed(plan, tmp / "out", root, first)


def _copy(installed: Installed, tmp: Path) -> Path:
    """A copy of the installed root of this test's own (modes, links and times kept)."""
    return Path(shutil.copytree(installed.root, tmp / "root", symlinks=True))


def _build_all(out: Path) -> list[str]:
    """Every example host's variables next to the one playbook, as a fleet build writes."""
    names = []
    for spec in SPECS:
        plan, _ = api.compile_file(spec)
        api.write(api.emit(plan, ["ansible"]), out)
        names.append(plan.host.name)
    assert len(set(names)) == len(names)
    return names


def test_every_example_passes_syntax_check(tmp_path: Path) -> None:
    """One inventory of every example host (one playbook, each host's variables), as a
    fleet build writes it; the real runs below install one host twice (a full run of every
    example takes minutes on a shared CI machine)."""
    hosts = ",".join(_build_all(tmp_path / "out")) + ","
    r = _playbook(tmp_path, hosts, "--syntax-check")
    assert r.returncode == 0, r.stdout + r.stderr
    listed = _playbook(tmp_path, hosts, "--list-hosts")
    assert listed.returncode == 0 and f"hosts ({len(SPECS)})" in listed.stdout


def test_check_mode_reports_the_changes_and_writes_nothing(
    tmp_path: Path, installed: Installed
) -> None:
    """`ansible-playbook --check` before a push: on a new host it names the changes and
    writes nothing (the manifest handler failed there, on a source check mode never
    copied); on a current host it reports none."""
    host, out = installed.host, installed.out
    empty = tmp_path / "empty"
    empty.mkdir()
    dry = _playbook(tmp_path, host, "--check", "-e", f"hostc_root={empty}", out=out)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert _changed(dry.stdout, host) > 0
    assert "/etc/sysctl.d/90-hostc.conf" in dry.stdout  # named, before anything is written
    assert not list(empty.iterdir()), sorted(empty.rglob("*"))
    root = _copy(installed, tmp_path)  # the same playbook run for real
    again = _playbook(tmp_path, host, "--check", "-e", f"hostc_root={root}", out=out)
    assert again.returncode == 0 and _changed(again.stdout, host) == 0, again.stdout


def test_a_host_without_variables_fails_alone(tmp_path: Path) -> None:
    """An inventory host hostc did not build fails at once, naming the variables file it
    lacks (a play-level vars_files let it fail later on an undefined variable); the host
    hostc built, in the batch before it, is installed."""
    host = _build(DGX, tmp_path / "out")
    root = tmp_path / "root"
    root.mkdir()
    r = _playbook(tmp_path, f"{host},stranger", "-e", f"hostc_root={root}")
    assert r.returncode != 0
    assert _recap(r.stdout, "stranger")["failed"] == 1, r.stdout
    assert "vars-stranger.yml" in r.stdout, r.stdout
    assert _changed(r.stdout, host) > 0
    assert (root / "usr/local/sbin/hostc-apply").is_file()


def _recap(output: str, host: str) -> dict[str, int]:
    m = re.search(rf"^{re.escape(host)}\s*:\s*((?:\w+=\d+\s*)+)$", output, re.M)
    assert m, output
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(1))}


def _task(output: str, name: str) -> str:
    """How the task `name` ended on the run's one host: ok, changed, skipping, failed."""
    m = re.search(rf"^TASK \[{re.escape(name)}\] \**\n(\w+):", output, re.M)
    assert m, (name, output)
    return m.group(1)


def _changed(output: str, host: str) -> int:
    recap = _recap(output, host)
    assert recap["unreachable"] == 0 and recap["failed"] == 0, output
    return recap["changed"]


def test_a_second_run_changes_nothing_and_files_match_the_build(
    tmp_path: Path, installed: Installed
) -> None:
    plan, first = installed.plan, installed.first
    from hostc.targets import lifecycle

    files = [a for a in api.emit(plan, ["all"]) if a.path.startswith("/")]
    files += lifecycle.artifacts(plan, files)  # every delivery carries hostc-apply & co.
    root = _copy(installed, tmp_path)
    assert _changed(first.stdout, plan.host.name) > 0
    # one install command for the files, one for the kernel command line files: a handful
    # of modules on a new host, not one per file (~45 on this host)
    for task in ("hostc files", "hostc kernel command line files"):
        assert _task(first.stdout, task) == "changed", first.stdout
    assert _recap(first.stdout, plan.host.name)["changed"] <= 6, first.stdout
    assert "RUNNING HANDLER [hostc apply]" in first.stdout, "files changed: the apply handler ran"
    assert "RUNNING HANDLER [hostc reboot]" in first.stdout, "kernel arguments changed"
    second = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}", out=installed.out)
    assert second.returncode == 0, second.stdout + second.stderr
    assert _changed(second.stdout, plan.host.name) == 0
    assert "RUNNING HANDLER" not in second.stdout
    # the host's variables, one module on the host (the check) and its two facts: every
    # copy is skipped
    assert _recap(second.stdout, plan.host.name)["ok"] == 4, second.stdout
    for run in (first, second):  # vars_files warned of an undefined inventory_hostname
        assert "[WARNING]" not in run.stdout + run.stderr, run.stdout + run.stderr
    for a in files:
        got = root / a.path.lstrip("/")
        assert got.read_bytes() == a.data, a.path
        assert got.stat().st_mode & 0o7777 == a.mode, a.path
    rows = json.loads((root / "var/lib/hostc/manifest.json").read_text())
    assert rows == sorted(
        (
            {"path": a.path, "sha256": hashlib.sha256(a.data).hexdigest(), "mode": f"{a.mode:04o}"}
            for a in files
        ),
        key=lambda r: r["path"],
    )


def test_a_run_after_hostc_apply_consumed_the_manifest_changes_nothing(
    tmp_path: Path, installed: Installed
) -> None:
    """hostc-apply makes manifest.new the current manifest; pushing manifest.new itself
    would recreate it, and re-apply, on every run (found in the booted VM)."""
    plan, first = installed.plan, installed.first
    root = _copy(installed, tmp_path)
    assert "RUNNING HANDLER [hostc stage the manifest for hostc-apply]" in first.stdout
    state = root / "var/lib/hostc"
    staged = (state / "manifest.new").read_bytes()
    assert staged == (state / "manifest.ansible").read_bytes()
    assert staged.startswith(b"# hostc manifest for ")
    (state / "manifest.new").rename(state / "manifest")  # what hostc-apply does last
    second = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}", out=installed.out)
    assert second.returncode == 0, second.stdout + second.stderr
    assert _changed(second.stdout, plan.host.name) == 0, second.stdout
    assert not (state / "manifest.new").exists()


def _installed_then_one_file_stale(installed: Installed, tmp_path: Path) -> tuple[Plan, Path]:
    """dgx-r1-01 installed (a copy of `installed`'s root), then its sysctl file made
    stale (no kernel-argument file differs), its build under tmp_path/out (the test may
    change the playbook): the plan and the root."""
    api.write(api.emit(installed.plan, ["ansible"]), tmp_path / "out")
    root = _copy(installed, tmp_path)
    (root / "etc/sysctl.d/90-hostc.conf").write_text("stale\n")
    return installed.plan, root


def test_a_changed_sysctl_runs_apply_but_does_not_reboot(
    tmp_path: Path, installed: Installed
) -> None:
    """A live change drains nothing (a drain would run the missing kubectl and fail)."""
    plan, root = _installed_then_one_file_stale(installed, tmp_path)
    drain = ("-e", "hostc_drain=true", "-e", f"hostc_kubectl={tmp_path / 'none'}")
    r = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}", *drain)
    assert r.returncode == 0, r.stdout + r.stderr
    # the pending mark written ("apply": no kernel-argument file differs), the one
    # file, the mark removed by the last handler
    assert _changed(r.stdout, plan.host.name) == 3, r.stdout
    assert "RUNNING HANDLER [hostc apply]" in r.stdout
    assert "RUNNING HANDLER [hostc reboot]" not in r.stdout
    assert not (root / ansible.PENDING.lstrip("/")).exists()


def _installed(tmp_path: Path, *extra: str) -> tuple[str, Path]:
    """dgx-r1-01's playbook run once, with `extra`, into a fresh directory root: the
    host and the root."""
    host = _build(DGX, tmp_path / "out")
    root = tmp_path / "root"
    root.mkdir()
    r = _playbook(tmp_path, host, "-e", f"hostc_root={root}", *extra)
    assert r.returncode == 0, r.stdout + r.stderr
    return host, root


def test_a_file_whose_mode_drifted_is_put_back_and_applied(
    tmp_path: Path, installed: Installed
) -> None:
    """Same bytes, another mode: the check names the file, the copy restores the mode,
    and the apply steps run (what the file's reader sees may have changed)."""
    host, root = installed.host, _copy(installed, tmp_path)
    conf = root / "etc/sysctl.d/90-hostc.conf"
    conf.chmod(0o666)
    r = _playbook(tmp_path, host, "-e", f"hostc_root={root}", out=installed.out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert conf.stat().st_mode & 0o7777 == 0o644
    assert "RUNNING HANDLER [hostc apply]" in r.stdout
    assert "RUNNING HANDLER [hostc reboot]" not in r.stdout
    assert not (root / ansible.PENDING.lstrip("/")).exists()


def test_a_changed_record_of_installed_files_is_rewritten_and_owes_nothing(
    tmp_path: Path, installed: Installed
) -> None:
    """manifest.json alone differs: it is rewritten, nothing is applied, and no pending
    mark is left for a later run to apply (the record notifies no handler)."""
    host, root = installed.host, _copy(installed, tmp_path)
    record = root / ansible.MANIFEST.lstrip("/")
    record.write_text("[]\n")
    r = _playbook(tmp_path, host, "-e", f"hostc_root={root}", out=installed.out)
    assert r.returncode == 0 and _changed(r.stdout, host) == 1, r.stdout
    assert "RUNNING HANDLER" not in r.stdout
    assert not (root / ansible.PENDING.lstrip("/")).exists()
    assert json.loads(record.read_text()) != []


def test_an_owner_given_by_number_leaves_no_pending_run(tmp_path: Path) -> None:
    """hostc_owner=<uid>: the files are owned by that user, so nothing differs, no mark
    is left, and the second run changes nothing."""
    ids = ("-e", f"hostc_owner={os.getuid()}", "-e", f"hostc_group={os.getgid()}")
    host, root = _installed(tmp_path, *ids)
    second = _playbook(tmp_path, host, "-e", f"hostc_root={root}", *ids)
    assert _changed(second.stdout, host) == 0, second.stdout
    assert not (root / ansible.PENDING.lstrip("/")).exists()


def _shellcheck(script: str) -> None:
    """One of the play's fixed host scripts passes shellcheck as POSIX sh."""
    lint = subprocess.run([need_tool("shellcheck"), "-s", "sh", "-"], input=script, text=True,
                          capture_output=True)  # fmt: skip
    assert lint.returncode == 0, lint.stdout


def test_the_check_script_names_every_kind_of_difference(tmp_path: Path) -> None:
    """The playbook's one remote command, run by dash: a file held as built is not named;
    missing, a symbolic link, other bytes, another mode and another owner are."""
    dash = need_tool("dash")
    _shellcheck(ansible.CHECK)
    body = b"vm.swappiness = 1\n"
    digest = hashlib.sha256(body).hexdigest()
    for name in ("same", "bytes", "mode", "link-target", "owner"):
        (tmp_path / name).write_bytes(body)
        (tmp_path / name).chmod(0o644)
    (tmp_path / "bytes").write_bytes(b"other\n")
    (tmp_path / "mode").chmod(0o600)
    (tmp_path / "link").symlink_to(tmp_path / "link-target")
    (tmp_path / "pending").write_text("reboot\n")
    user, group = getpass.getuser(), grp.getgrgid(os.getgid()).gr_name
    args = [str(tmp_path), user, group, "/pending"]
    for name in ("same", "bytes", "mode", "link", "missing"):
        args += [f"/{name}", digest, "0644"]
    r = subprocess.run([dash, "-c", ansible.CHECK, "hostc-check", *args], capture_output=True,
                       text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["pending:reboot", "/bytes", "/mode", "/link", "/missing"]
    other = subprocess.run([dash, "-c", ansible.CHECK, "hostc-check", str(tmp_path), "nobody",
                            group, "/none", "/owner", digest, "0644"],
                           capture_output=True, text=True)  # fmt: skip
    assert other.stdout.splitlines() == ["/owner"], other.stdout + other.stderr
    numeric = subprocess.run([dash, "-c", ansible.CHECK, "hostc-check", str(tmp_path),
                              str(os.getuid()), str(os.getgid()), "/none", "/owner", digest,
                              "0644"], capture_output=True, text=True)  # fmt: skip
    assert numeric.stdout == "", numeric.stdout + numeric.stderr
    (tmp_path / "secret").write_text("not the mark\n")
    (tmp_path / "linked").symlink_to(tmp_path / "secret")
    linked = subprocess.run([dash, "-c", ansible.CHECK, "hostc-check", str(tmp_path), user,
                             group, "/linked"], capture_output=True, text=True)  # fmt: skip
    assert linked.stdout == "", "a mark that is a symbolic link is not read"


def test_the_install_script_writes_each_file_with_its_mode_and_replaces_links(
    tmp_path: Path,
) -> None:
    """The playbook's install command, run by dash: each `MODE BASE64 PATH` line becomes
    that file with that mode and owner, its folders made; a symbolic link there is
    replaced, never written through; a path may hold spaces; nothing is left behind."""
    dash = need_tool("dash")
    _shellcheck(ansible.INSTALL)
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.write_text("kept\n")
    (root / "etc/linked.conf").symlink_to(outside)
    files = {"/etc/a.conf": (b"a = 1\n", "0644"), "/etc/linked.conf": (b"b\n", "0600"),
             "/usr/local/sbin/x y": (b"#!/bin/sh\n", "0755")}  # fmt: skip
    lines = "".join(
        f"{mode} {base64.b64encode(data).decode()} {path}\n" for path, (data, mode) in files.items()
    )
    user, group = getpass.getuser(), grp.getgrgid(os.getgid()).gr_name
    r = subprocess.run([dash, "-c", ansible.INSTALL, "hostc-install", str(root), user, group],
                       input=lines, capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"installed {p}" for p in files]
    for path, (data, mode) in files.items():
        got = root / path.lstrip("/")
        assert not got.is_symlink() and got.read_bytes() == data, path
        assert f"{got.stat().st_mode & 0o7777:04o}" == mode, path
    assert outside.read_text() == "kept\n"
    assert not list(root.rglob(".hostc-install.*"))
    bad = subprocess.run([dash, "-c", ansible.INSTALL, "hostc-install", str(root), user, group],
                         input="0644 !!notbase64!! /etc/c.conf\n", capture_output=True,
                         text=True)  # fmt: skip
    assert bad.returncode != 0 and not (root / "etc/c.conf").exists()
    assert not list(root.rglob(".hostc-install.*")), "a failed write leaves no staging file"


def test_the_apply_script_runs_each_step_as_words_and_stops_at_the_first_failure(
    tmp_path: Path,
) -> None:
    """The apply handler's one command, run by dash: each step's words reach its command
    as they are (no expansion, no splitting), in order, and a failing step stops the
    rest with its status, as one module per step did."""
    dash = need_tool("dash")
    _shellcheck(ansible.APPLY_SH)
    log = tmp_path / "log"
    steps = [("first", ["sh", "-c", 'printf "%s|" "$@" >>"$0"', str(log), "a b", "$(id)", "*"]),
             ("second", ["false"]), ("third", ["touch", str(tmp_path / "never")])]  # fmt: skip
    args = [w for why, argv in steps for w in (why, str(len(argv)), *argv)]
    r = subprocess.run([dash, "-c", ansible.APPLY_SH, "hostc-apply-steps", *args],
                       capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["hostc: first", "hostc: second"]
    assert log.read_text() == "a b|$(id)|*|"
    assert not (tmp_path / "never").exists()


def _interrupted(tmp: Path, host: str) -> None:
    """The playbook with a failing handler put first: the run stops after copying every
    file and before any apply step, as a lost connection or Ctrl-C would stop it."""
    import yaml

    play = yaml.safe_load(ansible.playbook())[0]
    stop = {"name": "interrupted", "listen": "hostc apply", "ansible.builtin.fail": {"msg": "x"}}
    play["handlers"].insert(0, stop)
    (tmp / "out" / "ansible" / "playbook.yml").write_text(yaml.safe_dump([play]))


def test_a_run_cut_off_before_its_handlers_is_resumed_by_the_next(tmp_path: Path) -> None:
    """Files copied, handlers never run: the next run finds no file to change, yet re-runs
    the apply steps and the reboot that the mark says were owed, then forgets the mark."""
    plan, _ = api.compile_file(DGX)
    api.write(api.emit(plan, ["ansible"]), tmp_path / "out")
    root = tmp_path / "root"
    root.mkdir()
    mark = root / ansible.PENDING.lstrip("/")
    _interrupted(tmp_path, plan.host.name)
    cut = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}")
    assert cut.returncode != 0 and "RUNNING HANDLER [hostc apply]" not in cut.stdout, cut.stdout
    assert mark.read_text() == "reboot\n"  # the kernel-argument files were new
    api.write(api.emit(plan, ["ansible"]), tmp_path / "out")  # the real playbook again
    resumed = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (
        "TASK [hostc resume the apply and reboot an earlier run did not finish]" in resumed.stdout
    )
    for task in ("hostc files", "hostc kernel command line files"):  # no file differed
        assert _task(resumed.stdout, task) == "skipping", resumed.stdout
    for handler in ("hostc stage the manifest for hostc-apply", "hostc apply", "hostc reboot"):
        assert f"RUNNING HANDLER [{handler}]" in resumed.stdout, handler
    assert not mark.exists()
    again = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}")
    assert again.returncode == 0 and _changed(again.stdout, plan.host.name) == 0, again.stdout
    assert "RUNNING HANDLER" not in again.stdout


def test_a_cut_off_run_owing_only_apply_does_not_reboot(
    tmp_path: Path, installed: Installed
) -> None:
    plan, root = _installed_then_one_file_stale(installed, tmp_path)
    _interrupted(tmp_path, plan.host.name)
    assert _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}").returncode != 0
    assert (root / ansible.PENDING.lstrip("/")).read_text() == "apply\n"
    api.write(api.emit(plan, ["ansible"]), tmp_path / "out")
    resumed = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "TASK [hostc resume the apply an earlier run did not finish]" in resumed.stdout
    assert "RUNNING HANDLER [hostc apply]" in resumed.stdout
    assert "RUNNING HANDLER [hostc reboot]" not in resumed.stdout


def _reboot_handlers(tmp: Path, host: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """The playbook's reboot handlers, notified on this host (`hostc_prefix` ''), with the
    reboot command echoed instead of run: which of them a connection and `hostc_reboot` pick."""
    import yaml

    play = yaml.safe_load(ansible.playbook())[0]
    for h in play["handlers"]:
        if "ansible.builtin.command" in h and h["ansible.builtin.command"]["argv"][0] == "shutdown":
            h["ansible.builtin.command"]["argv"].insert(0, "echo")
    notify = ["hostc reboot"]
    test = {
        "hosts": "all",
        "gather_facts": False,
        "vars": {**play["vars"], "hostc_prefix": ""},
        "tasks": [{"ansible.builtin.debug": {"msg": "x"}, "changed_when": True, "notify": notify}],
        "handlers": [h for h in play["handlers"] if h["name"] != "hostc apply"],
    }
    out = tmp / "out" / "ansible"
    out.mkdir(parents=True, exist_ok=True)
    (out / "playbook.yml").write_text(yaml.safe_dump([test]))
    (out / f"vars-{host}.yml").write_text("{}\n")
    return _playbook(tmp, host, "-v", *extra)


def test_over_a_local_connection_the_reboot_is_scheduled_not_refused(tmp_path: Path) -> None:
    """`ansible.builtin.reboot` fails under `-c local` ("would reboot the control node"):
    a host running its own playbook schedules `shutdown -r +1` so the play ends first."""
    r = _reboot_handlers(tmp_path, "h1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _changed(r.stdout, "h1") == 2  # the notifying task and the scheduled reboot
    assert "shutdown -r +1 hostc: the kernel command line changed" in r.stdout


def test_hostc_reboot_false_only_reports_that_a_reboot_is_needed(tmp_path: Path) -> None:
    r = _reboot_handlers(tmp_path, "h1", "-e", "hostc_reboot=false")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _changed(r.stdout, "h1") == 1
    assert "shutdown" not in r.stdout
    assert "reboot for it to take effect" in r.stdout


def test_a_rolling_push_drains_one_host_at_a_time_and_a_noop_push_runs_one_module(
    tmp_path: Path, installed: Installed
) -> None:
    """Two hosts (copies of the installed root, named in an inventory with their own
    `hostc_root`), each with a workload's drop-in stale: a restart, so each is drained
    first.  `serial` defaults to 1: drain and uncordon of one host before the next's
    drain, the kubectl delegated to the controller (`hostc_drain_host`).  Then the same
    push again: nothing differs, nothing drains, one module runs per host."""
    out = tmp_path / "out"
    shutil.copytree(installed.out, out)
    log, kubectl = tmp_path / "kubectl.log", tmp_path / "kubectl"
    kubectl.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    kubectl.chmod(0o755)
    hosts = ["h1", "h2"]  # two show the order: h1 drained and uncordoned before h2
    lines = []
    for h in hosts:
        shutil.copy(
            out / "ansible" / f"vars-{installed.host}.yml", out / "ansible" / f"vars-{h}.yml"
        )
        root = Path(shutil.copytree(installed.root, tmp_path / h, symlinks=True))
        dropin = next(root.glob("etc/systemd/system/*.service.d/90-hostc.conf"))
        dropin.write_text("stale\n")
        lines.append(f"{h} hostc_root={root}")
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("\n".join(lines) + "\n")
    extra = ("-e", "hostc_drain=true", "-e", f"hostc_kubectl={kubectl}",
             "-e", "hostc_drain_host=localhost")  # fmt: skip
    r = _playbook(tmp_path, "", *extra, out=out, inventory=inventory)
    assert r.returncode == 0, r.stdout + r.stderr
    drain = "drain {} --ignore-daemonsets --delete-emptydir-data"
    assert log.read_text().splitlines() == [
        line for h in hosts for line in (drain.format(h), f"uncordon {h}")
    ]
    for h in hosts:
        marks = tmp_path / h / ansible.PENDING.lstrip("/")
        assert not marks.exists(), h
    log.unlink()
    again = _playbook(tmp_path, "", *extra, out=out, inventory=inventory)
    assert again.returncode == 0, again.stdout + again.stderr
    assert not log.exists(), log.read_text()
    for h in hosts:  # the variables, the check (the one module) and its two facts
        assert _recap(again.stdout, h)["ok"] == 4 and _changed(again.stdout, h) == 0, again.stdout
