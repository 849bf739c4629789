"""hostc's speed figures, measured side by side in one run: `python benchmarks/run.py [--quick]`.

P1    cold `hostc build <DGX example> --target all --out DIR`, wall time ÷ `python -c pass`
      (bytecode cached, as a pip install has it; P1' shows the same without .pyc files)
P1d   the same build ÷ importing hostc's own dependencies (typer, cattrs, jinja2, attrs,
      tomli, tomli_w): what hostc itself adds to start-up; by wall clock, by CPU time, and
      by instructions (callgrind, where valgrind is installed: the one start-up figure a
      busy machine does not move; full run only, it costs ~20 s of CPU); and what
      hostc/__main__.py's start-up apparatus earns (the same build through the plain
      interpreter's start and end) and its generated-code cache (the same build
      without it): under 10 % each must go
P2    in-process builds per second, every target, from files (api.compile_file +
      api.emit) of 100 distinct hosts in turn, sharing one hardware snapshot as a fleet's
      node class does (P2' gives each host its own snapshot), per second of CPU time
P3a   `hostc import hwloc` of an 8,192-PU export ÷ a 64-PU one
P3b   `hostc build` on an 8,192-CPU snapshot ÷ a 64-CPU one
P4    peak RSS of any command above (ru_maxrss of each child, from wait4)
Fleet 1,000 distinct hosts in one command, CPU a host; 10,000 hosts' wall time
floor a build ÷ reading its spec + rendering its files from ready contexts + writing them
peers Ansible's template module rendering the same files (check mode), CPU a host ÷
      hostc's; TuneD's profile loader on this same interpreter (a reference, no goal)
F2-F4 the fleet build ÷ single-host commands, --jobs 2 ÷ 1, its peak memory (benchmarks/fleet.py)
H1-H3 hostile shapes (benchmarks/hostile.py): a tree of hard links, an `extends` diamond,
      the picture of a dense GPU-NIC matrix: each bounded by its input, not by its paths
K0-K5 content keys (benchmarks/keys.py): `diff DIR@REV DIR`, `changed`, a rebuild with
      nothing changed and after a one-class edit, `pre-commit`, at 1,000 and 10,000
      hosts, each beside the full path (the keys off); K6/K7 a fresh fleet host in
      instructions (callgrind) and system calls (strace), 300 − 100 hosts ÷ 200

Commands run through the `hostc` console script next to this interpreter (what
users run) and are interleaved with their baseline, so a noisy machine slows
both sides of a ratio alike; every figure is a median over repeated runs.  Wall
and CPU figures are only final on a quiet machine; instruction counts are final
anywhere.  The exit status is 1 when a figure misses its goal, so CI can gate on it.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import peers
from hosts import DGX, DISTINCT, ROOT, distinct_hosts, hostc_command
from rows import Row, table

SMALL = (2, 1, 16, 2)  # packages, NUMA nodes per package, cores per NUMA node, PUs per core
BIG = (16, 2, 128, 2)
MEMORY = "64GB"  # per NUMA node, decimal as lstopo reads it
SPEC = """\
version = 1

[host]
name = "bench"
role = "inference"

[cpu]
housekeeping_per_node = 2
isolate = "rest"

[hugepages]
size = "2M"
total = 64
"""


@dataclass
class Runner:
    """Runs commands, keeping every child's peak RSS (wait4 gives it per child)."""

    peak_kib: int = 0
    peak_what: str = ""

    env: dict[str, str] | None = None

    def run(
        self, argv: Sequence[str], what: str, env: dict[str, str] | None = None
    ) -> tuple[float, float]:
        """Wall seconds and CPU seconds (user + system) of one run."""
        with tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env or self.env)
            _, status, usage = os.wait4(p.pid, 0)
            elapsed = time.perf_counter() - t0
            p.returncode = os.waitstatus_to_exitcode(status)
            if p.returncode != 0:
                err.seek(0)
                raise SystemExit(
                    f"benchmark command failed ({p.returncode}): {' '.join(map(str, argv))}\n"
                    + err.read().decode(errors="replace")
                )
        if usage.ru_maxrss > self.peak_kib:  # KiB on Linux
            self.peak_kib, self.peak_what = usage.ru_maxrss, what
        return elapsed, usage.ru_utime + usage.ru_stime


