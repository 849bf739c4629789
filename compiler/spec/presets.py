"""Role presets as data: entries with conditions, one layered merge for every kind of setting.

An entry names a setting (the name `hostc plan` shows and `preset.exclude` and
the spec's overrides use), a value, a one-line reason, the layer it belongs
to and the conditions under which it applies (arch, CPU vendor, role, pinned
workloads, kernel range).  Layers apply in order (base, the role, the role
with pinned workloads), then `preset.exclude`, then the spec; each value
remembers the layer that set it, which is what `hostc plan` and the
artifacts' comments show.  TuneD's mutating merge forgets this; here the merge
is a pure function, and no kind of setting is special-cased.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

import attrs

from hostc.plan import Reason


class Kind(enum.StrEnum):
    """Which typed Plan entry a setting becomes."""

    SYSCTL = "sysctl"
    LIMIT = "limit"
    THP = "thp"
    CSTATE = "cstate"


#: Settings that are not sysctls, by name.  Any dotted name is a sysctl.
NAMED: Mapping[str, Kind] = {
    "nofile": Kind.LIMIT,
    "memlock": Kind.LIMIT,
    "transparent_hugepage": Kind.THP,
    "max_cstate": Kind.CSTATE,
}


def kind_of(name: str) -> Kind:
    return NAMED.get(name, Kind.SYSCTL)


@attrs.frozen
class Context:
    """What presets may depend on: facts about the host and the spec."""

    role: str
    arch: str
    cpu_vendor: str | None
    kernel: tuple[int, int] | None
    pinned: bool  # workloads are bound to their NUMA nodes


X86 = ("x86_64", "i686", "i386", "amd64")


@attrs.frozen
class Cond:
    """Empty tuples mean any.  Kernel bounds: `kernel_min <= release < kernel_below`;
    an unknown kernel release satisfies no bound (a preset must not guess)."""

    arch: tuple[str, ...] = ()
    vendor: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    pinned: bool | None = None
    kernel_min: tuple[int, int] | None = None
    kernel_below: tuple[int, int] | None = None

    def holds(self, ctx: Context) -> bool:
        if self.arch and ctx.arch not in self.arch:
            return False
        if self.vendor and ctx.cpu_vendor not in self.vendor:
            return False
        if self.roles and ctx.role not in self.roles:
            return False
        if self.pinned is not None and ctx.pinned != self.pinned:
            return False
        if self.kernel_min is not None or self.kernel_below is not None:
            if ctx.kernel is None:
                return False
            if self.kernel_min is not None and ctx.kernel < self.kernel_min:
                return False
            if self.kernel_below is not None and ctx.kernel >= self.kernel_below:
                return False
        return True


@attrs.frozen
class Entry:
    layer: str  # base | inference | training | inference+pinned …
    setting: str
    value: str
    why: str
    cond: Cond = Cond()


def _e(layer: str, setting: str, value: object, why: str, **cond: object) -> Entry:
    roles = () if layer == "base" else (layer.split("+")[0],)
    pinned = True if layer.endswith("+pinned") else None
    return Entry(layer, setting, str(value), why, Cond(roles=roles, pinned=pinned, **cond))  # type: ignore[arg-type]


_CSTATE_WHY = "shallow C-states cut wake-up latency on the hot path (costs idle power)"
_INOTIFY_WHY = "model caches and dataloaders watch many files; the default runs out"

ENTRIES: tuple[Entry, ...] = (
    _e(
        "base",
        "vm.max_map_count",
        1048576,
        "default 65530 makes loaders of many mmapped weight shards fail with ENOMEM",
    ),
    _e(
        "base",
        "vm.swappiness",
        1,
        "a swapped-out page is a millisecond fault on the hot path; 1 keeps swap as a last resort",
    ),
    _e("base", "nofile", 1048576, "the 1024 default gives EMFILE and silently stuck servers"),
    _e(
        "base",
        "memlock",
        "unlimited",
        "pinned (page-locked) host buffers for GPU DMA need unlimited memlock",
    ),
    _e(
        "base",
        "transparent_hugepage",
        "madvise",
        "THP only where asked: `always` causes 50-100 ms compaction stalls",
    ),
    *(
        _e(
            role,
            "vm.overcommit_memory",
            1,
            "GPU runtimes reserve large virtual ranges; heuristic overcommit refuses them",
        )
        for role in ("inference", "training")
    ),
    *(
        _e(
            role,
            "fs.aio-max-nr",
            1048576,
            "weight loaders with many shards exhaust the 65536 default",
        )
        for role in ("inference", "training")
    ),
    *(
        _e(role, "fs.inotify.max_user_watches", 524288, _INOTIFY_WHY)
        for role in ("inference", "training")
    ),
    _e("inference", "max_cstate", 1, _CSTATE_WHY, arch=X86),
    _e(
        "inference",
        "kernel.numa_balancing",
        1,
        "no workload is pinned with membind, so automatic NUMA balancing keeps pages local",
    ),
    _e(
        "inference",
        "net.core.rmem_max",
        268435456,
        "256 MiB socket buffers for streaming weights and KV",
    ),
    _e(
        "inference",
        "net.core.wmem_max",
        268435456,
        "256 MiB socket buffers for streaming weights and KV",
    ),
    _e(
        "inference",
        "net.ipv4.tcp_rmem",
        "4096 87380 268435456",
        "TCP autotuning may grow to 256 MiB",
    ),
    _e(
        "inference",
        "net.ipv4.tcp_wmem",
        "4096 65536 268435456",
        "TCP autotuning may grow to 256 MiB",
    ),
    _e(
        "inference",
        "net.core.netdev_max_backlog",
        250000,
        "busy frontends drop packets at the default",
    ),
    _e("inference", "net.core.somaxconn", 65535, "request bursts overflow the accept queue"),
    _e("training", "kernel.numa_balancing", 0, "migrating pages mid-epoch is churn, not locality"),
    _e(
        "training",
        "net.core.rmem_max",
        536870912,
        "512 MiB socket buffers for checkpoint and data streams",
    ),
    _e(
        "training",
        "net.core.wmem_max",
        536870912,
        "512 MiB socket buffers for checkpoint and data streams",
    ),
    _e(
        "training",
        "net.ipv4.tcp_rmem",
        "4096 131072 536870912",
        "TCP autotuning may grow to 512 MiB",
    ),
    _e(
        "training",
        "net.ipv4.tcp_wmem",
        "4096 131072 536870912",
        "TCP autotuning may grow to 512 MiB",
    ),
    _e(
        "inference+pinned",
        "kernel.numa_balancing",
        0,
        "workloads are bound to their NUMA nodes with membind, so page migration "
        "would only add jitter",
    ),
)

#: Layer order: a later layer overrides an earlier one.
LAYERS = ("base", "inference", "training", "general", "inference+pinned", "training+pinned")


@attrs.frozen
class Override:
    """A value the spec sets (value None: the spec turns the preset's setting off)."""

    setting: str
    value: str | None
    source: str  # the spec key path


@attrs.frozen
class Resolved:
    setting: str
    value: str
    reason: Reason

    @property
    def kind(self) -> Kind:
        return kind_of(self.setting)


def merge(
    ctx: Context, overrides: Iterable[Override] = (), exclude: Iterable[str] = ()
) -> list[Resolved]:
    """Layered merge of every kind at once.

    Order: preset order, then settings only the spec sets.  Each value keeps the
    layer that set it last.
    """
    out: dict[str, Resolved] = {}
    for layer in LAYERS:
        for e in ENTRIES:
            if e.layer == layer and e.cond.holds(ctx):
                out[e.setting] = Resolved(e.setting, e.value, Reason(f"preset:{layer}", e.why))
    for name in exclude:
        out.pop(name, None)
    for o in overrides:
        prev = out.pop(o.setting, None) if o.value is None else out.get(o.setting)
        if o.value is None:
            continue
        why = f"set by the spec (preset had {prev.value})" if prev else "set by the spec"
        out[o.setting] = Resolved(o.setting, o.value, Reason(o.source, why))
    return list(out.values())


def preset_settings() -> set[str]:
    return {e.setting for e in ENTRIES}


def quoted(key: str) -> str:
    """A TOML key as written in a path: dotted sysctl names are quoted."""
    return f'"{key}"' if "." in key else key
