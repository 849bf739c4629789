"""The Ansible target, proven by the real ansible-playbook (ansible-core from PyPI):
`--syntax-check` on every example host, and a real run against a directory as the
host's root, twice: the first run installs (changed), the second changes nothing.
The play's shape (issue 50: it decides nothing about disruption, hostc-apply
--disruption does; two batch sizes; drain timeout; the gates after a reboot) is read
from the parsed playbook, and the decision is run with a hostc-apply whose
`--disruption` says what a test wants (`_stub`).

A directory root is never applied (hostc-apply runs no step there), so its manifest is
never committed: a test that starts from a host that applied the build commits it as
hostc-apply would (`_commit`).

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
from typing import Any

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


def _copy(installed: Installed, tmp: Path, name: str = "root") -> Path:
    """A copy of the installed root of this test's own (modes, links and times kept)."""
    return Path(shutil.copytree(installed.root, tmp / name, symlinks=True))


def _commit(root: Path) -> Path:
    """What hostc-apply does last on a host (never under a directory root): the placed
    manifest.new becomes the manifest applied."""
    state = root / "var/lib/hostc"
    (state / "manifest.new").rename(state / "manifest")
    return root


OWES, LIVE, REBOOTS = "hostc what each host owes", "hostc live changes", "hostc reboots"


def _plays() -> dict[str, dict[str, Any]]:
    """The playbook's plays by name, parsed."""
    import yaml

    return {p["name"]: p for p in yaml.safe_load(ansible.playbook())}


def _named(play: dict[str, Any], name: str) -> dict[str, Any]:
    found = [t for t in play["tasks"] if t["name"] == name]
    assert len(found) == 1, (name, [t["name"] for t in play["tasks"]])
    return found[0]


def _ran(output: str, play: str) -> dict[str, str]:
    """How each task of `play` ended on the run's hosts (the last host's status), the
    tasks every host skipped left out; {} when the play matched no host."""
    m = re.search(rf"^PLAY \[{re.escape(play)}\] \**\n(.*?)(?=^PLAY )", output, re.M | re.S)
    assert m, (play, output)
    ended = re.findall(r"^TASK \[(.+?)\] \**\n((?:\w+: .*\n)+)", m.group(1), re.M)
    return {
        name: lines.splitlines()[-1].split(":")[0]
        for name, lines in ended
        if any(not line.startswith("skipping") for line in lines.splitlines())
    }


def _stub(out: Path, host: str, *said: str) -> None:
    """vars-`host`.yml with a hostc-apply whose `--disruption` prints `said` (and which
    does nothing else): the play must do what those lines say, and only that."""
    import shlex

    import yaml

    path = out / "ansible" / f"vars-{host}.yml"
    doc = yaml.safe_load(path.read_text())
    text = (
        "#!/bin/sh\nif [ \"${1:-}\" = --disruption ]; then\n  printf '%s\\n' "
        + " ".join(shlex.quote(line) for line in said)
        + "\nfi\n"
    ).encode()
    (entry,) = [f for f in doc["hostc_files"] if f["path"] == "/usr/local/sbin/hostc-apply"]
    entry["content"] = base64.b64encode(text).decode()
    entry["sha256"] = hashlib.sha256(text).hexdigest()
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _kubectl(tmp: Path) -> tuple[Path, Path]:
    """A kubectl that logs its arguments: the command and its log."""
    log, kubectl = tmp / "kubectl.log", tmp / "kubectl"
    kubectl.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    kubectl.chmod(0o755)
    return kubectl, log