#: The libraries a build needs, imported bare: P1d's baseline.
DEPENDENCIES = "import typer, cattrs, jinja2, attrs, tomli, tomli_w"

#: The same command without hostc/__main__.py's start-up apparatus (the collector on
#: during the imports, the interpreter's finalization at the end): what it earns.
PLAIN = "import sys; from hostc.cli.main import main; sys.argv[0] = 'hostc'; main()"

#: The same command through hostc/__main__.py's collector and exit, without its
#: generated-code cache (hostc/cli/codecache.py): what the cache earns.
NO_CODE_CACHE = (
    "import gc, os, sys; gc.disable(); from hostc.cli.main import run; gc.freeze(); "
    "gc.enable(); sys.argv[0] = 'hostc'; code = run(); sys.stdout.flush(); "
    "sys.stderr.flush(); os._exit(code)"
)

#: P1': the build from a copy of hostc's sources that holds no bytecode, bytecode writing
#: off (a fresh dev tree under PYTHONDONTWRITEBYTECODE): hostc's modules are compiled on
#: every run, the dependencies' bytecode is read from their install as usual.  The copy
#: comes first on sys.path, before the installed (or editable) hostc.
NO_PYC = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'hostc'; "
    "from hostc.__main__ import main; main()"
)


def bytecode_free_copy(work: Path) -> Path:
    """hostc's package as the install lays it out (compiler/ as hostc, targets/ as
    hostc.targets), copied without a `__pycache__`: a tree that has never kept bytecode.
    Reading the checkout itself would find whatever .pyc (and generated-code cache) an
    earlier run left there and measure a warm start."""
    skip = shutil.ignore_patterns("__pycache__")
    site = work / "no-pyc"
    shutil.copytree(ROOT / "compiler", site / "hostc", ignore=skip)
    shutil.copytree(ROOT / "targets", site / "hostc" / "targets", ignore=skip)
    return site


