"""hostc's one cattrs converter: TOML data → typed spec and snapshot values.

Every way into a HostSpec or a snapshot goes through `structure` here: the spec
loader (`spec.load`), the snapshot reader (`topology.snapshot`), and API callers
(`api.spec_from_data`, `api.loads_spec`, and `api.compile_plan`, which rebuilds a
spec built in Python).  The attrs classes are pure shape; this module is the one
place a scalar is parsed.  Problems become Diagnostics in `structure_errors`.

hostc's TOML dialect:

* integers are never booleans (`true` is no `1`), and stay in TOML's 64-bit range;
* strings are never split into characters: an array is a TOML array, a string
  where an array belongs is refused; strings carry no control character and no
  shell or systemd expansion (`$`, `%`);
* booleans are `true`/`false` only, never `"yes"` or `1`;
* a table is a TOML table where a table belongs, and unknown keys are errors
  naming the known ones;
* enums take exactly their values (`"madvise"`), listed when refused;
* node keys (`hugepages.per_node`, `kubelet.reserved_memory`) are ASCII decimal
  integers, and two spellings of one node (`"01"`, `"1"`) are a collision;
* scalars are typed at load, each by its own `parse` (the `Scalar` protocol):
  cpulists are `CpuSet`s, page sizes `PageSize`s (`1G`, kernel spelling),
  kubelet quantities `Quantity`s (`1Gi`: binary suffixes only, `1G` is refused
  where `Gi` is meant), kubelet versions `KubeVersion`s;
* `cpu.isolate` is a keyword (`workload`, `rest`, `none`) or a cpulist;
* `limits.memlock` is KiB or `"unlimited"` (`"infinity"` and -1 read as unlimited);
* `[sysctl]` keys are dotted or slashed (`vm/swappiness` is `vm.swappiness`), two
  spellings of one key are an error naming both, values are one line each;
* an optional value (`X | None`) is absent or an `X`: TOML has no null;
* a spec's arrays are tuples, its tables FrozenMaps: a loaded spec cannot change.
"""

from __future__ import annotations

import enum
import functools
import operator
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol, Self, TypeVar

import attrs
import cattrs
from cattrs.cols import list_structure_factory
from cattrs.errors import IterableValidationError, IterableValidationNote
from cattrs.gen import make_dict_structure_fn

from hostc.cpuset import CpuSet
from hostc.diagnostics import kind_of
from hostc.knowledge.kubelet import KubeVersion, Quantity
from hostc.record import FrozenMap, Record
from hostc.spec import text
from hostc.spec.structure_errors import diagnostics as diagnostics
from hostc.spec.text import control_char, expansion_problem, shown
from hostc.units import PageSize

T = TypeVar("T")

#: TOML integers are 64-bit signed (toml.io, "Integer"); tomllib takes larger ones.
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1
#: The largest finite memlock in KiB: rlim_t is 64-bit and 2^64-1 is RLIM_INFINITY.
MEMLOCK_MAX_KIB = ((1 << 64) - 2) // 1024


class Scalar(Protocol):
    """A value node.toml writes as one TOML scalar: parsed from its text once, at load,
    written back by `str()`, and described to `hostc schema` by the type itself."""

    @classmethod
    def parse(cls, text: str) -> Self: ...

    @classmethod
    def json_schema(cls) -> dict[str, object]: ...


@attrs.frozen(repr=False, eq=False)
class ScalarSyntax(Record):
    """How one scalar type is read: `ints` when a bare TOML integer is also one (a
    quantity of bytes), what a value of the wrong kind is told it should be, and the
    words before its parser's own message."""

    type: type[Scalar]
    expected: str = "a string"
    prefix: str = ""
    ints: bool = False


#: Every scalar type of the dialect; one hook each, registered in one loop.
SCALARS: tuple[ScalarSyntax, ...] = (
    ScalarSyntax(CpuSet, prefix="malformed cpulist: "),
    ScalarSyntax(PageSize),
    ScalarSyntax(Quantity, 'a quantity like "1Gi" or a number of bytes', ints=True),
    ScalarSyntax(KubeVersion),
)


def _in_range(v: int) -> int:
    """One rule for every integer of a spec: TOML's 64-bit range."""
    if v > INT_MAX:
        raise ValueError(f"{shown(v)} is too large: TOML integers are 64-bit (at most {INT_MAX})")
    if v < INT_MIN:
        raise ValueError(f"{shown(v)} is too small: TOML integers are 64-bit (at least {INT_MIN})")
    return v


def _strict_int(v: Any, _: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"expected an integer, got {kind_of(v)}")
    return _in_range(v)


def _strict_str(v: Any, _: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"expected a string, got {kind_of(v)}")
    if (c := control_char(v)) is not None:
        raise ValueError(f"the string contains a control character ({c})")
    if (msg := expansion_problem(v)) is not None:
        raise ValueError(msg)
    return v


def _strict_bool(v: Any, _: Any) -> bool:
    if not isinstance(v, bool):
        raise TypeError(f"expected true or false, got {kind_of(v)}")
    return v