def _hosts(tmp: Path, installed: Installed, hosts: list[str], *said: str) -> Path:
    """An inventory of `hosts`, each a committed copy of the installed root with its own
    `hostc_root`, each with the build's variables and a hostc-apply that says `said`;
    the playbook and variables under tmp/out."""
    out = tmp / "out"
    shutil.copytree(installed.out, out)
    lines = []
    for h in hosts:
        shutil.copy(
            out / "ansible" / f"vars-{installed.host}.yml", out / "ansible" / f"vars-{h}.yml"
        )
        _stub(out, h, *said)
        lines.append(f"{h} hostc_root={_commit(_copy(installed, tmp, h))}")
    inventory = tmp / "hosts.ini"
    inventory.write_text("\n".join(lines) + "\n")
    return inventory


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
    # a first delivery: hostc-apply --disruption owes a reboot for the kernel arguments,
    # and the host is sorted into the reboot play by that line alone
    assert "summary reboot" in first.stdout and "reboot kernel arguments" in first.stdout
    assert _ran(first.stdout, LIVE) == {}
    # one install command for every file: a handful of modules on a new host, not one
    # per file (~45 on this host)
    assert _ran(first.stdout, REBOOTS)["hostc files"] == "changed", first.stdout
    assert _recap(first.stdout, plan.host.name)["changed"] <= 6, first.stdout
    second = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}", out=installed.out)
    assert second.returncode == 0, second.stdout + second.stderr
    assert _changed(second.stdout, plan.host.name) == 0
    assert _ran(second.stdout, LIVE) == _ran(second.stdout, REBOOTS) == {}
    # the host's variables, one module on the host (the check), its facts and its group:
    # hostc-apply is not asked, every copy is skipped
    assert _recap(second.stdout, plan.host.name)["ok"] == 5, second.stdout
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
    assert _task(first.stdout, "hostc place this build's manifest for hostc-apply") == "changed"
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
    """dgx-r1-01 installed and applied (a committed copy of `installed`'s root), then its
    sysctl file made stale, its build under tmp_path/out (the test may change the
    playbook): the plan and the root."""
    api.write(api.emit(installed.plan, ["ansible"]), tmp_path / "out")
    root = _commit(_copy(installed, tmp_path))
    (root / "etc/sysctl.d/90-hostc.conf").write_text("stale\n")
    return installed.plan, root


