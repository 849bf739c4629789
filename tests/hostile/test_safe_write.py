"""hostc's shell scripts write a file one way: `hostc_put` (targets/templates/_safe_write.sh.j2).

The rule (issue 51): a writer under a declared root (DESTDIR for apply.sh, HOSTC_ROOT for
a script's sandbox, '' for the live host) writes ROOT + an absolute path of hostc's words.
Every existing component below ROOT, each folder on the way and the file itself, is
checked first: a symbolic link is refused (the script stops naming it), never followed; a
missing folder is made one level at a time after that check; the file is written under a
new name in its final folder and renamed over the destination; nothing is created under
/dev, /proc or /sys.  The scripts run as root on nodes (where a hostPath pod writes
/var/lib/kubelet) and in image builders (where an image's absolute link
etc/systemd -> /etc/systemd points at the build machine).

Every case here runs the real generated script with dash against a tmp tree; each link
points into the test's own tmp folder, never at the machine's /etc.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from hostc import api
from hostc.artifact import Artifact
from hostc.knowledge import kubelet as ko
from hostc.targets import ansible
from hostc.targets import kubelet as tk
from hostc.targets._render import env

from conftest import EXAMPLE_NAMES, ROOT, example_plan, need_tool

TEMPLATES = ROOT / "targets" / "templates"
PARTIAL = "_safe_write.sh.j2"
#: a FIFO must not make a script wait: far above a run's time, far below a hang
TIMEOUT = 20

#: shell scripts that write in place without the writer, and why that is not a file write
#: under the rule
NOT_FILE_WRITERS = {
    # writes kernel attributes that exist (sysctl-like files in /proc and /sys, the IRQs'
    # smp_affinity_list): it creates and replaces nothing
    "/usr/local/sbin/hostc-tuning": r'>\s*"\$(2|f)"',
    # renames manifest.new over manifest inside /var/lib/hostc, hostc's own root-only
    # folder (its owner moves it to hostc_put; see issue 51's report)
    "/usr/local/sbin/hostc-apply": r'^mv -f -- "\$root\$new" "\$root\$old"$',
}
#: what writes a file in sh: an install, a copy, a move, a folder, a link, a redirect to
#: a path (descriptor duplications and /dev/null aside)
WRITER = re.compile(
    r"\binstall\s|\bcp\s|\bmv\s|\bmkdir\s|\bln\s|\btee\s|\btouch\s|\btruncate\s|\bdd\s.*\bof="
    r"|(?<![0-9&<])>>?\s*(?!&|/dev/null\b|\s*$)\S"
)


def _partial() -> str:
    return env().get_template(PARTIAL).render()


def _scripts() -> list[tuple[str, Artifact]]:
    out = []
    for name in EXAMPLE_NAMES:
        for a in api.emit(example_plan(name), ["rootfs"]):  # every host file, and apply.sh
            if a.data.startswith(b"#!/bin/sh"):
                out.append((name, a))
    return out


def _code(text: str) -> list[str]:
    """The lines that run: no comment, no line of an arithmetic expansion (`$((a >> b))`),
    none of a here-document's body."""
    lines, heredoc = [], None
    for ln in text.splitlines():
        if heredoc is not None:
            if ln == heredoc:
                heredoc = None
            continue
        s = ln.strip()
        if not s or s.startswith("#") or "$((" in s:
            continue
        m = re.search(r"<<-?\s*'?(\w+)'?", s)
        if m:
            heredoc = m.group(1)
            s = s[: m.start()]
        lines.append(s)
    return lines


def _unquoted(line: str) -> str:
    """LINE with each quoted string's text taken out (a `>` in a message is no redirect)."""
    return re.sub(r"'[^']*'", "''", re.sub(r'"(?:[^"\\]|\\.)*"', '""', line))


