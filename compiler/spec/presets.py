"""Role presets as data, from `reference/knobs.md`, merged in layers with provenance.

A preset entry is (kind, key, value, why).  Layers apply in order (base, then
the role), and the spec overrides last; each value remembers the layer that
set it, which is what `hostc plan` and the artifact comments show.  TuneD's
mutating merge forgets this; here the merge is a pure function.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from hostc.plan import Reason


@attrs.frozen
class Entry:
    kind: str  # sysctl | limit
    key: str
    value: str
    why: str


def _s(key: str, value: object, why: str) -> Entry:
    return Entry("sysctl", key, str(value), why)


BASE: tuple[Entry, ...] = (
    _s(
        "vm.max_map_count",
        1048576,
        "default 65530 makes loaders of many mmapped weight shards fail with ENOMEM",
    ),
    _s(
        "vm.swappiness",
        1,
        "a swapped-out page is a millisecond fault on the hot path; 1 keeps swap as a last resort",
    ),
    Entry("limit", "nofile", "1048576", "the 1024 default gives EMFILE and silently stuck servers"),
    Entry(
        "limit",
        "memlock",
        "unlimited",
        "pinned (page-locked) host buffers for GPU DMA need unlimited memlock",
    ),
    Entry(
        "kernel",
        "transparent_hugepage",
        "madvise",
        "THP only where asked: `always` causes 50-100 ms compaction stalls",
    ),
)

#: Applied by lower only on x86 (intel_idle/acpi processor idle drivers).
CSTATE_KEYS = ("intel_idle.max_cstate", "processor.max_cstate")
_CSTATE_WHY = "shallow C-states cut wake-up latency on the hot path (costs idle power)"

_COMMON_GPU: tuple[Entry, ...] = (
    _s(
        "vm.overcommit_memory",
        1,
        "GPU runtimes reserve large virtual ranges; heuristic overcommit refuses them",
    ),
    _s("fs.aio-max-nr", 1048576, "weight loaders with many shards exhaust the 65536 default"),
    _s(
        "fs.inotify.max_user_watches",
        524288,
        "model caches and dataloaders watch many files; the default runs out",
    ),
)

INFERENCE: tuple[Entry, ...] = (
    *_COMMON_GPU,
    *(Entry("kernel", key, "1", _CSTATE_WHY) for key in CSTATE_KEYS),
    _s(
        "kernel.numa_balancing",
        1,
        "no workload is pinned with membind, so automatic NUMA balancing keeps pages local",
    ),
    _s("net.core.rmem_max", 268435456, "256 MiB socket buffers for streaming weights and KV"),
    _s("net.core.wmem_max", 268435456, "256 MiB socket buffers for streaming weights and KV"),
    _s("net.ipv4.tcp_rmem", "4096 87380 268435456", "TCP autotuning may grow to 256 MiB"),
    _s("net.ipv4.tcp_wmem", "4096 65536 268435456", "TCP autotuning may grow to 256 MiB"),
    _s("net.core.netdev_max_backlog", 250000, "busy frontends drop packets at the default"),
    _s("net.core.somaxconn", 65535, "request bursts overflow the accept queue"),
)

TRAINING: tuple[Entry, ...] = (
    *_COMMON_GPU,
    _s("kernel.numa_balancing", 0, "migrating pages mid-epoch is churn, not locality"),
    _s("net.core.rmem_max", 536870912, "512 MiB socket buffers for checkpoint and data streams"),
    _s("net.core.wmem_max", 536870912, "512 MiB socket buffers for checkpoint and data streams"),
    _s("net.ipv4.tcp_rmem", "4096 131072 536870912", "TCP autotuning may grow to 512 MiB"),
    _s("net.ipv4.tcp_wmem", "4096 131072 536870912", "TCP autotuning may grow to 512 MiB"),
)

ROLES: Mapping[str, tuple[Entry, ...]] = {
    "inference": INFERENCE,
    "training": TRAINING,
    "general": (),
}

#: A layer on top of the role when workloads are pinned with membind (knobs.md #3).
PINNED: Mapping[str, tuple[Entry, ...]] = {
    "inference": (
        _s(
            "kernel.numa_balancing",
            0,
            "workloads are bound to their NUMA nodes with membind, so page migration "
            "would only add jitter",
        ),
    ),
}


@attrs.frozen
class Override:
    """A value the spec sets (value None: the spec turns the preset's setting off)."""

    key: str
    value: str | None
    source: str  # the spec key path


@attrs.frozen
class Resolved:
    key: str
    value: str
    reason: Reason


def merge(
    kind: str,
    role: str,
    overrides: Iterable[Override] = (),
    exclude: Iterable[str] = (),
    *,
    pinned: bool = False,
) -> list[Resolved]:
    """Layered merge: base, role, [role+pinned], then the spec.

    Order: preset order, then keys only the spec sets.  Each value keeps the
    layer that set it last, which is what the artifacts' comments show.
    """
    layers = [("preset:base", BASE), (f"preset:{role}", ROLES[role])]
    if pinned:
        layers.append((f"preset:{role}+pinned", PINNED.get(role, ())))
    out: dict[str, Resolved] = {}
    for layer, entries in layers:
        for e in entries:
            if e.kind == kind:
                out[e.key] = Resolved(e.key, e.value, Reason(layer, e.why))
    for key in exclude:
        out.pop(key, None)
    for o in overrides:
        prev = out.pop(o.key, None) if o.value is None else out.get(o.key)
        if o.value is None:
            continue
        why = f"set by the spec (preset had {prev.value})" if prev else "set by the spec"
        out[o.key] = Resolved(o.key, o.value, Reason(o.source, why))
    return list(out.values())


def preset_keys() -> set[str]:
    keys: set[str] = set()
    for entries in (BASE, *ROLES.values(), *PINNED.values()):
        keys |= {e.key for e in entries}
    return keys


def quoted(key: str) -> str:
    """A TOML key as written in a path: dotted sysctl names are quoted."""
    return f'"{key}"' if "." in key else key
