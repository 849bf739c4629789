"""What one setting is, declared once (mkosi's ConfigSetting, TuneD's @command_set,
NixOS's mkOption): its name, spec key, value type, when it takes effect, how preset
layers merge it, its help and example, and how a live host shows it.

The rows are in `hostc.settings.table`; presets, lowering, the plan report, the
runtime targets, `hostc explain`, `hostc audit` and docs/settings.md read them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import attrs

from hostc.knowledge.kernel import Release
from hostc.record import Record
from hostc.vocab import When

T = TypeVar("T")
#: a kernel default since the first release: `((ANY, (65530,)),)`
ANY: Release = (0, 0)


class Family(enum.StrEnum):
    """Which part of the Plan a setting becomes."""

    SYSCTL = "sysctl"  # one Sysctl in plan.sysctls (any dotted name)
    LIMIT = "limit"  # one Limit in plan.limits
    MODULE_LOAD = "module_load"  # one ModuleLoad in plan.modules_load
    #: one value a rule of lowering turns into a record of its own, which the Plan names
    #: (`plan.cstates`, `runtime.pstate`, `runtime.iommu`, `runtime.irq`): a value spelled
    #: per vendor or architecture, or computed from the host
    ONE = "one"
    DERIVED = "derived"  # lowered from its spec keys by a rule of its own, never merged
    #: a runtime value written to the row's sysfs file, held by its row in
    #: `plan.runtime.tunables`: the row is the whole declaration (a new knob needs no Plan
    #: field, lowering, report, audit or target code of its own)
    SYSFS = "sysfs"
    #: a kernel argument `arg=value`, its word the row's one `Cmdline` observe, held by its
    #: row in `plan.cmdline_settings`: the row is the whole declaration (the spelling on
    #: every carrier of the command line, `kernel.extra_args` refused for its word,
    #: `hostc explain` by its name or key, audit of /proc/cmdline and of the row's `Sysfs`
    #: file); its value type is an enum or an int, words safe on a command line
    CMDLINE = "cmdline"


class Merge(enum.StrEnum):
    """How preset layers combine (the spec always wins over every layer: mkForce).

    NixOS puts the rule on the option: a mode is last-wins, a socket buffer takes the
    largest value any layer asks for, a resource limit may only rise."""

    LAST = "last"  # a later layer replaces an earlier one
    MAX = "max"  # the largest value of all layers (socket buffer sizes)
    RISE = "rise"  # a limit may only rise: unlimited beats every number

    def takes(self, old: object, new: object) -> bool:
        """Whether a later layer's `new` replaces `old` (ties go to the later layer)."""
        if self is Merge.LAST:
            return True
        if self is Merge.RISE and "unlimited" in (old, new):
            return new == "unlimited"
        assert isinstance(old, int) and isinstance(new, int), (old, new)
        return new >= old


class Per(enum.StrEnum):
    """How many files one sysfs path stands for."""

    ONE = "one"  # a single file
    POLICY = "policy"  # one per cpufreq policy (policy*)
    CPU = "cpu"  # one per CPU (cpu*)
    NODE = "node"  # one per NUMA node (node*)


@attrs.frozen(repr=False, eq=False)
class Cmdline(Record):
    """A kernel argument: /proc/cmdline holds `arg=value`."""

    arg: str


@attrs.frozen(repr=False, eq=False)
class SysctlKey(Record):
    """A sysctl: /proc/sys/<key with dots as slashes>."""

    key: str

    @property
    def path(self) -> str:
        return f"/proc/sys/{self.key.replace('.', '/')}"


@attrs.frozen(repr=False, eq=False)
class Sysfs(Record):
    """A sysfs (or procfs) file; `choice`: the kernel shows every mode, `[selected]`."""

    path: str
    per: Per = Per.ONE
    choice: bool = False


@attrs.frozen(repr=False, eq=False)
class UnitProperty(Record):
    """A systemd property (of the manager when `unit` is empty)."""

    prop: str
    unit: str = ""


@attrs.frozen(repr=False, eq=False)
class ProcLimit(Record):
    """A field of /proc/<pid>/limits of a session or service."""

    field: str