def _int_or_str(v: Any, _: Any) -> int | str:
    if isinstance(v, bool) or not isinstance(v, int | str):
        raise TypeError(f"expected an integer or a string, got {kind_of(v)}")
    return _in_range(v) if isinstance(v, int) else v


def _checked(problem: Callable[[str], str | None]) -> Callable[[Any, Any], str]:
    """A hook for one of hostc.spec.text's typed strings: a string, and no problem with it."""

    def hook(v: Any, _: Any) -> str:
        if not isinstance(v, str):
            raise TypeError(f"expected a string, got {kind_of(v)}")
        if (msg := problem(v)) is not None:
            raise ValueError(msg)
        return v

    return hook


def _scalar(syntax: ScalarSyntax) -> Callable[[Any, Any], Any]:
    """The one hook of a `Scalar`: its TOML text (or integer) through its own `parse`."""
    parse: Callable[[Any], Any] = syntax.type.parse

    def hook(v: Any, _: Any) -> Any:
        if syntax.ints and isinstance(v, int) and not isinstance(v, bool):
            return parse(v)
        if not isinstance(v, str):
            raise TypeError(f"expected {syntax.expected}, got {kind_of(v)}")
        try:
            return parse(_strict_str(v, str))
        except ValueError as e:
            if not syntax.prefix:
                raise
            raise ValueError(f"{syntax.prefix}{e}") from None

    return hook


def _enum(v: Any, cls: type[enum.Enum]) -> enum.Enum:
    try:
        return cls(v)
    except ValueError:
        choices = ", ".join(repr(m.value) for m in cls)
        raise ValueError(f"{shown(v)} is not one of {choices}") from None


def _isolate(v: Any, _: Any) -> Any:
    from hostc.spec.model import IsolateMode

    text = _strict_str(v, str)
    key = text.strip().lower()
    if key in {m.value for m in IsolateMode}:
        return IsolateMode(key)
    try:
        return CpuSet.parse(text)
    except ValueError as e:
        raise ValueError(f"neither workload, rest, none nor a cpulist: {e}") from None


def _memlock(v: Any, _: Any) -> int | str:
    if isinstance(v, str):
        if v.strip().lower() in ("unlimited", "infinity"):
            return "unlimited"
        raise ValueError(f'{shown(v)} is neither a number of KiB nor "unlimited"')
    n = _strict_int(v, int)
    if n == -1:
        return "unlimited"
    if n < 0:
        raise ValueError(f"negative memlock {n}")
    if n > MEMLOCK_MAX_KIB:
        raise ValueError(
            f'{n} KiB is too large: RLIMIT_MEMLOCK holds at most 2^64-1 bytes; write "unlimited"'
        )
    return n


def _node_keys(v: Any) -> dict[int, Any]:
    """A table keyed by NUMA node: keys are ASCII decimal numbers, and two spellings of one
    node (`"01"` and `"1"`) are a collision reported with both, never one silently lost
    (Python's isdigit() would also take `"١"` or `"²"`; TOML keys are strings)."""
    if not isinstance(v, dict):
        raise TypeError(f"expected a table, got {kind_of(v)}")
    bad = [k for k in v if not (isinstance(k, str) and k.isascii() and k.isdigit())]
    if bad:
        raise ValueError(f"keys must be NUMA node numbers, not {', '.join(map(shown, bad[:5]))}")
    out: dict[int, Any] = {}
    first: dict[int, str] = {}
    for k, n in v.items():
        if len(k) > 9:
            raise ValueError(f"NUMA node {shown(k)} is too large")
        node = int(k)
        if node in first:
            raise ValueError(
                f"keys {shown(first[node])} and {shown(k)} name the same NUMA node {node}"
            )
        first[node] = k
        out[node] = n
    return out


def _per_node(value: Callable[[Any, Any], Any]) -> Callable[[Any, Any], dict[int, Any]]:
    """A table keyed by NUMA node whose values go through `value`."""
    return lambda v, _: {k: value(n, None) for k, n in _node_keys(v).items()}


def _quoted(key: str) -> str:
    return '"' + shown(key)[1:-1] + '"'


def _sysctls(v: Any, _: Any) -> dict[str, int | str]:
    """`[sysctl]`: keys in the dotted form (`vm/swappiness` is `vm.swappiness`), values one
    line each; two spellings of one key are an error naming both."""
    if not isinstance(v, dict):
        raise TypeError(f"expected a table, got {kind_of(v)}")
    out: dict[str, int | str] = {}
    first: dict[str, str] = {}
    errors: list[Exception] = []

    def bad(key: str, message: str) -> None:
        e = ValueError(message)
        e.__notes__ = [IterableValidationNote(f"sysctl {key!r}", key, str)]
        errors.append(e)

    for key, value in v.items():
        if (msg := text.sysctl_key_problem(key)) is not None:
            bad(key, msg)
            continue
        try:
            value = _int_or_str(value, object)
        except TypeError as e:
            bad(key, str(e))
            continue
        if (msg := text.sysctl_value_problem(value)) is not None:
            bad(key, msg)
            continue
        norm = text.normalize_sysctl_key(key)
        if norm in first:
            bad(key, f"names the same sysctl as sysctl.{_quoted(first[norm])} ({norm})")
            continue
        first[norm] = key
        out[norm] = value
    if errors:
        raise IterableValidationError("invalid sysctl table", errors, dict)
    return out


