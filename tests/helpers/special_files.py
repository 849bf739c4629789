"""The writers of hostc aimed at special files (tests/hostile/test_special_files.py), and
the half of that test that runs inside a private mount namespace: `python
tests/helpers/special_files.py WORK` under `unshare --mount --propagation private`."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

LSCPU = "# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n2,2,1,1\n3,3,1,1\n"
SPEC = ROOT / "examples" / "h100-4gpu-inference" / "node.toml"


def _kind(path: Path) -> str:
    mode = os.lstat(path).st_mode
    for test, name in ((stat.S_ISCHR, "chr"), (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "sock")):
        if test(mode):
            return name
    return "regular" if stat.S_ISREG(mode) else "other"


def writers(work: Path, target: Path) -> dict[str, list[str]]:
    """Every command that writes one named file, aimed at `target`."""
    lscpu = work / "lscpu.txt"
    lscpu.write_text(LSCPU)
    root = sysfs(work)
    hostc = [sys.executable, "-m", "hostc"]
    return {
        "import -o": [*hostc, "import", "lscpu", str(lscpu), "--arch", "x86_64", "-o", str(target)],
        "probe -o": [*hostc, "probe", "--root", str(root), "-o", str(target)],
        "probe --capture": [*hostc, "probe", "--root", str(root), "--capture", str(target)],
        # --force: past "exists; not overwritten", to the writer itself
        "init -o": [*hostc, "init", "--root", str(root), "--force", "-o", str(target)],
    }


def sysfs(work: Path) -> Path:
    root = work / "sysfs"
    if not root.exists():
        from sysfs_fixtures import build, smt_host

        build(smt_host(1, 2, 2, 1), root)
    return root


def _tree_target(out: Path) -> Path:
    """Where `hostc build SPEC --target sysctl --out OUT` writes its one file."""
    from hostc import api

    plan, _ = api.compile_file(SPEC)
    (art,) = api.emit(plan, ["sysctl"])
    return out / art.target / art.relpath


def _run(argv: list[str]) -> dict[str, object]:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return {"rc": "timeout", "err": "blocked"}
    return {"rc": r.returncode, "err": r.stderr, "out_bytes": len(r.stdout)}


def cases(work: Path, make: dict[str, object]) -> dict[str, dict[str, object]]:
    """Each writer against each special file `make` creates (name -> maker(path)); what
    it exited with, what it said, and the file's type afterwards."""
    results: dict[str, dict[str, object]] = {}
    for kind, maker in make.items():
        base = work / kind
        base.mkdir()
        target = base / "target"
        for name, argv in writers(work, target).items():
            maker(target)  # type: ignore[operator]
            got = _run(argv)
            results[f"{name} {kind}"] = {**got, "after": _kind(target)}
            target.unlink()
        out = base / "out"
        dest = _tree_target(out)
        dest.parent.mkdir(parents=True)
        maker(dest)  # type: ignore[operator]
        build = [sys.executable, "-m", "hostc", "build", str(SPEC), "--target", "sysctl"]
        got = _run([*build, "--out", str(out)])
        results[f"build --out {kind}"] = {**got, "after": _kind(dest), "target": str(dest)}
        from hostc.delivery.output import write_bytes  # regenerate's and the settings doc's writer

        maker(target)  # type: ignore[operator]
        try:
            write_bytes(target, b"x\n")
            results[f"write_bytes {kind}"] = {"rc": 0, "err": "", "after": _kind(target)}
        except OSError as e:
            results[f"write_bytes {kind}"] = {"rc": 2, "err": str(e), "after": _kind(target)}
        target.unlink()
    return results


def fifo(path: Path) -> None:
    os.mkfifo(path)


def unix_socket(path: Path) -> None:
    """A socket file at `path`, bound by its name from inside its folder: a socket's
    address holds at most 107 bytes, less than a pytest-xdist worker's tmp_path."""
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(path.name)
    finally:
        os.chdir(cwd)


def in_namespace(work: Path) -> None:
    """Run inside `unshare --mount --propagation private`: a tmpfs over /dev with its own
    /dev/null, and over `work`/ns for the build tree; print the results as JSON."""
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/dev"], check=True)
    ns = work / "ns"
    ns.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(ns)], check=True)
    os.mknod("/dev/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))

    def chardev(path: Path) -> None:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))

    results = cases(ns, {"chr": chardev})
    for name, argv in writers(ns, Path("/dev/null")).items():  # the literal /dev/null
        got = _run(argv)
        results[f"{name} /dev/null chr"] = {**got, "after": _kind(Path("/dev/null"))}
    print(json.dumps(results))


#: the machine's own /dev/stdout, rebuilt on the tmpfs over /dev
STDOUT_LINK = "/proc/self/fd/1"


def dev_links_in_namespace(work: Path) -> None:
    """Run inside `unshare --mount --propagation private`: a tmpfs over /dev holding a
    /dev/stdout link as the system makes it; every writer aimed at /dev/stdout (its
    standard output a regular file, which is what the link leads to) and at a new name
    in /dev.  Print, per case, the exit status, the message and what /dev holds after."""
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/dev"], check=True)
    os.mknod("/dev/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    stdout, new = Path("/dev/stdout"), Path("/dev/hostc-new.toml")
    stdout.symlink_to(STDOUT_LINK)
    results: dict[str, dict[str, object]] = {}
    for dest in (stdout, new):
        for name, argv in writers(work, dest).items():
            with (work / "stdout.log").open("wb") as log:
                try:
                    r = subprocess.run(argv, stdout=log, stderr=subprocess.PIPE, timeout=30)
                    got: dict[str, object] = {"rc": r.returncode, "err": r.stderr.decode()}
                except subprocess.TimeoutExpired:
                    got = {"rc": "timeout", "err": "blocked"}
            link = os.readlink(stdout) if stdout.is_symlink() else None
            made = sorted(
                p.name for p in Path("/dev").iterdir() if p.name not in ("null", "stdout")
            )
            results[f"{name} {dest}"] = {**got, "stdout link": link, "made in /dev": made}
            if link != STDOUT_LINK:  # the next case meets /dev as the system has it
                stdout.unlink(missing_ok=True)
                stdout.symlink_to(STDOUT_LINK)
            for p in Path("/dev").iterdir():
                if p.name not in ("null", "stdout"):
                    p.unlink()
    print(json.dumps(results))


if __name__ == "__main__":
    if sys.argv[2:] == ["dev-links"]:
        dev_links_in_namespace(Path(sys.argv[1]))
    else:
        in_namespace(Path(sys.argv[1]))