Observe = Cmdline | SysctlKey | Sysfs | UnitProperty | ProcLimit

#: what a spec value becomes (None: the spec turns the preset's setting off)
FromSpec = Callable[[Any], Any]


@attrs.frozen(eq=False)
class Setting(Generic[T]):
    """One setting.  Identity is the row: rows are module constants, compared by `is`."""

    name: str  # what `hostc plan`, `preset.exclude` and the preset tables say
    family: Family
    type: type[Any]  # the value's type (an enum, int or str)
    when: When
    help: str
    example: str
    spec_key: tuple[str, ...] | None = None  # node.toml key path (None: presets only)
    merge: Merge = Merge.LAST
    observe: tuple[Observe, ...] = ()
    from_spec: FromSpec | None = attrs.field(default=None, repr=False)
    #: How a TuneD profile spells a sysfs row where TuneD has an option of its own
    #: (section, option), as TuneD's plugins bind one option to one knob; None: TuneD
    #: writes the row's file under `[sysfs]`.  hostc-tuning always writes the file.
    tuned: tuple[str, str] | None = None
    #: What the kernel says about it (sysctl rows; `source` names where that is written,
    #: a kernel commit or documentation file a reviewer can check without this repo).
    #: `kernel_defaults`: ((since, value), …) ascending; the last row whose `since` ≤
    #: the release applies; multi-value keys hold all values.
    kernel_defaults: tuple[tuple[Release, tuple[int, ...]], ...] = ()
    #: a larger value only permits more (a limit or a buffer size): a preset may raise it,
    #: never lower it below the kernel's default (how layers merge is `merge`'s business)
    limit: bool = False
    added: Release | None = None  # the first release that has it
    removed: Release | None = None  # the first release that no longer has it
    source: str = ""
    #: Where the value is read only when something starts (a socket made, `listen()`, a
    #: `setsockopt`): a running server keeps what it read until its next start, so a
    #: change applied live reaches it then (`hostc.delivery.effects`); the text says when
    #: (where the kernel reads it is in `source`).  Empty: the kernel reads it at each use.
    read_at: str = ""

    def kernel_default(self, release: Release | None) -> tuple[int, ...] | None:
        """The kernel's default at `release` (the newest row when the release is unknown)."""
        rows = [v for since, v in self.kernel_defaults if release is None or since <= release]
        return rows[-1] if rows else None

    def exists(self, release: Release) -> bool:
        """Whether a kernel of `release` has it (True where hostc knows nothing else)."""
        if self.added is not None and release < self.added:
            return False
        return self.removed is None or release < self.removed

    def spec_value(self, spec: object) -> tuple[bool, Any]:
        """(given, value) of this setting's spec key; value None turns the setting off."""
        if self.spec_key is None:
            return False, None
        v: Any = spec
        for part in self.spec_key:
            v = getattr(v, part, None)  # an absent table (`[hugepages]`) gives nothing
        if v is None:
            return False, None
        return True, self.from_spec(v) if self.from_spec is not None else v

    @property
    def sysfs(self) -> Sysfs | None:
        """The file a host shows (and hostc-tuning writes) the value in, if any."""
        return next((o for o in self.observe if isinstance(o, Sysfs)), None)

    @property
    def cmdline(self) -> Cmdline | None:
        """The kernel argument a host shows the value as, if any (the first it declares)."""
        return next((o for o in self.observe if isinstance(o, Cmdline)), None)

    @property
    def doc_type(self) -> str:
        if issubclass(self.type, enum.Enum):
            return " | ".join(f"`{m.value}`" for m in self.type)
        return self.type.__name__


def sysctl_setting(
    key: str, help: str = "", example: str = "", type: type[Any] = int, **kw: Any
) -> Setting[Any]:
    """A sysctl row: its spec key is `sysctl."<key>"`, a host shows it under /proc/sys."""
    return Setting(
        key,
        Family.SYSCTL,
        type,
        When.SYSCTL,
        help,
        example,
        observe=(SysctlKey(key),),
        **kw,
    )