def _strict_list(t: Any, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    """cattrs would split a string into characters; TOML arrays only (a spec's as tuples)."""
    items: Any = types.GenericAlias(list, typing.get_args(t)[:1])
    inner, frozen = list_structure_factory(items, conv), typing.get_origin(t) is tuple

    def hook(v: Any, _: Any) -> Any:
        if not isinstance(v, list):
            raise TypeError(f"expected an array, got {kind_of(v)}")
        return tuple(inner(v, items)) if frozen else inner(v, items)

    return hook


def _frozen_table(t: Any, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    """A spec's table (`Mapping[K, V]`): read by the `dict[K, V]` hook, held as a FrozenMap."""
    table: Any = types.GenericAlias(dict, typing.get_args(t))
    inner = conv.get_structure_hook(table)
    return lambda v, _: FrozenMap(inner(v, table))


def _table(cl: Any, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    """A TOML table where a table belongs; cattrs' own message would be about iteration."""
    inner = make_dict_structure_fn(cl, conv, _cattrs_forbid_extra_keys=True)

    def hook(v: Any, _: Any) -> Any:
        if not isinstance(v, dict):
            raise TypeError(f"expected a table, got {kind_of(v)}")
        return inner(v, cl)

    return hook


def _is_optional_union(t: Any) -> bool:
    """`A | B | None`: cattrs takes `X | None` natively for one X, not for a union."""
    args = typing.get_args(t)
    return (
        typing.get_origin(t) in (typing.Union, types.UnionType)
        and type(None) in args
        and len(args) > 2
    )


def _optional_union(t: Any, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    rest = functools.reduce(operator.or_, [a for a in typing.get_args(t) if a is not type(None)])
    inner = conv.get_structure_hook(rest)
    return lambda v, _: None if v is None else inner(v, rest)


def _is_list(t: Any) -> bool:
    origin, args = typing.get_origin(t), typing.get_args(t)
    return origin is list or (origin is tuple and len(args) == 2 and args[1] is Ellipsis)


class _Converters:
    """The two configured converters, built on first use (building one costs start-up)."""

    made: ClassVar[dict[bool, cattrs.Converter]] = {}


def converter(detailed: bool = True) -> cattrs.Converter:
    """The converter; `detailed=False` is the fast one `structure` tries first (its
    generated code is smaller and cheaper to build, and it stops at the first error)."""
    c = _Converters.made.get(detailed)
    if c is None:
        c = _Converters.made[detailed] = make_converter(detailed)
    return c


def make_converter(detailed: bool) -> cattrs.Converter:
    """A converter for the dialect in this module's docstring."""
    from hostc.spec.model import Isolate, Memlock

    c = cattrs.Converter(forbid_extra_keys=True, detailed_validation=detailed)
    c.register_structure_hook(int, _strict_int)
    c.register_structure_hook(str, _strict_str)
    c.register_structure_hook(bool, _strict_bool)
    c.register_structure_hook(int | str, _int_or_str)
    c.register_structure_hook(text.Name, _checked(text.name_problem))
    c.register_structure_hook(text.IfName, _checked(text.ifname_problem))
    c.register_structure_hook(text.KernelArgText, _checked(text.kernel_arg_problem))
    # StrEnum before str in the MRO, so enums are checked, not passed as strings.
    c.register_structure_hook(enum.StrEnum, _enum)
    c.register_structure_hook(enum.Enum, _enum)
    c.register_structure_hook_factory(_is_list, _strict_list)
    c.register_structure_hook_factory(
        lambda t: getattr(t, "__origin__", None) is Mapping, _frozen_table
    )
    c.register_structure_hook_factory(attrs.has, _table)
    # after attrs.has: these attrs value types are TOML scalars, not tables
    for syntax in SCALARS:
        c.register_structure_hook(syntax.type, _scalar(syntax))
    c.register_structure_hook_func(lambda t: t == Isolate, _isolate)
    c.register_structure_hook_func(lambda t: t == Memlock, _memlock)
    c.register_structure_hook_func(lambda t: t == dict[str, int | str], _sysctls)
    c.register_structure_hook_func(lambda t: t == dict[int, int], _per_node(_strict_int))
    quantity = c.get_structure_hook(Quantity)
    c.register_structure_hook_func(lambda t: t == dict[int, Quantity], _per_node(quantity))
    c.register_structure_hook_factory(_is_optional_union, _optional_union)
    return c


def structure(data: Any, cls: type[T]) -> T:
    """Structure fast first; only on failure again with detailed validation, whose
    exception groups carry the key path of every problem (what `diagnostics` reads).
    Both converters run the same hooks, so they accept exactly the same data."""
    try:
        return converter(detailed=False).structure(data, cls)
    except Exception:
        pass
    return converter(detailed=True).structure(data, cls)