def _run(argv: list[str], env_: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ARGV in its own process group; a run past TIMEOUT is killed, group and all (a
    reader blocked on a FIFO among them), and fails the test saying so."""
    p = subprocess.Popen(
        argv, env=env_, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail(f"{argv[-1]} still ran after {TIMEOUT}s: it waits on a FIFO")
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def _tree(root: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every entry under ROOT: its kind and its bytes or link target, links never followed."""
    out: dict[str, tuple[str, bytes | str]] = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        if stat.S_ISLNK(st.st_mode):
            out[str(p.relative_to(root))] = ("link", os.readlink(p))
        elif stat.S_ISREG(st.st_mode):
            out[str(p.relative_to(root))] = ("file", p.read_bytes())
        else:
            out[str(p.relative_to(root))] = ("dir" if p.is_dir() else "other", b"")
    return out


# --- the one writer ---


#: Ansible modules that write a file on the host: the play writes through its install
#: command (`hostc_put`) alone
WRITING_MODULES = {
    "copy", "template", "file", "lineinfile", "blockinfile", "replace", "assemble",
    "unarchive", "get_url", "uri", "fetch", "synchronize", "ini_file", "tempfile",
}  # fmt: skip


def _play_scripts() -> list[tuple[str, str]]:
    """The shell scripts the Ansible play runs on a host as root, as the playbook carries
    them (the plays' and the tasks' variables): (name, text)."""
    import yaml

    out: dict[str, str] = {}
    for play in yaml.safe_load(ansible.playbook()):
        for scope in (play, *play["tasks"]):
            for name, value in scope.get("vars", {}).items():
                if isinstance(value, str) and "\n" in value.strip():
                    assert out.setdefault(name, value) == value, name
                    # Ansible templates a variable's text where it is used
                    assert not any(o in value for o in ansible.JINJA_OPENERS), name
    return sorted(out.items())


def _unwritten(text: str, allowed: str | None = None) -> list[str]:
    """The lines of TEXT that write a file without hostc_put."""
    return [
        ln
        for ln in _code(text)
        if WRITER.search(_unquoted(ln)) and not (allowed and re.search(allowed, ln))
    ]


def test_every_root_shell_script_that_writes_files_uses_the_one_writer() -> None:
    """The writer is one text in one partial: every generated script that writes a file,
    and every script the Ansible play runs on a host, carries it verbatim, once, and
    writes no other way; no template defines it again, and no task of the play writes
    with a module of its own."""
    partial = _partial()
    definers = [p.name for p in TEMPLATES.glob("*.j2") if "hostc_put() {" in p.read_text()]
    assert definers == [PARTIAL]
    scripts = [(f"{name} {a.path}", a.path, a.text) for name, a in _scripts()]
    scripts += [(f"playbook.yml {name}", f"playbook.yml {name}", text)
                for name, text in _play_scripts()]  # fmt: skip
    users: set[str] = set()
    for where, path, text in scripts:
        if "hostc_put() {" in text:
            assert text.count(partial) == 1 and text.count("hostc_put() {") == 1, where
            users.add(path)
            text = text.replace(partial, "")
        writes = _unwritten(text, NOT_FILE_WRITERS.get(path))
        assert writes == [], f"{where} writes without hostc_put: {writes}"
    assert users >= {"apply.sh", tk.RESET, "/usr/local/sbin/hostc-kargs",
                     "playbook.yml hostc_install"}  # fmt: skip
    import yaml

    modules = {
        (task["name"], key.removeprefix("ansible.builtin."))
        for play in yaml.safe_load(ansible.playbook())
        for task in play["tasks"]
        for key in task
    }
    assert not [m for m in modules if m[1] in WRITING_MODULES], modules


def test_the_writer_scan_sees_the_old_writers() -> None:
    for old in (
        'install -D -m "$1" -o root -g root -- "$src$2" "${DESTDIR:-}$2"',
        'printf \'%s\\n\' "$want" > "$stamp_file"',
        'cp -- "$1" "$2.hostc-tmp"',
        'mkdir -p -- "$(dirname -- "$staged")"',
    ):
        assert WRITER.search(_unquoted(old)), old
    for fine in (
        'echo "x" >&2',
        "grep -q x f >/dev/null 2>&1",
        'done <"$root$new"',
        'log "refused IRQ $1 -> $2"',
    ):
        assert not WRITER.search(_unquoted(fine)), fine


def _put(
    tmp: Path, root: str, path: str, *, src: str = "-", data: str = "hello\n"
) -> subprocess.CompletedProcess[str]:
    script = tmp / "put.sh"
    script.write_text(
        f'set -eu\n{_partial()}hostc_put "$1" "$2" 0640 "$3"\necho changed=$hostc_changed\n'
    )
    dash = need_tool("dash")
    p = subprocess.run(
        [dash, str(script), root, path, src], input=data, capture_output=True, text=True,
        timeout=TIMEOUT,
    )  # fmt: skip
    return p


def test_the_writer_makes_each_folder_and_renames_the_file_into_place(tmp_path: Path) -> None:
    root = tmp_path / "root"
    r = _put(tmp_path, str(root), "/var/lib/hostc/x.stamp")
    assert r.returncode == 0 and "changed=yes" in r.stdout, r.stderr
    f = root / "var/lib/hostc/x.stamp"
    assert f.read_text() == "hello\n" and stat.S_IMODE(f.stat().st_mode) == 0o640
    assert stat.S_IMODE((root / "var/lib").stat().st_mode) == 0o755
    inode = f.stat().st_ino
    r = _put(tmp_path, str(root), "/var/lib/hostc/x.stamp")
    assert r.returncode == 0 and "changed=no" in r.stdout, r.stderr
    assert f.stat().st_ino != inode, "replaced by a rename, not written in place"
    assert sorted(p.name for p in f.parent.iterdir()) == ["x.stamp"], "no temporary file left"


def test_the_declared_root_may_itself_be_a_link(tmp_path: Path) -> None:
    """Only what lies below ROOT is checked: DESTDIR is the caller's word."""
    (tmp_path / "image").mkdir()
    (tmp_path / "root").symlink_to(tmp_path / "image")
    r = _put(tmp_path, str(tmp_path / "root"), "/etc/x.conf")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "image/etc/x.conf").read_text() == "hello\n"


