"""Fleet figures for benchmarks/run.py: a thousand distinct hosts in one command.

F1  one host's build (all targets, in-process) ÷ TuneD's loader loading one profile; the
    note says how much of a build is rendering its templates alone (`render_share`)
F2  `hostc build DIR --jobs 2` over 1,000 hosts ÷ a loop of single-host commands (a
    sample of SAMPLE single-host runs, timed and extrapolated to the whole fleet)
F3  the same build with --jobs 2 ÷ --jobs 1 (the two-core speed-up)
F4  peak memory of the 1,000-host build: the parent's peak plus `jobs` × the largest
    worker's (each process's ru_maxrss, so an upper bound of what was resident at once)

The hosts are generated into a temporary directory: four node classes (the
examples' hardware), each host extending one and overriding a few values.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOSTS = 1000
SAMPLE = 20

#: class name → (example whose topology it uses, the class's own tables)
CLASSES = {
    "dgx-inference": (
        "dgx-h100-inference",
        'role = "inference"\n\n[[workload]]\nname = "serve-a"\ngpus = ["GPU0", "GPU1"]\n\n'
        '[[workload]]\nname = "serve-b"\ngpus = ["GPU2", "GPU3"]\n\n'
        '[cpu]\nhousekeeping_per_node = 4\nisolate = "workload"\n\n[irq]\nowner = "hostc"\n',
    ),
    "h100-inference": (
        "h100-4gpu-inference",
        'role = "inference"\n\n[[workload]]\nname = "vllm"\ngpus = ["GPU0", "GPU1"]\n\n'
        '[cpu]\nhousekeeping_per_node = 2\nisolate = "workload"\n',
    ),
    "epyc-training": ("epyc-1s-training", 'role = "training"\n\n[runtime]\nowner = "tuned"\n'),
    "epyc-rhel9": (
        "epyc-rhel9-inference",
        'role = "inference"\n\n[[workload]]\nname = "triton"\ngpus = ["GPU0", "GPU1"]\n\n'
        '[cpu]\nhousekeeping_per_node = 2\nisolate = "workload"\n',
    ),
}


def generate(work: Path, count: int = HOSTS) -> Path:
    """`count` host specs in work/hosts, spread over the four classes in work/classes."""
    (work / "classes").mkdir(parents=True)
    (work / "hosts").mkdir()
    for name, (example, body) in CLASSES.items():
        topo = ROOT / "examples" / example / "topology.toml"
        head = f'version = 1\n\n[host]\nname = "{name}"\ntopology = "{topo}"\n'
        # the body starts with `role = …`, which belongs to [host]: it follows the head
        (work / "classes" / f"{name}.toml").write_text(head + body)
    names = list(CLASSES)
    for i in range(count):
        cls = names[i % len(names)]
        extra = f'\n[sysctl]\n"vm.swappiness" = {i % 7 + 1}\n' if i % 3 == 0 else ""
        if i % 5 == 0:
            extra += f"\n[limits]\nnofile = {1048576 + i}\n"
        (work / "hosts" / f"{cls}-{i:04d}.toml").write_text(
            f'extends = ["../classes/{cls}.toml"]\n\n[host]\nname = "{cls}-{i:04d}"\n{extra}'
        )
    return work / "hosts"


MEASURE = """\
import resource, sys, time
from hostc.cli import main
sys.argv = ["hostc", *sys.argv[1:]]
t0 = time.perf_counter()
try:
    main()
except SystemExit as e:
    code = e.code
else:
    code = 0