def interleaved(
    runner: Runner,
    repeats: int,
    commands: Mapping[str, tuple[Sequence[str], dict[str, str] | None]],
) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall and CPU time of each command, run in turn (after an untimed round).
    `{run}` in an argument is the round's number: a build given `--out DIR/{run}` writes
    into a new folder each time (a cold build into an empty --out, as an image pipeline
    makes it), not over the previous round's output (an update: the old record read,
    every file compared and replaced; as fast within the noise, 40 farm-bench pairs,
    but not the command the row names)."""
    wall: dict[str, list[float]] = {k: [] for k in commands}
    cpu: dict[str, list[float]] = {k: [] for k in commands}
    for i in range(repeats + 1):
        for name, (argv, env) in commands.items():
            w, c = runner.run([a.replace("{run}", str(i)) for a in argv], name, env)
            if i:
                wall[name].append(w)
                cpu[name].append(c)
    return (
        {k: statistics.median(v) for k, v in wall.items()},
        {k: statistics.median(v) for k, v in cpu.items()},
    )


def in_process(fn: Callable[[], object], repeats: int) -> float:
    """Median CPU seconds of one call, after a warm-up call."""
    fn()
    samples = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        samples.append(time.process_time() - t0)
    return statistics.median(samples)


def worker(task: str, args: list[str]) -> tuple[float, ...]:
    """In-process figures, run in a child of their own: the parent stays small, so the
    peak RSS that wait4 reports for a command is that command's own (a child forked from
    a big parent counts the parent's pages until it execs)."""
    from hostc import api

    repeats = int(args[0])
    if task == "floor":
        from fleet import floor

        return floor(repeats, Path(args[1]))
    if task == "builds-per-second":
        window, shared = float(args[1]), args[2] == "shared"
        specs = itertools.cycle(distinct_hosts(Path(args[3]), shared))

        def one_build() -> None:
            plan, _ = api.compile_file(next(specs))
            api.emit(plan, ["all"])

        one_build()
        rates, wall_rates = [], []
        for _ in range(repeats):
            n, t0, w0 = 0, time.process_time(), time.perf_counter()
            while (elapsed := time.process_time() - t0) < window:
                one_build()
                n += 1
            rates.append(n / elapsed)
            wall_rates.append(n / (time.perf_counter() - w0))
        return statistics.median(rates), statistics.median(wall_rates)
    small, big = Path(args[1]), Path(args[2])
    if task == "import-ratio":

        def importer(xml: Path) -> Callable[[], object]:
            text = xml.read_text()
            return lambda: api.dumps_snapshot(
                api.import_source("hwloc", text, file=str(xml), arch="x86_64")
            )

        f_small, f_big = importer(small), importer(big)
    else:
        spec = Path(args[3])

        def builder(snap: Path) -> Callable[[], object]:
            return lambda: api.emit(api.compile_file(spec, snap)[0], ["all"])

        f_small, f_big = builder(small), builder(big)
    return (in_process(f_big, max(1, repeats // 3)) / in_process(f_small, repeats),)


def in_worker(task: str, *args: object) -> list[float]:
    r = subprocess.run(
        [sys.executable, __file__, "--worker", task, *map(str, args)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise SystemExit(f"benchmark worker {task} failed:\n{r.stderr}")
    return [float(x) for x in r.stdout.split()]


def hwloc_exports(work: Path, force_python: bool) -> tuple[Path, Path, str]:
    lstopo = None if force_python else shutil.which("lstopo")
    out = []
    for name, (pack, numa, core, pu) in (("small", SMALL), ("big", BIG)):
        path = work / f"{name}.xml"
        if lstopo:
            shape = f"pack:{pack} numa:{numa}(memory={MEMORY}) core:{core} pu:{pu}"
            subprocess.run(
                [lstopo, "--if", "synthetic", "--input", shape, "--of", "xml", str(path)],
                check=True,
            )
        else:
            gen = Path(__file__).with_name("hwloc_synth.py")
            with path.open("w") as f:
                subprocess.run(
                    [sys.executable, str(gen), *map(str, (pack, numa, core, pu))],
                    stdout=f,
                    check=True,
                )
        out.append(path)
    how = "lstopo --if synthetic" if lstopo else "benchmarks/hwloc_synth.py (no lstopo)"
    return out[0], out[1], how


def earns(
    figure: str,
    t: dict[str, float],
    cpu: dict[str, float],
    fast: str,
    slow: str,
    what: str,
    verdict: bool = True,
) -> Row:
    """What a start-up speed trick earns: `fast` (with it) against `slow` (without);
    `verdict=False` where another row judges it."""
    gain = 1 - t[fast] / t[slow]
    gain_cpu = 1 - cpu[fast] / cpu[slow]
    return Row(
        figure,
        f"{gain:.1%}",
        "≥ 10 % (else remove it)" if verdict else "(info)",
        gain >= 0.10 if verdict else None,
        f"CPU {gain_cpu:.1%}; {what} (quiet machine only)",
    )


def p1d_instructions(
    hostc: list[str], work: Path, env: dict[str, str], quick: bool
) -> tuple[Row, Row]:
    """P1d by instruction count (callgrind): a figure machine noise does not move; and
    what the generated-code cache earns by the same count."""
    figure, goal = "P1d the same, instructions", "≤ 1.7×"
    cache_figure = "P1d generated-code cache earns, instructions"
    cache_goal = "≥ 10 % (else remove it)"
    if quick:
        why = "full run only (callgrind costs ~30 s of CPU)"
        return Row(figure, "—", goal, None, why), Row(cache_figure, "—", cache_goal, None, why)
    args = ["build", str(DGX), "--target", "all", "--out"]
    build = peers.instructions([*hostc, *args, str(work / "p1-ir")], env)
    uncached = peers.instructions(
        [sys.executable, "-c", NO_CODE_CACHE, *args, str(work / "p1-ir-nc")], env
    )
    deps = peers.instructions([sys.executable, "-c", DEPENDENCIES], env)
    if build is None or deps is None or uncached is None:
        why = "skipped: valgrind is not installed"
        return Row(figure, "—", goal, None, why), Row(cache_figure, "—", cache_goal, None, why)
    ratio = build / deps
    gain = 1 - build / uncached
    return (
        Row(
            figure,
            f"{ratio:.2f}×",
            goal,
            ratio <= 1.7,
            f"{build / 1e6:,.1f} M vs {deps / 1e6:,.1f} M instructions (valgrind "
            "--tool=callgrind; repeat runs agree to 0.1 %)",
        ),
        Row(
            cache_figure,
            f"{gain:.1%}",
            cache_goal,
            gain >= 0.10,
            f"{build / 1e6:,.1f} M vs {uncached / 1e6:,.1f} M instructions: the build vs the "
            "same through the collector and exit without hostc/cli/codecache.py (the wall "
            "row above is what a user feels; this one no machine noise moves)",
        ),
    )


def ansible_row(work: Path, quick: bool, hostc_per_host: float) -> Row:
    """Ansible's template module rendering one DGX host's files, CPU a host ÷ hostc's."""
    figure, goal = "peer Ansible template ÷ hostc, CPU a host", "≥ 100×"
    if quick:
        return Row(figure, "—", goal, None, "full run only (Ansible costs ~0.5 s of CPU a file)")
    # one build's output: P1's first round (each round writes a folder of its own)
    files = sorted(p for p in (work / "p1" / "0").rglob("*") if p.is_file())
    per_host, note = peers.ansible_cpu_per_host(work, files, hosts=2)
    if per_host is None:
        return Row(figure, "—", goal, None, note)
    ratio = per_host / hostc_per_host
    return Row(
        figure,
        f"{ratio:,.0f}×",
        goal,
        ratio >= 100,
        f"{per_host:.2f} s vs {hostc_per_host * 1e3:.1f} ms (the Fleet row); Ansible: {note},"
        f" the {len(files)} files a DGX build writes",
    )


def measure(quick: bool, force_python: bool) -> list[Row]:
    repeats = 2 if quick else 11
    hostc = hostc_command()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="hostc-bench-") as tmp:
        work = Path(tmp)
        # Bytecode cached, as in a pip install; kept out of the tree (and on even where
        # PYTHONDONTWRITEBYTECODE is set); the warm-up round fills it.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        runner = Runner(env=env)

        # P1: cold build of the DGX example next to a bare interpreter
        t, cpu = interleaved(
            runner,
            repeats,
            {
                "python -c pass": ([sys.executable, "-c", "pass"], None),
                "dependencies": ([sys.executable, "-c", DEPENDENCIES], None),
                "hostc build (DGX)": (
                    [*hostc, "build", str(DGX), "--target", "all", "--out", f"{work}/p1/{{run}}"],
                    None,
                ),
                "plain process": (
                    [
                        sys.executable,
                        "-c",
                        PLAIN,
                        "build",
                        str(DGX),
                        "-t",
                        "all",
                        "-o",
                        f"{work}/p1p/{{run}}",
                    ],
                    None,
                ),
                "no code cache": (
                    [
                        sys.executable,
                        "-c",
                        NO_CODE_CACHE,
                        "build",
                        str(DGX),
                        "-t",
                        "all",
                        "-o",
                        f"{work}/p1c/{{run}}",
                    ],
                    None,
                ),
                "no .pyc": (
                    [
                        sys.executable,
                        "-c",
                        NO_PYC,
                        str(bytecode_free_copy(work)),
                        "build",
                        str(DGX),
                        "-t",
                        "all",
                        "-o",
                        f"{work}/p1b/{{run}}",
                    ],
                    {
                        k: v
                        for k, v in {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}.items()
                        if k != "PYTHONPYCACHEPREFIX"
                    },
                ),
            },
        )
        ratio = t["hostc build (DGX)"] / t["python -c pass"]
        rows.append(
            Row(
                "P1 cold build ÷ python -c pass",
                f"{ratio:.1f}×",
                "≤ 12× (stretch 6×)",
                ratio <= 12,
                f"{t['hostc build (DGX)'] * 1e3:.0f} ms vs {t['python -c pass'] * 1e3:.0f} ms; "
                f"CPU time {cpu['hostc build (DGX)'] / cpu['python -c pass']:.1f}×",
            )
        )
        ratio = t["hostc build (DGX)"] / t["dependencies"]
        note = f"{t['hostc build (DGX)'] * 1e3:.0f} ms vs {t['dependencies'] * 1e3:.0f} ms"
        rows.append(
            Row(
                "P1d cold build ÷ importing hostc's dependencies, wall",
                f"{ratio:.2f}×",
                "≤ 1.5× (stretch 1.3×)",
                ratio <= 1.5,
                f"{note} for `python -c '{DEPENDENCIES}'`: what hostc adds beyond the "
                "libraries it needs (quiet machine only)",
            )
        )
        ratio = cpu["hostc build (DGX)"] / cpu["dependencies"]
        rows.append(
            Row(
                "P1d the same, CPU time",
                f"{ratio:.2f}×",
                "≤ 1.5× (stretch 1.3×)",
                ratio <= 1.5,
                f"{cpu['hostc build (DGX)'] * 1e3:.0f} ms vs {cpu['dependencies'] * 1e3:.0f} ms "
                "of CPU",
            )
        )
        instructions, cache_instructions = p1d_instructions(hostc, work, env, quick)
        rows.append(instructions)
        rows.append(
            earns(
                "P1d start-up apparatus earns, wall",
                t,
                cpu,
                "no code cache",
                "plain process",
                "the build with hostc/__main__.py's collector and exit (no code cache) vs "
                f'`python -c "{PLAIN}"`',
            )
        )
        rows.append(
            earns(
                "P1d generated-code cache earns, wall",
                t,
                cpu,
                "hostc build (DGX)",
                "no code cache",
                "the build vs the same through the collector and exit without "
                "hostc/cli/codecache.py; judged by its instructions (next row)",
                verdict=False,
            )
        )
        rows.append(cache_instructions)
        ratio = t["no .pyc"] / t["python -c pass"]
        rows.append(
            Row(
                "P1' same, no .pyc written",
                f"{ratio:.1f}×",
                "(info)",
                None,
                f"{t['no .pyc'] * 1e3:.0f} ms; a copy of hostc's sources without "
                "__pycache__, PYTHONDONTWRITEBYTECODE=1 (a fresh dev tree, or this "
                "environment): hostc's modules compiled on each run, the dependencies' "
                "bytecode read from their install",
            )
        )

        # P2: in-process builds per second, from files, every target
        window = 0.25 if quick else 1.0
        (work / "p2").mkdir()
        rate, wall_rate = in_worker("builds-per-second", repeats, window, "shared", work / "p2")
        rows.append(
            Row(
                "P2 in-process builds/s (DGX, all targets)",
                f"{rate:,.0f}/s",
                "(info)",
                None,
                f"{1e6 / rate:.0f} µs of CPU per build; {wall_rate:,.0f}/s by the wall clock; "
                f"{DISTINCT} distinct hosts in turn, each spec read and parsed, one shared "
                "hardware snapshot (a fleet's node class)",
            )
        )
        (work / "p2-cold").mkdir()
        cold, _ = in_worker("builds-per-second", repeats, window, "own", work / "p2-cold")
        rows.append(
            Row(
                "P2' same, each host its own snapshot",
                f"{cold:,.0f}/s",
                "(info)",
                None,
                f"{1e6 / cold:.0f} µs of CPU per build: nothing read before, the snapshot's "
                "parse and checks included",
            )
        )

        # P3a: import hwloc, big ÷ small
        small_xml, big_xml, how = hwloc_exports(work, force_python)
        snaps = {n: work / f"{n}.toml" for n in ("small", "big")}
        imports = {
            f"import {n}": (
                [*hostc, "import", "hwloc", str(x), "--arch", "x86_64", "-o", str(snaps[n])],
                None,
            )
            for n, x in (("small", small_xml), ("big", big_xml))
        }
        t, cpu = interleaved(runner, repeats, imports)
        ratio = t["import big"] / t["import small"]
        (ip,) = in_worker("import-ratio", repeats, small_xml, big_xml)
        rows.append(
            Row(
                "P3a import hwloc 8,192 PU ÷ 64 PU",
                f"{ratio:.1f}×",
                "≤ 10×",
                ratio <= 10,
                f"{t['import big'] * 1e3:.0f} ms vs {t['import small'] * 1e3:.0f} ms; "
                f"CPU time {cpu['import big'] / cpu['import small']:.1f}×; "
                f"in-process {ip:.0f}×; {how}",
            )
        )

        # P3b: build, big snapshot ÷ small
        spec = work / "node.toml"
        spec.write_text(SPEC)
        builds = {
            f"build {n}": (
                [
                    *hostc,
                    "build",
                    str(spec),
                    "--topology",
                    str(snaps[n]),
                    "--target",
                    "all",
                    "--out",
                    str(work / f"out-{n}"),
                ],
                None,
            )
            for n in ("small", "big")
        }
        t, cpu = interleaved(runner, repeats, builds)
        ratio = t["build big"] / t["build small"]
        (ip,) = in_worker("build-ratio", repeats, snaps["small"], snaps["big"], spec)
        rows.append(
            Row(
                "P3b build 8,192 CPUs ÷ 64 CPUs",
                f"{ratio:.1f}×",
                "≤ 10×",
                ratio <= 10,
                f"{t['build big'] * 1e3:.0f} ms vs {t['build small'] * 1e3:.0f} ms; "
                f"CPU time {cpu['build big'] / cpu['build small']:.1f}×; "
                f"in-process {ip:.0f}×",
            )
        )

        # P4: the largest child
        mib = runner.peak_kib / 1024
        rows.append(
            Row(
                "P4 peak RSS of any command",
                f"{mib:.1f} MiB",
                "≤ 64 MiB",
                mib <= 64,
                runner.peak_what,
            )
        )

        # H1: `hostc audit --root` of a hostile tree (issue 32): 400 hard links to one
        # 4 MiB sysctl.d file cost one read and one parse (before: 1.6 GB, minutes)
        from hostile import extends_diamond_row, hostile_tree_row, picture_row

        rows.append(Row(*hostile_tree_row(work / "h1")))
        # H2: an `extends` diamond as deep as allowed (2**15 paths to its base): each file
        # merged once
        rows.append(Row(*extends_diamond_row(work / "h2")))
        # H3: the topology picture of 256 GPUs × 256 NICs (65,536 links): linear in links
        rows.append(Row(*picture_row()))

        # the fleet, its floor, and the peers
        from fleet import figures

        fleet_rows, per_host = figures(hostc, work, quick)
        rows += [Row(*r) for r in fleet_rows[:3]]
        build, whole, renders, read = in_worker("floor", repeats, work / "floor")
        ratio = build / whole
        rows.append(
            Row(
                "floor a build ÷ reading its spec, rendering and writing its files",
                f"{ratio:.2f}×",
                "≤ 2.5×",
                ratio <= 2.5,
                f"{build * 1e6:,.0f} vs {whole * 1e6:,.0f} µs of CPU (renders from ready "
                f"contexts {renders * 1e6:,.0f}, the spec read {read * 1e6:,.0f}, the rest "
                "writing the same bytes); DGX, distinct hosts, one shared snapshot",
            )
        )
        rows.append(ansible_row(work, quick, per_host))
        tuned, note = peers.tuned_rate(work, 0.5 if quick else 2.0)
        rows.append(
            Row(
                "peer TuneD profile loads/s, same interpreter",
                "—" if tuned is None else f"{tuned:,.0f}/s",
                "(reference)",
                None,
                note
                if tuned is None
                else f"{note}; hostc {rate:,.0f} builds/s (P2) on the same interpreter, "
                f"{rate / tuned:.2f}× its rate: the loader merges two INI profiles and writes "
                "nothing, a build renders 18 files",
            )
        )
        rows += [Row(*r) for r in fleet_rows[3:]]

        # content keys (issue 56): the review and rebuild of a one-class edit, fast path
        # beside the full path; a fresh host in instructions and system calls
        from keys import command_rows, per_host_rows

        for n in (50,) if quick else (1000, 10_000):
            found = command_rows(hostc, work / f"keys-{n}", n, full_diff=n < 10_000)
            rows += [Row(*r) for r in found]
        rows += [Row(*r) for r in per_host_rows(hostc, work, quick)]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (CI smoke run)")
    ap.add_argument(
        "--python-hwloc",
        action="store_true",
        help="generate the hwloc exports in Python even when lstopo is installed",
    )
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(*worker(args.worker[0], args.worker[1:]))
        return 0
    rows = measure(args.quick, args.python_hwloc)
    print(
        f"hostc benchmarks ({'quick' if args.quick else 'full'}; {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]})"
    )
    print(table(rows))
    return 0 if all(r.ok is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
