"""No exit 3 on any input: a fuzz test over every command's inputs, in process.

Each command gets generated inputs of the kinds that reached exit 3 before (the
error model's gaps): digits that are `isdigit` but not `int`, integers past
Python's digit limit, deep nesting in TOML and JSON, names past NAME_MAX and
paths past PATH_MAX, control, bidi and zero-width characters, odd types where a
table or list belongs.  Every run must end in exit 0, 1 or 2; exit 3 (hostc's
"internal error") or any exception is a bug.

The commands run in this process through click's command object, built once
(`hostc.cli.main.run`, what `main` runs: about a millisecond a call instead of a
subprocess' 300 ms), so CI runs
EXAMPLES (1,000) examples per command.  The long run (not in CI):

    HOSTC_FUZZ_EXAMPLES=100000 python -m pytest -n0 -p no:randomly \\
        tests/hostile/test_fuzz_commands.py
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.cli.main import run
from hostc.diagnostics import HostcError

from conftest import ROOT

EXAMPLES = int(os.environ.get("HOSTC_FUZZ_EXAMPLES", "1000"))
SPEC = (ROOT / "examples/h100-4gpu-inference/node.toml").read_text()
TOPOLOGY = (ROOT / "examples/h100-4gpu-inference/topology.toml").read_text()

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def hostc(argv: list[str], cwd: Path) -> tuple[int, str]:
    """`hostc ARGV` in this process, as `main` runs it: (exit status, stderr)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.StringIO()
    old = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(argv)
    finally:
        os.chdir(old)
    return code, err.getvalue()


# --- hostile pieces ----------------------------------------------------------------------

DIGITS = ["²", "١٢", "１２", "৩", "0", "-1", "9" * 40, "00", "+3", "0x1f", "1_0", "\u0663"]
NUMBERS = ["9" * 5000, "-" + "9" * 4400, "1e400", "nan", "inf", "-0", "0o7", "0b1", "1" * 30]
TEXTS = [
    "",
    "x" * 300,
    "\x1b[31mred\x1b[0m",
    "a\u202eb",
    "a\u200bb",
    "\ufeff",
    "<!-- hidden",
    "`code`",
    "$(id)",
    "../../etc/passwd",
    "/" + "a" * 300,
    "a/" * 2100,
    "\x00",
    "\n",
    "systemd-.service",
    "foo@.service",
    "x.service",
]
RAW_TOML = [
    *NUMBERS,
    *(f'"{t}"' for t in DIGITS),
    "[" * 300 + "]" * 300,
    "{a = " * 200 + "1" + "}" * 200,
    "[[1], {a = 1}]",
    "{}",
    "[]",
    "true",
    '"\\u202e"',
    '"\\u200b"',
    '"\\u001b[2J"',
    "1979-05-27T07:32:00Z",
    '"base.toml"',
    '["base.toml", "base.toml"]',
    '"' + "b/" * 2100 + '"',
    '"' + "y" * 5000 + '"',
]
JSON = [
    "[" * 5000 + "]" * 5000,
    '{"a":' * 3000 + "1" + "}" * 3000,
    "9" * 5000,
    '{"version": ' + "9" * 5000 + "}",
    '{"hostc_plan": 1, "partition": []}',
    "[]",
    "{}",
    "null",
    '"\\ud800"',
    "\xff\xfe",
    "NaN",
]

texts = st.sampled_from(TEXTS) | st.text(max_size=20)
digits = st.sampled_from(DIGITS + NUMBERS) | st.integers(-(2**70), 2**70).map(str)
raw = st.sampled_from(RAW_TOML) | texts.map(
    lambda t: '"' + t.replace("\\", "").replace('"', "") + '"'
)


@st.composite
def toml_text(draw: st.DrawFn, base: str) -> str:
    """`base` with a few lines changed: a value replaced, a line added, a byte broken."""
    lines = base.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["value", "insert", "table", "key"]))
        line = lines[i]
        if how == "value" and "=" in line:
            lines[i] = line.split("=", 1)[0] + "= " + draw(raw)
        elif how == "table":
            lines.insert(
                i, draw(st.sampled_from(["[remove]", "[force]", "[remove.cpu]", "[host]"]))
            )
            lines.insert(
                i + 1, draw(st.sampled_from(["cpu", "sysctl", "x", '"a.b"'])) + " = " + draw(raw)
            )
        elif how == "key":
            lines.insert(
                i, draw(st.sampled_from(["extends", "version", "topology"])) + " = " + draw(raw)
            )
        else:
            lines.insert(i, draw(texts))
    return "\n".join(lines) + "\n"


long_names = st.sampled_from(["a" * 256, "a" * 300, "d/" * 2100 + "x", "x" * 5000, "\x1b]0;t\x07"])
spec_arg = st.sampled_from(["node.toml"]) | long_names


def files(spec: str | None = None, topology: str | None = None) -> dict[str, str]:
    """The spec (with `base.toml` to extend) and its snapshot."""
    return {
        "node.toml": SPEC if spec is None else spec,
        "base.toml": SPEC,
        "topology.toml": TOPOLOGY if topology is None else topology,
    }