wall = time.perf_counter() - t0
me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(wall, me, kids, code, file=sys.stderr)
"""


def fleet_build(hosts: Path, out: Path, jobs: int) -> tuple[float, int, int]:
    """Wall seconds, the parent's peak KiB and the largest worker's peak KiB."""
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            MEASURE,
            "build",
            str(hosts),
            "--target",
            "all",
            "--out",
            str(out),
            "--jobs",
            str(jobs),
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    last = r.stderr.strip().splitlines()[-1].split()
    if r.returncode != 0 or last[3] != "0":
        raise SystemExit(f"fleet build failed:\n{r.stderr[-2000:]}")
    return float(last[0]), int(last[1]), int(last[2])


def single_loop(hostc: list[str], hosts: Path, out: Path, sample: int = SAMPLE) -> float:
    """Seconds for `sample` single-host commands, one host each (spread over the classes)."""
    specs = sorted(hosts.glob("*.toml"))
    step = max(1, len(specs) // sample)
    chosen = specs[::step][:sample]
    t0 = time.perf_counter()
    for spec in chosen:
        subprocess.run(
            [*hostc, "build", str(spec), "--target", "all", "--out", str(out / spec.stem), "-q"],
            check=True,
            capture_output=True,
        )
    return time.perf_counter() - t0


def render_share(repeats: int) -> tuple[float, float, float]:
    """CPU seconds of (one DGX build's template renders alone, reading its spec alone:
    TOML parse and the converter, the whole build), in this process.  The renders are
    replayed from the contexts the build passed (recorded by wrapping jinja2's
    Template.render for one emit): what rendering costs whatever the compiler and the
    targets' Python do around it.  Renders and reading the spec are the floor of any
    build that reads the same spec and prints the same files through the same templates."""
    import statistics

    import jinja2

    from hostc import api

    spec = ROOT / "examples" / "dgx-h100-inference" / "node.toml"
    plan, _ = api.compile_file(spec)
    seen: list[tuple[jinja2.Template, tuple[object, ...], dict[str, object]]] = []
    real = jinja2.Template.render

    def spy(self: jinja2.Template, *args: object, **kwargs: object) -> str:
        seen.append((self, args, kwargs))
        return real(self, *args, **kwargs)

    jinja2.Template.render = spy  # type: ignore[method-assign]
    try:
        api.emit(plan, ["all"])
    finally:
        jinja2.Template.render = real  # type: ignore[method-assign]

    def renders() -> None:
        for template, args, kwargs in seen:
            real(template, *args, **kwargs)

    def build() -> None:
        api.emit(api.compile_file(spec)[0], ["all"])

    from hostc.spec.load import from_data, parse

    text = spec.read_text()

    def load() -> None:
        from_data(parse(text, str(spec)), str(spec), text)

    def cpu(fn: object, n: int = 50) -> float:
        assert callable(fn)
        fn()
        samples = []
        for _ in range(max(3, repeats)):
            t0 = time.process_time()
            for _ in range(n):
                fn()
            samples.append((time.process_time() - t0) / n)
        return statistics.median(samples)

    return cpu(renders), cpu(load), cpu(build)


def figures(
    hostc: list[str],
    work: Path,
    quick: bool,
    build_rate: float,
    tuned: float | None,
    share: tuple[float, float, float],
) -> list[tuple[str, str, str, bool | None, str]]:
    """The fleet rows: (figure, value, goal, ok, note).  `build_rate`: P2's in-process
    builds per CPU-second; `tuned`: TuneD's profile loads per second (None: no TuneD);
    `share`: `render_share`'s CPU seconds (renders alone, reading the spec alone, a build)."""
    rows: list[tuple[str, str, str, bool | None, str]] = []
    if tuned is None:
        rows.append(
            (
                "F1 one host's build ÷ TuneD loading one profile",
                "—",
                "≥ 2×",
                None,
                "skipped: TuneD is not installed",
            )
        )
    else:
        ratio = build_rate / tuned
        rows.append(
            (
                "F1 one host's build ÷ TuneD loading one profile",
                f"{ratio:.1f}×",
                "≥ 2×",
                ratio >= 2,
                f"{build_rate:,.0f} builds/s (P2: all targets, in-process, each host's spec "
                f"parsed, its class's snapshot shared) vs {tuned:,.0f} profile loads/s; "
                f"the goal leaves {1e6 / (2 * tuned):.0f} µs per build; of a "
                f"{share[2] * 1e6:.0f} µs build, rendering its templates alone from ready "
                f"contexts takes {share[0] * 1e6:.0f} µs and reading its spec alone (TOML "
                f"and the converter) {share[1] * 1e6:.0f} µs, together "
                f"{(share[0] + share[1]) * 2 * tuned:.0%} of that budget",
            )
        )
    count, sample = (200, 5) if quick else (HOSTS, SAMPLE)
    hosts = generate(work / "fleet", count)
    two, parent_kib, worker_kib = fleet_build(hosts, work / "fleet-out-2", 2)
    one, one_kib, _ = fleet_build(hosts, work / "fleet-out-1", 1)
    loop = single_loop(hostc, hosts, work / "fleet-single", sample) * count / sample
    speedup = loop / two
    rows.append(
        (
            f"F2 {count:,} hosts, --jobs 2 ÷ a loop of single-host commands",
            f"{speedup:.0f}×",
            "≥ 100×",
            speedup >= 100,
            f"{two:.1f} s vs {loop:.0f} s, extrapolated from {sample} single-host runs "
            f"({loop / count * 1e3:.0f} ms each); four classes, every host overrides",
        )
    )
    rows.append(
        (
            "F3 the same, --jobs 2 ÷ --jobs 1",
            f"{one / two:.2f}×",
            "≥ 1.6×",
            one / two >= 1.6,
            f"{one:.1f} s on one core; wall clock, so a machine "
            "others share (load average above 2) cannot show it",
        )
    )
    peak = (parent_kib + 2 * worker_kib) / 1024
    rows.append(
        (
            f"F4 peak memory of the {count:,}-host build",
            f"{peak:.0f} MiB",
            "≤ 256 MiB",
            peak <= 256,
            f"parent {parent_kib / 1024:.0f} MiB + 2 × largest worker "
            f"{worker_kib / 1024:.0f} MiB (an upper bound); --jobs 1: "
            f"{one_kib / 1024:.0f} MiB",
        )
    )
    return rows