@pytest.mark.parametrize(
    "path", ["/dev/null", "/proc/sys/x", "/sys/kernel/x", "etc/x", "/etc/../x", "/etc//x", "/etc/"]
)
def test_the_writer_refuses_what_is_not_a_plain_path_of_its_own(tmp_path: Path, path: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    r = _put(tmp_path, str(root), path)
    assert r.returncode == 1 and f"refused to write {path}" in r.stderr, r.stderr
    assert list(root.iterdir()) == []


@pytest.mark.parametrize("kind", ["folder link", "file link", "fifo", "folder"])
def test_the_writer_refuses_a_link_or_a_special_file_on_the_way(tmp_path: Path, kind: str) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "etc/sysctl.d").mkdir(parents=True)
    outside.mkdir()
    (outside / "victim").write_text("outside\n")
    named = {
        "folder link": root / "etc/sysctl.d",
        "file link": root / "etc/sysctl.d/x.conf",
        "fifo": root / "etc/sysctl.d/x.conf",
        "folder": root / "etc/sysctl.d/x.conf",
    }[kind]
    if kind == "folder link":
        (root / "etc/sysctl.d").rmdir()
        named.symlink_to(outside)
    elif kind == "file link":
        named.symlink_to(outside / "victim")
    elif kind == "fifo":
        os.mkfifo(named)
    else:
        named.mkdir()
    before = _tree(root), _tree(outside)
    r = _put(tmp_path, str(root), "/etc/sysctl.d/x.conf")
    assert r.returncode == 1 and "refused to write" in r.stderr and str(named) in r.stderr
    assert (_tree(root), _tree(outside)) == before


# --- a) apply.sh under DESTDIR ---


def _apply(tmp: Path, name: str) -> Path:
    (art,) = [a for a in api.emit(example_plan(name), ["rootfs"]) if a.path == "apply.sh"]
    out = tmp / "out" / "rootfs"
    for a in api.emit(example_plan(name), ["rootfs"]):
        p = out / a.path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(a.data)
    return out / art.path


@pytest.mark.parametrize("link", ["/etc/systemd", "/etc/sysctl.d/90-hostc.conf", "/usr/local"])
def test_apply_sh_under_destdir_never_writes_through_a_link_in_the_image(
    tmp_path: Path, link: str
) -> None:
    """An image's absolute link (IMAGE/etc/systemd -> /etc/systemd) is refused, never
    followed: root's install must not land on the build machine (here a tmp folder)."""
    dash = need_tool("dash")
    script = _apply(tmp_path, "h100-kubeadm")
    image, outside = tmp_path / "image", tmp_path / "outside"
    outside.mkdir()
    at = image / link.lstrip("/")
    at.parent.mkdir(parents=True)
    at.symlink_to(outside)
    r = _run([dash, str(script)], {"DESTDIR": str(image), "PATH": "/usr/bin:/bin"})
    assert r.returncode != 0
    assert f"refused to write {at}" in r.stderr or f"{at} is a symbolic link" in r.stderr, r.stderr
    assert list(outside.iterdir()) == [], "written through the image's link"


def test_apply_sh_under_destdir_never_waits_on_a_fifo_in_the_image(tmp_path: Path) -> None:
    dash = need_tool("dash")
    script = _apply(tmp_path, "h100-kubeadm")
    fifo = tmp_path / "image/etc/sysctl.d/90-hostc.conf"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    r = _run([dash, str(script)], {"DESTDIR": str(tmp_path / "image"), "PATH": "/usr/bin:/bin"})
    assert r.returncode != 0 and f"refused to write {fifo}" in r.stderr, r.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


# --- b) hostc-kubelet-reset ---


