"""Where a value came from, typed (Butane's `path.ContextPath`): a spec key path, a
preset layer, or a named fact.  Nothing parses a source back from its text; `str()`
gives the one spelling `hostc plan`, plan.json and every artifact comment show.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Generic, TypeVar

import attrs

from hostc.record import Record
from hostc.vocab import When

if TYPE_CHECKING:
    from hostc.settings.model import Setting

T = TypeVar("T")


class Layer(enum.StrEnum):
    """Preset layers, in merge order: a later layer overrides an earlier one."""

    BASE = "base"
    INFERENCE = "inference"
    TRAINING = "training"
    GENERAL = "general"
    INFERENCE_PINNED = "inference+pinned"
    TRAINING_PINNED = "training+pinned"
    #: opt-in (`cpu.realtime`), every role, over all the others
    REALTIME = "realtime"

    @property
    def role(self) -> str | None:
        """The role the layer applies to (None: every role)."""
        if self in (Layer.BASE, Layer.REALTIME):
            return None
        return self.value.split("+")[0]

    @property
    def pinned(self) -> bool | None:
        """True for the layers of hosts with pinned workloads (None: either)."""
        return True if self.value.endswith("+pinned") else None

    @property
    def realtime(self) -> bool | None:
        """True for the layer of hosts that run real-time threads (None: either)."""
        return True if self is Layer.REALTIME else None

    @property
    def spec_key(self) -> str | None:
        """The node.toml key that turns an opt-in layer on (`hostc explain KEY` lists
        what the layer sets); None: the role and the workloads choose the layer."""
        return "cpu.realtime" if self is Layer.REALTIME else None


def _part(p: str | int) -> str:
    if isinstance(p, int):
        return f"[{p}]"
    return f'"{p}"' if "." in p else p  # a dotted key (a sysctl name) is quoted in TOML


@attrs.frozen(repr=False, eq=False)
class SpecKey(Record):
    """A key path of node.toml: ("sysctl", "vm.swappiness"), ("workload", 1, "gpus")."""

    path: tuple[str | int, ...]

    def __str__(self) -> str:
        out = ""
        for p in self.path:
            text = _part(p)
            out += text if isinstance(p, int) or not out else f".{text}"
        return out


@attrs.frozen(repr=False, eq=False)
class SpecKeys(Record):
    """Several spec keys that together chose a value (every busy-polling workload)."""

    keys: tuple[SpecKey, ...]

    def __str__(self) -> str:
        return ", ".join(map(str, self.keys))


@attrs.frozen(repr=False, eq=False)
class PresetLayer(Record):
    """The preset layer whose entry set the value."""

    layer: Layer

    def __str__(self) -> str:
        return f"preset:{self.layer}"


class FactKind(enum.StrEnum):
    TOPOLOGY = "topology"  # a fact of the topology snapshot (a device, a node)
    HOST = "host"  # the host as the spec and its snapshot describe it
    DEFAULT = "default"  # a rule of hostc's own when nothing asks for a value


@attrs.frozen(repr=False, eq=False)
class Fact(Record):
    """A named fact or default rule.  The host's facts as a whole have no name."""

    kind: FactKind
    name: str = ""

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}" if self.name else str(self.kind)


Source = SpecKey | SpecKeys | PresetLayer | Fact
SOURCE_TYPES = (SpecKey, SpecKeys, PresetLayer, Fact)


def key(*path: str | int) -> SpecKey:
    """`key("sysctl", "vm.swappiness")`: a spec key path, written as its parts."""
    return SpecKey(path)


def topology(name: str) -> Fact:
    return Fact(FactKind.TOPOLOGY, name)


HOST = Fact(FactKind.HOST)


def default(rule: str) -> Fact:
    return Fact(FactKind.DEFAULT, rule)


def layer(name: Layer) -> PresetLayer:
    return PresetLayer(name)


@attrs.frozen(repr=False, eq=False)
class Reason(Record):
    source: Source  # a spec key, a preset layer or a named fact (`str()`: as shown)
    why: str

    def __str__(self) -> str:
        return f"{self.source}: {self.why}"


@attrs.frozen(repr=False, eq=False)
class Value(Generic[T], Record):
    """One setting's value in the Plan, with its reason.  When it takes effect, and its
    name in plan.json, belong to the setting (`hostc.settings`), not to each value."""

    setting: Setting[T] = attrs.field(repr=False)
    value: T
    reason: Reason

    @property
    def when(self) -> When:
        return self.setting.when

    @property
    def shown(self) -> str:
        """The value as `hostc plan` shows it."""
        return str(self.value)

    @property
    def name(self) -> str:
        return self.setting.name


@attrs.frozen(repr=False, eq=False)
class LeftOut(Record):
    """A setting other tools emit that this host deliberately does not get, and why."""

    setting: str
    reason: Reason


@attrs.frozen(repr=False, eq=False)
class Provenance(Record):
    """Which spec file set a value (a spec built from layers: `extends`, `[force]`)."""

    key: str  # the merged spec's key path, as Reasons name it (`cpu.isolate`)
    file: str  # relative to the host's spec file
    line: int | None
    source_key: str  # the key path inside that file (`force.cpu.isolate`)