Case = tuple[list[str], dict[str, str]]


@st.composite
def layered(draw: st.DrawFn) -> str:
    """A spec that extends base.toml, with `[remove]` or `[force]` entries of any kind."""
    table = draw(st.sampled_from(["remove", "force", "remove.cpu", "remove.workload"]))
    key = draw(st.sampled_from(["cpu", "workload", "hugepages", "sysctl", "x", "vllm"]))
    return f'version = 1\nextends = ["base.toml"]\n[{table}]\n{key} = {draw(raw)}\n'


@st.composite
def spec_commands(draw: st.DrawFn, command: str) -> Case:
    spec = draw(toml_text(SPEC) | st.just(SPEC) | layered())
    topo = draw(st.just(TOPOLOGY) | toml_text(TOPOLOGY)) if spec == SPEC else TOPOLOGY
    args = [command, draw(spec_arg)]
    if command == "build":
        args += draw(
            st.sampled_from(
                [
                    ["--target", "sysctl"],
                    ["--out", "out"],
                    ["--check", "--out", "out"],
                    ["--out", "a" * 300],
                ]
            )
        )
    if command == "plan":
        args += draw(st.sampled_from([[], ["--json"]]))
    return args, files(spec, topo)


@st.composite
def explain_case(draw: st.DrawFn) -> Case:
    what = draw(
        st.sampled_from(["vm.swappiness", "cpu.housekeeping", "/etc/sysctl.d/90-hostc.conf:"])
        | texts
        | digits.map(lambda d: "/etc/sysctl.d/90-hostc.conf:" + d)
        | digits.map(lambda d: "node.toml:" + d)
    )
    return ["explain", draw(spec_arg), what], files(draw(st.just(SPEC) | toml_text(SPEC)))


@st.composite
def diff_case(draw: st.DrawFn) -> Case:
    side = (
        st.sampled_from(["node.toml", "node.toml@HEAD", "plan.json", "node.toml@" + "x" * 300])
        | long_names
    )
    fmt = draw(st.sampled_from([[], ["--json"], ["--format", "html"], ["--format", "markdown"]]))
    plan = draw(
        st.sampled_from(JSON) | texts.map(lambda t: '{{"x": "{}"}}'.format(t.replace('"', "")))
    )
    return ["diff", draw(side), draw(side), *fmt], {**files(), "plan.json": plan}


AUDIT_FILES = [
    "proc/cmdline",
    "proc/sys/vm/swappiness",
    "etc/sysctl.d/99-x.conf",
    "proc/irq/24/smp_affinity_list",
    "proc/irq/²/smp_affinity_list",
    "sys/kernel/mm/transparent_hugepage/enabled",
    "sys/devices/system/cpu/isolated",
    "hostc-capture/systemctl-show/manager",
    "var/lib/kubelet/cpu_manager_state",
    "proc/modules",
]
SYSFS_FILES = [
    "sys/devices/system/cpu/online",
    "sys/devices/system/cpu/possible",
    "sys/devices/system/cpu/cpu0/topology/core_id",
    "sys/devices/system/cpu/cpu0/topology/thread_siblings_list",
    "sys/devices/system/cpu/cpu0/topology/physical_package_id",
    "sys/devices/system/node/node0/cpulist",
    "sys/devices/system/node/node0/meminfo",
    "sys/devices/system/node/node0/distance",
    "proc/cpuinfo",
    "etc/os-release",
    "proc/sys/kernel/osrelease",
]


@st.composite
def tree(draw: st.DrawFn, paths: list[str]) -> dict[str, str]:
    content = st.sampled_from(JSON + TEXTS + DIGITS + NUMBERS) | texts
    picked = draw(st.lists(st.sampled_from(paths), min_size=1, max_size=5, unique=True))
    return {f"root/{p}": draw(content) for p in picked}


@st.composite
def audit_case(draw: st.DrawFn) -> Case:
    where = draw(
        st.sampled_from([["--root", "root"], ["--capture", "capture.tar"], ["--root", "a" * 300]])
    )
    found = {
        **files(),
        **draw(tree(AUDIT_FILES)),
        "capture.tar": draw(st.sampled_from(JSON + TEXTS)),
    }
    return ["audit", "node.toml", *where, *draw(st.sampled_from([[], ["--json"]]))], found


@st.composite
def probe_case(draw: st.DrawFn) -> Case:
    how = draw(
        st.sampled_from(
            [
                ["--root", "root"],
                ["--root", "root", "-o", "out.toml"],
                ["--root", "root", "--capture", "c.tar.gz"],
                ["--root", "capture.tar"],
                ["--root", "root", "--capture", "node.toml", "--spec", "node.toml"],
            ]
        )
    )
    found = {
        **files(),
        **draw(tree(SYSFS_FILES)),
        "capture.tar": draw(st.sampled_from(JSON + TEXTS)),
    }
    return ["probe", *how], found