class Node:
    """A node's tree (HOSTC_ROOT) with rke2's kubelet stopped, and hostc-kubelet-reset."""

    def __init__(self, tmp: Path) -> None:
        self.dash = need_tool("dash")
        self.root = tmp / "root"
        self.kubelet = self.root / "var/lib/kubelet"  # hostPath pods write here
        self.kubelet.mkdir(parents=True)
        self.outside = tmp / "outside"
        self.outside.mkdir()
        (self.outside / "victim").write_text("a root-owned file\n")
        bindir = tmp / "bin"
        bindir.mkdir()
        (bindir / "systemctl").write_text('#!/bin/sh\n[ "$1" = is-active ] && exit 3\nexit 0\n')
        (bindir / "systemctl").chmod(0o755)
        plan = example_plan("dgx-h100-rke2")
        self.script = tmp / "hostc-kubelet-reset"
        self.script.write_bytes(
            next(a for a in api.emit(plan, ["kubelet"]) if a.path == tk.RESET).data
        )
        self.env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOSTC_ROOT": str(self.root)}

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _run([self.dash, str(self.script), *args], self.env)


def test_the_kubelet_reset_stamp_never_lands_in_a_pod_writable_folder(tmp_path: Path) -> None:
    """Root writes the stamp at every boot: in /var/lib/kubelet a pod's link there (the
    stamp's old name) would take root's write to any file.  Nothing is written there; a
    run only removes the checkpoints."""
    assert not ko.STAMP.startswith("/var/lib/kubelet/") and ko.STAMP.startswith("/var/lib/hostc/")
    node = Node(tmp_path)
    (node.kubelet / "cpu_manager_state").write_text('{"policyName":"none"}')
    for name in ("hostc-managers.stamp", "kubelet-managers.stamp"):  # the old name, the new
        (node.kubelet / name).symlink_to(node.outside / "victim")
    before = _tree(node.kubelet)
    for mode in ("--boot", "--now", "--boot"):
        r = node.run(mode)
        assert r.returncode == 0, r.stderr
        after = _tree(node.kubelet)
        assert after.items() <= before.items(), "the reset wrote in /var/lib/kubelet"
    assert (node.outside / "victim").read_text() == "a root-owned file\n"
    assert (node.root / ko.STAMP.lstrip("/")).is_file()


@pytest.mark.parametrize("mode", ["apply", "--now"])
def test_a_fifo_planted_at_a_checkpoint_path_does_not_block_the_reset(
    tmp_path: Path, mode: str
) -> None:
    """A FIFO at a checkpoint path: a read that waits for a writer never comes back, and the
    boot unit before the kubelet would hold its start forever.  A link there is not read
    through either: it names a file outside that says pods hold CPUs."""
    node = Node(tmp_path)
    os.mkfifo(node.kubelet / "cpu_manager_state")
    (node.outside / "state").write_text('{"policyName":"static","entries": {"pod":{"c":"4"}}}')
    (node.kubelet / "memory_manager_state").symlink_to(node.outside / "state")
    r = node.run(*([] if mode == "apply" else [mode]))
    assert r.returncode == 0, r.stderr
    assert "checkpoints cleared" in r.stdout or "done" in r.stdout, r.stdout + r.stderr
    assert list(node.kubelet.iterdir()) == [], "the planted checkpoints are removed, not read"
    assert (node.outside / "state").read_text().startswith('{"policyName":"static"')


# --- hostc-kargs (grubby) ---


def test_hostc_kargs_never_writes_through_a_link_under_its_root(tmp_path: Path) -> None:
    dash = need_tool("dash")
    plan = example_plan("epyc-rhel9-inference")
    script = tmp_path / "hostc-kargs"
    script.write_bytes(
        next(a for a in api.emit(plan, ["grubby"]) if a.path == "/usr/local/sbin/hostc-kargs").data
    )
    bindir, root, outside = tmp_path / "bin", tmp_path / "root", tmp_path / "outside"
    for d in (bindir, root / "etc", root / "proc", outside):
        d.mkdir(parents=True)
    (bindir / "grubby").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "grubby").chmod(0o755)
    (root / "proc/cmdline").write_text("BOOT_IMAGE=(hd0)/vmlinuz root=/dev/vda1 ro\n")
    (outside / "cmdline").write_text("root=/dev/sda1\n")
    (root / "etc/kernel").symlink_to(outside)
    env_ = {"PATH": f"{bindir}:/usr/bin:/bin", "HOSTC_ROOT": str(root)}
    r = _run([dash, str(script)], env_)
    assert r.returncode != 0 and f"{root}/etc/kernel is a symbolic link" in r.stderr, r.stderr
    assert [p.name for p in outside.iterdir()] == ["cmdline"]
    assert (outside / "cmdline").read_text() == "root=/dev/sda1\n"


