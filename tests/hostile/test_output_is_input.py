"""Every writer guards output = input: whatever a command's output path names among the
files that command reads (its spec, a spec it extends, its snapshot, a file of the
probed tree, an import source or --base), the file is left as it was and the command
says why (exit 2).  One rule for all writers: `inputs.session` remembers what the
command read, and `refusals.refuse_special`, which every destination passes, refuses it."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc.cli.main import run

import sysfs_fixtures
from conftest import ROOT

EXAMPLE = ROOT / "examples/h100-4gpu-inference"
_TREE = sysfs_fixtures.build(
    sysfs_fixtures.two_socket_gpu_host(), Path(tempfile.mkdtemp(prefix="hostc-in-out-"))
)
SMI = "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-1\t0\n"

#: (command line with OUT where the output goes, the inputs OUT may name)
COMMANDS = [
    (
        ["probe", "--root", "root", "--capture", "OUT", "--spec", "node.toml"],
        ["node.toml", "base.toml", "topology.toml", "root/sys/devices/system/cpu/online"],
    ),
    (
        ["probe", "--root", "root", "--capture", "OUT"],
        ["root/sys/devices/system/cpu/online", "root/sys/devices/system/node/node1/cpulist"],
    ),
    (["probe", "--root", "root", "-o", "OUT"], ["root/sys/devices/system/node/node0/cpulist"]),
    (["import", "nvidia-smi", "smi.txt", "--base", "topology.toml", "-o", "OUT"], ["smi.txt"]),
    (
        ["import", "nvidia-smi", "smi.txt", "--base", "topology.toml", "-o", "OUT"],
        ["topology.toml"],
    ),
]


def _stage(work: Path) -> None:
    shutil.copytree(_TREE, work / "root", symlinks=True)
    spec = (EXAMPLE / "node.toml").read_text()
    (work / "base.toml").write_text(spec)
    (work / "node.toml").write_text('version = 1\nextends = ["base.toml"]\n')
    (work / "topology.toml").write_text((EXAMPLE / "topology.toml").read_text())
    (work / "smi.txt").write_text(SMI)


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(st.sampled_from(COMMANDS).flatmap(lambda c: st.tuples(st.just(c[0]), st.sampled_from(c[1]))))
def test_no_command_overwrites_a_file_it_read(case: tuple[list[str], str]) -> None:
    argv, target = case
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        _stage(work)
        before = (work / target).read_bytes()
        argv = [target if a == "OUT" else a for a in argv]
        err = io.StringIO()
        cwd = Path.cwd()
        os.chdir(work)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = run(argv)
        finally:
            os.chdir(cwd)
        assert (work / target).read_bytes() == before, (argv, err.getvalue()[-300:])
        assert code == 2, (argv, err.getvalue()[-300:])
        assert target.rsplit("/", 1)[-1] in err.getvalue()