def test_a_changed_sysctl_is_applied_live_and_drains_nothing(
    tmp_path: Path, installed: Installed
) -> None:
    """hostc-apply --disruption says `live sysctl`: the host goes to the live play, and a
    live change drains nothing (a drain would run the missing kubectl and fail)."""
    plan, root = _installed_then_one_file_stale(installed, tmp_path)
    drain = ("-e", "hostc_drain=true", "-e", f"hostc_kubectl={tmp_path / 'none'}")
    r = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}", *drain)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "live sysctl" in r.stdout and "summary live" in r.stdout, r.stdout
    assert _ran(r.stdout, REBOOTS) == {}
    # the manifest placed, the pending mark written ("live"), the one file, the mark
    # removed last
    assert _ran(r.stdout, LIVE)["hostc files"] == "changed"
    assert _changed(r.stdout, plan.host.name) == 4, r.stdout
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
    and hostc-apply, told the file was rewritten (HOSTC_CHANGED), applies it live (what
    the file's reader sees may have changed)."""
    host, root = installed.host, _commit(_copy(installed, tmp_path))
    conf = root / "etc/sysctl.d/90-hostc.conf"
    conf.chmod(0o666)
    r = _playbook(tmp_path, host, "-e", f"hostc_root={root}", out=installed.out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert conf.stat().st_mode & 0o7777 == 0o644
    assert "summary live" in r.stdout
    assert _ran(r.stdout, LIVE)["hostc files"] == "changed"
    assert _ran(r.stdout, REBOOTS) == {}
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
    for task in ("hostc place this build's manifest for hostc-apply",
                 "hostc ask hostc-apply what this change costs"):  # fmt: skip
        assert task not in _ran(r.stdout, OWES), task
    assert _ran(r.stdout, LIVE) == {"hostc manifest of what is installed": "changed"}
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
    # under a root, every folder on the way that is a link is named once (issue 51.2(c));
    # at `/` (the root '') none is
    (tmp_path / "real/sub").mkdir(parents=True)
    (tmp_path / "via").symlink_to(tmp_path / "real")
    ways = ["/via/sub/a", digest, "0644", "/via/b", digest, "0644", "/real/sub/c", digest, "0644"]
    folders = subprocess.run([dash, "-c", ansible.CHECK, "hostc-check", str(tmp_path), user,
                              group, "/none", *ways], capture_output=True, text=True)  # fmt: skip
    assert [x for x in folders.stdout.splitlines() if x.startswith("link:")] == ["link:/via"]
    at_root = [f"{tmp_path}{w}" if w.startswith("/") else w for w in ways]
    top = subprocess.run([dash, "-c", ansible.CHECK, "hostc-check", "", user, group, "/none",
                          *at_root], capture_output=True, text=True)  # fmt: skip
    assert not [x for x in top.stdout.splitlines() if x.startswith("link:")], top.stdout


def test_the_disruption_script_runs_the_builds_hostc_apply_with_its_arguments(
    tmp_path: Path,
) -> None:
    """The first play's question, run by dash: the build's hostc-apply (base64 in the
    variables, never read by Jinja2 or the outer shell) runs with the words after it."""
    dash = need_tool("dash")
    _shellcheck(ansible.DISRUPTION)
    text = b'printf \'%s|\' "$0" "$@"; [ "$1" = --disruption ]\n'
    r = subprocess.run([dash, "-c", ansible.DISRUPTION, "hostc-disruption",
                        base64.b64encode(text).decode(), "--disruption", "$(id)"],
                       capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0 and r.stdout == "hostc-apply|--disruption|$(id)|", r
    bad = subprocess.run([dash, "-c", ansible.DISRUPTION, "hostc-disruption", "!!", "x"],
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode != 0 and bad.stdout == ""


def _install(root: Path, lines: str, *owner: str) -> subprocess.CompletedProcess[str]:
    """The playbook's install command, run by dash as the play runs it (`sh -c`)."""
    user, group = getpass.getuser(), grp.getgrgid(os.getgid()).gr_name
    return subprocess.run([need_tool("dash"), "-c", ansible.INSTALL, "hostc-install", str(root),
                           *(owner or (user, group))], input=lines, capture_output=True,
                          text=True)  # fmt: skip


def test_the_install_script_writes_each_file_with_its_mode_and_refuses_links(
    tmp_path: Path,
) -> None:
    """The playbook's install command, run by dash: each `MODE BASE64 PATH` line becomes
    that file with that mode, its folders made, through the one writer (`hostc_put`); a
    path may hold spaces; nothing is left behind.  A symbolic link at a destination is
    refused, never written through nor replaced, and stops the lines after it; a line
    that does not decode writes nothing."""
    _shellcheck(ansible.INSTALL)
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.write_text("kept\n")
    files = {"/etc/a.conf": (b"a = 1\n", "0644"), "/usr/local/sbin/x y": (b"#!/bin/sh\n", "0755")}
    lines = "".join(
        f"{mode} {base64.b64encode(data).decode()} {path}\n" for path, (data, mode) in files.items()
    )
    r = _install(root, lines)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"installed {p}" for p in files]
    for path, (data, mode) in files.items():
        got = root / path.lstrip("/")
        assert got.read_bytes() == data, path
        assert f"{got.stat().st_mode & 0o7777:04o}" == mode, path
    written = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    assert written == ["etc", "etc/a.conf", "usr", "usr/local", "usr/local/sbin",
                       "usr/local/sbin/x y"], "nothing is left behind"  # fmt: skip
    (root / "etc/linked.conf").symlink_to(outside)
    linked = _install(root, f"0600 {base64.b64encode(b'b').decode()} /etc/linked.conf\n" + lines)
    assert linked.returncode == 1 and linked.stdout == "", linked.stdout
    assert f"{root}/etc/linked.conf: it is a symbolic link" in linked.stderr, linked.stderr
    assert (root / "etc/linked.conf").is_symlink() and outside.read_text() == "kept\n"
    bad = _install(root, "0644 !!notbase64!! /etc/c.conf\n")
    assert bad.returncode != 0 and not (root / "etc/c.conf").exists()
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == [
        *written[:2],
        "etc/linked.conf",
        *written[2:],
    ], "a failed write leaves no staging file"


def test_the_install_script_removes_through_the_one_writer_and_checks_its_owner(
    tmp_path: Path,
) -> None:
    """`absent - PATH` removes the file (`hostc_remove`: said only when there was one),
    and a symbolic link among the folders on the way is refused, never followed.  The
    owner the check expects must be the one the writer gives (root, or the user that
    runs it): another would be installed again on every run, so nothing is written."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "var/lib/hostc").mkdir(parents=True)
    (outside / "hostc").mkdir(parents=True)
    (root / "var/lib/hostc/ansible-pending").write_text("live\n")
    (outside / "hostc/ansible-pending").write_text("kept\n")
    mark = "absent - /var/lib/hostc/ansible-pending\n"
    r = _install(root, mark + mark)
    assert r.returncode == 0 and r.stdout == "removed /var/lib/hostc/ansible-pending\n", r
    assert list((root / "var/lib/hostc").iterdir()) == []
    shutil.rmtree(root / "var/lib")
    (root / "var/lib").symlink_to(outside)
    r = _install(root, mark)
    assert r.returncode == 1 and f"{root}/var/lib is a symbolic link" in r.stderr, r.stderr
    assert (outside / "hostc/ansible-pending").read_text() == "kept\n"
    line = f"0644 {base64.b64encode(b'x').decode()} /etc/x.conf\n"
    other = _install(root, line, "nobody", "nogroup")
    assert other.returncode == 1 and "files are written as" in other.stderr, other.stderr
    assert not (root / "etc").exists()
    ids = _install(root, line, str(os.getuid()), str(os.getgid()))
    assert ids.returncode == 0 and (root / "etc/x.conf").read_bytes() == b"x", ids.stderr


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


def _interrupted(tmp: Path) -> None:
    """The playbook with a failing task just before the apply steps of both changing
    plays: the run stops after the mark and the files, before hostc-apply, as a lost
    connection or Ctrl-C would stop it."""
    import yaml

    plays = yaml.safe_load(ansible.playbook())
    for play in plays[1:]:
        at = [t["name"] for t in play["tasks"]].index("hostc apply")
        play["tasks"].insert(at, {"name": "interrupted", "ansible.builtin.fail": {"msg": "x"}})
    (tmp / "out" / "ansible" / "playbook.yml").write_text(yaml.safe_dump(plays))


def test_a_run_cut_off_before_its_reboot_is_resumed_by_the_next(tmp_path: Path) -> None:
    """Files copied, hostc-apply and the reboot never run: the mark says `reboot`.  Even
    when hostc-apply then finds nothing left to judge (here its manifest committed by
    hand: it committed, then the connection was lost), the next run drains, applies and
    reboots the host as the mark says, then forgets the mark."""
    plan, _ = api.compile_file(DGX)
    api.write(api.emit(plan, ["ansible"]), tmp_path / "out")
    root = tmp_path / "root"
    root.mkdir()
    mark = root / ansible.PENDING.lstrip("/")
    _interrupted(tmp_path)
    cut = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}")
    assert cut.returncode != 0 and "TASK [hostc apply]" not in cut.stdout, cut.stdout
    assert mark.read_text() == "reboot\n"  # the kernel arguments were new
    _commit(root)
    api.write(api.emit(plan, ["ansible"]), tmp_path / "out")  # the real playbook again
    resumed = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "summary none" in resumed.stdout, "hostc-apply: nothing left to judge"
    assert f"an earlier run did not finish: {ansible.PENDING} owes reboot" in resumed.stdout
    ran = _ran(resumed.stdout, REBOOTS)
    assert "hostc files" not in ran, "no file differed"
    assert ran["hostc this run finished"] == "changed"
    assert not mark.exists()
    again = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}")
    assert again.returncode == 0 and _changed(again.stdout, plan.host.name) == 0, again.stdout


def test_a_cut_off_live_run_is_resumed_without_a_reboot(
    tmp_path: Path, installed: Installed
) -> None:
    plan, root = _installed_then_one_file_stale(installed, tmp_path)
    _interrupted(tmp_path)
    assert _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}").returncode != 0
    assert (root / ansible.PENDING.lstrip("/")).read_text() == "live\n"
    (root / "var/lib/hostc/manifest").unlink()
    _commit(root)
    api.write(api.emit(plan, ["ansible"]), tmp_path / "out")
    resumed = _playbook(tmp_path, plan.host.name, "-e", f"hostc_root={root}")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "owes live" in resumed.stdout
    assert _ran(resumed.stdout, LIVE)["hostc this run finished"] == "changed"
    assert _ran(resumed.stdout, REBOOTS) == {}


def _reboot_tasks(tmp: Path, host: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """The reboot play's reboot tasks on this host (`hostc_prefix` ''), with the reboot
    command echoed instead of run: which of them a connection and `hostc_reboot` pick."""
    import yaml

    play = yaml.safe_load(ansible.playbook())[2]
    tasks = [t for t in play["tasks"] if t["name"].startswith("hostc reboot")]
    assert len(tasks) == 3, [t["name"] for t in play["tasks"]]
    for t in tasks:
        if "ansible.builtin.command" in t and t["ansible.builtin.command"]["argv"][0] == "shutdown":
            t["ansible.builtin.command"]["argv"].insert(0, "echo")
    test = {
        "hosts": "all",
        "gather_facts": False,
        "vars": {**play["vars"], "hostc_prefix": ""},
        "tasks": tasks,
    }
    out = tmp / "out" / "ansible"
    out.mkdir(parents=True, exist_ok=True)
    (out / "playbook.yml").write_text(yaml.safe_dump([test]))
    return _playbook(tmp, host, "-v", *extra)


def test_over_a_local_connection_the_reboot_is_scheduled_not_refused(tmp_path: Path) -> None:
    """`ansible.builtin.reboot` fails under `-c local` ("would reboot the control node"):
    a host running its own playbook schedules `shutdown -r +1` so the play ends first."""
    r = _reboot_tasks(tmp_path, "h1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _changed(r.stdout, "h1") == 1  # the scheduled reboot
    assert "shutdown -r +1 hostc: hostc-apply --disruption owes a reboot" in r.stdout


def test_hostc_reboot_false_only_reports_that_a_reboot_is_needed(tmp_path: Path) -> None:
    r = _reboot_tasks(tmp_path, "h1", "-e", "hostc_reboot=false")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _changed(r.stdout, "h1") == 0
    assert "shutdown" not in r.stdout
    assert "reboot for it to take effect" in r.stdout


DRAIN_OWED = ("drain the kubelet's managers", "reboot the kubelet's managers", "summary reboot")


def test_a_rolling_push_drains_gates_and_uncordons_one_host_at_a_time(
    tmp_path: Path, installed: Installed
) -> None:
    """Two hosts (committed copies of the installed root, each with its own `hostc_root`)
    whose hostc-apply says a drain and a reboot are owed.  `hostc_serial_reboot` defaults
    to 1: drain (with its timeout), the Ready wait and the uncordon of one host before
    the next's drain, kubectl delegated to the controller (`hostc_drain_host`), and
    hostc-apply's lines printed.  Then the same push again: nothing differs, nothing
    drains, one module runs per host.

    The order is the inventory's, h2 (ungrouped) before h1 (in `[gpu]`): once group_by
    has put both in one group, `ungrouped` loses h2 and groups['all'] lists `gpu` first,
    so a play that took groups['all']'s order drained h1 first (and one that took
    group_by's, whichever host's result came back first: CI met h2 before h1 so)."""
    inventory = _hosts(tmp_path, installed, ["h1", "h2"], *DRAIN_OWED)
    h1, h2 = inventory.read_text().splitlines()
    inventory.write_text(f"{h2}\n[gpu]\n{h1}\n")
    hosts = ["h2", "h1"]
    kubectl, log = _kubectl(tmp_path)
    extra = ("-e", "hostc_drain=true", "-e", f"hostc_kubectl={kubectl}",
             "-e", "hostc_drain_host=localhost", "-e", "hostc_drain_timeout=42s")  # fmt: skip
    r = _playbook(tmp_path, "", *extra, inventory=inventory)
    assert r.returncode == 0, r.stdout + r.stderr
    assert log.read_text().splitlines() == [
        line
        for h in hosts
        for line in (
            f"drain {h} --timeout=42s --ignore-daemonsets --delete-emptydir-data",
            f"wait --for=condition=Ready node/{h} --timeout=600s",
            f"uncordon {h}",
        )
    ]
    assert "drain the kubelet's managers" in r.stdout  # what hostc-apply said, printed
    for h in hosts:
        assert not (tmp_path / h / ansible.PENDING.lstrip("/")).exists(), h
        assert (
            (tmp_path / h / "usr/local/sbin/hostc-apply").read_bytes().startswith(b"#!/bin/sh\nif")
        )
    log.unlink()
    again = _playbook(tmp_path, "", *extra, inventory=inventory)
    assert again.returncode == 0, again.stdout + again.stderr
    assert not log.exists(), log.read_text()
    for h in hosts:  # the variables, the check (the one module), its facts, its group
        assert _recap(again.stdout, h)["ok"] == 5 and _changed(again.stdout, h) == 0, again.stdout


def test_the_same_change_drains_only_when_hostc_apply_says_so(
    tmp_path: Path, installed: Installed
) -> None:
    """One file differs (hostc-apply itself), the same on every run: what the play does
    follows from hostc-apply --disruption's lines alone.  `live` goes to the live play
    and drains nothing under `hostc_drain: true`."""
    inventory = _hosts(tmp_path, installed, ["h1"], "live sysctl", "summary live")
    kubectl, log = _kubectl(tmp_path)
    r = _playbook(tmp_path, "", "-e", "hostc_drain=true", "-e", f"hostc_kubectl={kubectl}",
                  inventory=inventory)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert not log.exists(), log.read_text()
    assert _ran(r.stdout, LIVE)["hostc files"] == "changed"
    assert _ran(r.stdout, REBOOTS) == {}


def test_a_drain_owed_without_hostc_drain_fails_the_host_and_stops_the_push(
    tmp_path: Path, installed: Installed
) -> None:
    """hostc-apply owes a drain and `hostc_drain` is unset: the first host (h1, the
    inventory's first) fails before its mark or any file, and `max_fail_percentage: 0`
    leaves the second untouched."""
    inventory = _hosts(tmp_path, installed, ["h1", "h2"], *DRAIN_OWED)
    r = _playbook(tmp_path, "", inventory=inventory)
    assert r.returncode != 0
    assert "this change owes a drain before the reboot" in r.stdout, r.stdout
    # one host fails and stops the push: the inventory's first (the plays keep its order)
    assert sum(_recap(r.stdout, h).get("failed", 0) for h in ("h1", "h2")) == 1, r.stdout
    assert _recap(r.stdout, "h1").get("failed", 0) == 1, r.stdout
    for h in ("h1", "h2"):
        assert not (tmp_path / h / ansible.PENDING.lstrip("/")).exists(), h
        assert (
            not (tmp_path / h / "usr/local/sbin/hostc-apply")
            .read_bytes()
            .startswith(b"#!/bin/sh\nif")
        )


def test_a_root_whose_folders_are_links_is_refused(tmp_path: Path) -> None:
    """hostc_root=DIR with DIR/etc a link outside it: the host fails before anything is
    written, and the outside folder is left as it was (issue 51.2(c))."""
    host = _build(DGX, tmp_path / "out")
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "etc").symlink_to(outside)
    r = _playbook(tmp_path, host, "-e", f"hostc_root={root}")
    assert r.returncode != 0
    assert "these folders are symbolic links" in r.stdout and ": /etc" in r.stdout, r.stdout
    assert not list(outside.iterdir()) and sorted(root.iterdir()) == [root / "etc"]


# the play's shape, read from the playbook: the run above cannot reboot or drain a host


def test_the_play_decides_nothing_itself_hostc_apply_disruption_does() -> None:
    """No task reads a per-file boot/restart flag (the variables have none); the summary
    that sorts a host comes from the `hostc-apply --disruption` it registered, raised
    only by the pending mark; each changing play takes its own groups."""
    text = ansible.playbook()
    assert not re.search(r"\b(boot|restart)'\)|attribute='(boot|restart)'", text), text
    plan, _ = api.compile_file(DGX)
    for f in yaml_load(ansible.host_vars(plan, list(api.emit(plan, ["all"]))))["hostc_files"]:
        assert "boot" not in f and "restart" not in f, f["path"]
    plays = _plays()
    owes = plays[OWES]
    asked = _named(owes, "hostc ask hostc-apply what this change costs")
    assert asked["register"] == "hostc_disruption"
    assert "'--disruption'" in asked["ansible.builtin.command"]["argv"]
    said = _named(owes, "hostc what hostc-apply said")["ansible.builtin.set_fact"]
    assert "hostc_disruption.stdout_lines" in str(_named(owes, "hostc what hostc-apply said"))
    assert set(said) == {"hostc_summary", "hostc_drain_owed", "hostc_order"}
    assert said["hostc_order"] == "{{ ansible_play_hosts_all }}"  # order, not a decision
    group = _named(owes, "hostc group this host by what it owes")["ansible.builtin.group_by"]
    assert group == {"key": "hostc_owes_{{ hostc_summary }}"}
    assert "hostc_owes_reboot" in plays[REBOOTS]["hosts"]
    assert "hostc_owes_reboot" not in plays[LIVE]["hosts"]
    for g in ("restart", "live", "none"):
        assert f"hostc_owes_{g}" in plays[LIVE]["hosts"] and g not in plays[REBOOTS]["hosts"]
    # what drains: hostc_drain, in the reboot play only; a drain line unset fails
    assert not [t for t in plays[LIVE]["tasks"] if "drain" in t["name"]]
    drain = _named(plays[REBOOTS], "hostc drain this node before it reboots")
    assert drain["when"] == "hostc_drain | default(false) | bool"
    guard = _named(plays[REBOOTS], "hostc a drain is owed and hostc_drain is not set")
    assert guard["when"] == ["hostc_drain_owed", "hostc_drain is not defined"]


def test_the_rollout_has_two_batch_sizes_and_stops_at_a_failed_host() -> None:
    plays = _plays()
    assert list(plays) == [OWES, LIVE, REBOOTS]
    assert plays[OWES]["serial"] == "{{ hostc_serial_check | default('100%') }}"
    assert plays[LIVE]["serial"] == "{{ hostc_serial_live | default('25%') }}"
    assert plays[REBOOTS]["serial"] == "{{ hostc_serial_reboot | default(1) }}"
    assert plays[LIVE]["max_fail_percentage"] == plays[REBOOTS]["max_fail_percentage"] == 0
    assert "max_fail_percentage" not in plays[OWES]  # a host that cannot be checked drops out


def test_after_a_reboot_the_gates_come_before_the_uncordon() -> None:
    """Drain (with a timeout), files, hostc-apply, reboot, hostc-verify active, node
    Ready, uncordon, the mark removed: in this order.  A live host runs hostc-verify
    again after hostc-apply, and reads the same gate."""
    reboots = _plays()[REBOOTS]
    names = [t["name"] for t in reboots["tasks"]]
    order = [
        "hostc mark this run pending until it has finished",
        "hostc drain this node before it reboots",
        "hostc files",
        "hostc apply",
        "hostc reboot",
        "hostc hostc-verify.service is active",
        "hostc hostc-verify.service found drift",
        "hostc this node is Ready again",
        "hostc uncordon this node",
        "hostc this run finished",
    ]
    assert [n for n in names if n in order] == order
    drain = _named(reboots, "hostc drain this node before it reboots")
    assert "'--timeout=' ~ (hostc_drain_timeout | default('600s'))" in str(drain)
    active = _named(reboots, "hostc hostc-verify.service is active")
    assert active["ansible.builtin.command"]["argv"] == [
        "systemctl",
        "is-active",
        "hostc-verify.service",
    ]
    assert active["until"] == "hostc_verify.stdout in ['active', 'failed']"
    assert "hostc_verify_timeout" in active["retries"]
    assert active["failed_when"] == "hostc_verify.stdout not in ['active', 'failed']"
    assert _named(reboots, "hostc hostc-verify.service found drift")["failed_when"] is True
    ready = str(_named(reboots, "hostc this node is Ready again"))
    assert "'wait', '--for=condition=Ready', 'node/'" in ready and "hostc_ready_timeout" in ready
    live = [t["name"] for t in _plays()[LIVE]["tasks"]]
    assert live.index("hostc apply") < live.index("hostc run hostc-verify.service again")
    assert live.index("hostc run hostc-verify.service again") < live.index(
        "hostc hostc-verify.service is active"
    ) < live.index("hostc hostc-verify.service found drift")  # fmt: skip


def test_every_variable_the_playbook_reads_is_documented() -> None:
    """Each `hostc_*` name the playbook reads that neither the play, the host's variables
    nor a task sets is a setting: docs/targets.md names it."""
    text = ansible.playbook()
    plan, _ = api.compile_file(DGX)
    host = yaml_load(ansible.host_vars(plan, list(api.emit(plan, ["all"]))))
    set_here = set(host)
    for play in _plays().values():
        set_here |= set(play["vars"])
        for t in play["tasks"]:
            set_here |= set(t.get("vars", {})) | set(t.get("ansible.builtin.set_fact", {}))
            set_here |= {t["register"]} if "register" in t else set()
    read = set(re.findall(r"\bhostc_[a-z_]*[a-z]\b", text)) - set_here
    for script in (ansible.INSTALL, ansible.CHECK, ansible.DISRUPTION, ansible.APPLY_SH):
        read -= set(re.findall(r"\bhostc_[a-z_]*[a-z]\b", script))  # the shell's own names
    read -= {n for n in read if n.startswith("hostc_owes_")}  # the groups
    docs = (ROOT / "docs" / "targets.md").read_text()
    missing = sorted(n for n in read if f"`{n}" not in docs)
    assert not missing, missing
    for name in ("hostc_serial_live", "hostc_serial_reboot", "hostc_drain_timeout"):
        assert name in read


def yaml_load(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)