# --- the Ansible play ---


def _install_sh() -> str:
    """The install command as the playbook carries it (what the play runs as `sh -c`)."""
    (text,) = [t for name, t in _play_scripts() if name == "hostc_install"]
    return text


def _lines(files: list[tuple[str, str, bytes]]) -> str:
    """The install command's standard input, as the play writes it: `MODE BASE64 PATH`."""
    import base64

    return "".join(
        f"{mode} {base64.b64encode(data).decode()} {path}\n" for path, mode, data in files
    )


def test_the_play_install_script_never_writes_through_a_link_in_its_root(tmp_path: Path) -> None:
    """The play's install command, run by sh on a host's files (dgx-h100-rke2: units under
    /etc/systemd) against a tmp root whose etc/systemd is an absolute link to a folder
    outside it: nothing is written outside, the run fails naming the link, and the files
    after the first refused one are not written (the first failure stops the rest)."""
    sh = need_tool("sh")
    files = [(a.path, f"{a.mode:04o}", a.data)
             for a in api.emit(example_plan("dgx-h100-rke2"), ["all"])
             if a.path.startswith("/")]  # fmt: skip
    first = next(i for i, f in enumerate(files) if f[0].startswith("/etc/systemd/"))
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "etc").mkdir(parents=True)
    outside.mkdir()
    (root / "etc/systemd").symlink_to(outside)  # absolute: the image's /etc/systemd
    r = subprocess.run(
        [sh, "-c", _install_sh(), "hostc-install", str(root), "root", "root"],
        input=_lines(files), capture_output=True, text=True, timeout=TIMEOUT,
        env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"{root}/etc/systemd is a symbolic link (never followed)" in r.stderr, r.stderr
    assert list(outside.iterdir()) == [], "written through the root's link"
    assert r.stdout.splitlines() == [f"installed {p}" for p, _, _ in files[:first]]
    for path, _, _ in files[first + 1 :]:
        assert not (root / path.lstrip("/")).exists(), f"{path}: written after the refusal"


def test_the_play_install_script_removes_nothing_through_a_link(tmp_path: Path) -> None:
    """The pending mark's removal (`absent - PATH`, hostc_remove) under a root whose
    var/lib is a link: refused, the file outside kept."""
    sh = need_tool("sh")
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "var").mkdir(parents=True)
    (outside / "hostc").mkdir(parents=True)
    (outside / "hostc/ansible-pending").write_text("reboot\n")
    (root / "var/lib").symlink_to(outside)
    before = _tree(outside)
    r = subprocess.run(
        [sh, "-c", _install_sh(), "hostc-install", str(root), "root", "root"],
        input=f"absent - {ansible.PENDING}\n", capture_output=True, text=True, timeout=TIMEOUT,
        env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert r.returncode == 1 and f"{root}/var/lib is a symbolic link" in r.stderr, r.stderr
    assert _tree(outside) == before


def test_the_writer_removes_a_file_or_a_link_never_through_one(tmp_path: Path) -> None:
    """hostc_remove ROOT PATH, the partial's: the file (or a link there, not what it
    points at) removed and said; a missing folder is nothing to remove; a link on the
    way or a folder at PATH is refused."""
    dash = need_tool("dash")
    script = tmp_path / "remove.sh"
    script.write_text(f'set -eu\n{_partial()}hostc_remove "$1" "$2"\necho changed=$hostc_changed\n')
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "etc/x").mkdir(parents=True)
    outside.mkdir()
    (outside / "victim").write_text("kept\n")
    (root / "etc/a").write_text("a\n")
    (root / "etc/l").symlink_to(outside / "victim")
    (root / "var").symlink_to(outside)

    def rm(path: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([dash, str(script), str(root), path], capture_output=True,
                              text=True, timeout=TIMEOUT)  # fmt: skip

    for path, said in (("/etc/a", "yes"), ("/etc/a", "no"), ("/etc/l", "yes"), ("/no/x", "no")):
        r = rm(path)
        assert r.returncode == 0 and r.stdout == f"changed={said}\n", (path, r)
    assert not (root / "etc/l").is_symlink() and (outside / "victim").read_text() == "kept\n"
    r = rm("/var/victim")
    assert r.returncode == 1 and f"{root}/var is a symbolic link" in r.stderr, r.stderr
    r = rm("/etc/x")
    assert r.returncode == 1 and "it is a folder" in r.stderr and (root / "etc/x").is_dir()
    assert (outside / "victim").read_text() == "kept\n" and not (root / "no").exists()