IMPORT_TEXT = {
    "lscpu": "# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n",
    "numactl": "available: 1 nodes (0)\nnode 0 cpus: 0 1\nnode 0 size: 1024 MB\n"
    "node distances:\nnode 0\n  0: 10\n",
    "nvidia-smi": "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
    "GPU0\t X \tNV18\t0-1\t0\nGPU1\tNV18\t X \t0-1\t0\n",
    "hwloc": '<?xml version="1.0"?><topology version="2.0">'
    '<object type="Machine" os_index="0" cpuset="0x3">'
    '<object type="Package" os_index="0" cpuset="0x3">'
    '<object type="PU" os_index="0" cpuset="0x1"/><object type="PU" os_index="1" cpuset="0x2"/>'
    "</object></object></topology>",
}


@st.composite
def import_case(draw: st.DrawFn) -> Case:
    kind = draw(st.sampled_from(sorted(IMPORT_TEXT)))
    words = IMPORT_TEXT[kind].replace("\n", " \n ").split(" ")
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(words) - 1))
        words[i] = draw(st.sampled_from(DIGITS + NUMBERS + TEXTS) | texts | digits)
    out = draw(st.sampled_from([[], ["-o", "out.toml"], ["-o", "in.txt"], ["-o", "a" * 300]]))
    return ["import", kind, draw(st.just("in.txt") | long_names), *out], {"in.txt": " ".join(words)}


@st.composite
def fleet_case(draw: st.DrawFn) -> Case:
    names = draw(
        st.lists(
            st.sampled_from(["a", "..", ".", "b c", "x" * 250, "-h", "\x1b", "²"]),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    found = {
        f"hosts/{n}/node.toml": draw(st.just(SPEC) | toml_text(SPEC))
        for n in names
        if n not in (".", "..")
    }
    found["hosts/topology.toml"] = TOPOLOGY
    found["list.txt"] = "\n".join(f"hosts/{n}/node.toml" for n in names)
    command = draw(st.sampled_from(["build", "check", "pre-commit"]))
    sel = draw(st.sampled_from(["hosts", "@list.txt", "hosts/*/node.toml"]))
    extra = ["--out", "out"] if command == "build" else []
    return [command, sel, *extra, "-j", "1"], found


@st.composite
def args_case(draw: st.DrawFn) -> Case:
    command = draw(st.sampled_from(["schema", "targets", "schema"]))
    return [command, *draw(st.lists(texts | long_names | digits, max_size=2))], {}


#: per work folder, what _stage last wrote at its top level: (text, mtime) by name
_STAGED: dict[Path, dict[str, tuple[str, int]]] = {}


def _stage(work: Path, found: dict[str, str]) -> None:
    """The case's files in `work`; a top-level file unchanged since the last case (same
    text, not touched by the command) is kept, everything else is removed: cheap."""
    work.mkdir(exist_ok=True)
    staged = _STAGED.setdefault(work, {})
    for name in os.listdir(work):
        path = work / name
        last = staged.pop(name, None)
        if last is not None and found.get(name) == last[0] and _mtime(path) == last[1]:
            staged[name] = last
        elif path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    for rel, text in found.items():
        if rel in staged:
            continue
        path = work / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
        except (OSError, UnicodeEncodeError):
            continue
        if "/" not in rel:
            staged[rel] = (text, _mtime(path))


def _mtime(path: Path) -> int:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime_ns
    except OSError:
        return -1


CASES: dict[str, Callable[[], Any]] = {
    "build": lambda: spec_commands("build"),
    "check": lambda: spec_commands("check"),
    "plan": lambda: spec_commands("plan"),
    "explain": explain_case,
    "diff": diff_case,
    "audit": audit_case,
    "probe": probe_case,
    "import": import_case,
    "fleet": fleet_case,
    "schema-targets": args_case,
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_no_input_ends_in_an_internal_error(command: str, tmp_path_factory: Any) -> None:
    work = tmp_path_factory.mktemp("fuzz-cmd") / "w"

    @FUZZ
    @given(CASES[command]())
    def run(case: Case) -> None:
        argv, found = case
        _stage(work, found)
        code, err = hostc(argv, work)
        shown = [a[:60] for a in argv]
        assert code in (0, 1, 2), (shown, err[-600:])
        assert "Traceback" not in err and "internal error" not in err, (shown, err[-600:])

    run()


#: a key path as diagnostics render it; a named entry is `workload "name"` (one space)
_KEY_PATH = re.compile(r'(?:[A-Za-z0-9_.\-\[\]"]| (?="))*')


@settings(FUZZ, max_examples=min(EXAMPLES, 200))
@given(layered())
def test_every_diagnostic_names_a_key_path_not_a_python_message(spec: str) -> None:
    """A `[remove]` or `[force]` entry of any type is reported at its key path."""
    work = Path(tempfile.mkdtemp(prefix="hostc-layers-"))
    try:
        _stage(work, files(spec))
        try:
            api.compile_file(work / "node.toml")
        except HostcError as e:
            for d in e.diagnostics:
                assert _KEY_PATH.fullmatch(str(d.path)), d
    finally:
        shutil.rmtree(work)
