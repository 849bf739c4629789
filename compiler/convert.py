"""One cattrs converter for spec and snapshot, and its errors turned into Diagnostics.

TOML keys are attribute names (no renames), so cattrs' error paths are true
TOML key paths; `transform_error` gives `... @ $.cpu.isolate`, mapped here to
`cpu.isolate` once, for every caller.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)

from hostc.diagnostics import Diagnostic, Severity
from hostc.spec.text import shown, toml_key

#: The longest message a diagnostic carries from a converter (values in it are cut first).
MESSAGE_MAX = 300

T = TypeVar("T")

_converters: dict[bool, cattrs.Converter] = {}


#: TOML integers are 64-bit signed (toml.io, "Integer"); tomllib takes larger ones.
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1


def _strict_int(v: Any, _: type) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"expected an integer, got {_kind(v)}")
    return _in_range(v)


def _in_range(v: int) -> int:
    """One rule for every integer of a spec: TOML's 64-bit range."""
    if v > INT_MAX:
        raise ValueError(f"{shown(v)} is too large: TOML integers are 64-bit (at most {INT_MAX})")
    if v < INT_MIN:
        raise ValueError(f"{shown(v)} is too small: TOML integers are 64-bit (at least {INT_MIN})")
    return v


def _strict_str(v: Any, _: type) -> str:
    from hostc.spec.text import control_char, expansion_problem

    if not isinstance(v, str):
        raise TypeError(f"expected a string, got {_kind(v)}")
    if (c := control_char(v)) is not None:
        raise ValueError(f"the string contains a control character ({c})")
    if (msg := expansion_problem(v)) is not None:
        raise ValueError(msg)
    return v


def _checked(problem: Callable[[str], str | None]) -> Callable[[Any, Any], str]:
    """A hook for one of hostc.spec.text's typed strings: a string, and no problem with it."""

    def hook(v: Any, _: Any) -> str:
        if not isinstance(v, str):
            raise TypeError(f"expected a string, got {_kind(v)}")
        if (msg := problem(v)) is not None:
            raise ValueError(msg)
        return v

    return hook


def _sysctls(v: Any, _: Any) -> dict[str, int | str]:
    """`[sysctl]`: keys in the dotted form (`vm/swappiness` is `vm.swappiness`), values one
    line each; two spellings of one key are an error naming both."""
    from hostc.spec import text

    if not isinstance(v, dict):
        raise TypeError(f"expected a table, got {_kind(v)}")
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


def _quoted(key: str) -> str:
    from hostc.spec.text import shown

    return '"' + shown(key)[1:-1] + '"'


def _strict_bool(v: Any, _: type) -> bool:
    if not isinstance(v, bool):
        raise TypeError(f"expected true or false, got {_kind(v)}")
    return v


def _int_or_str(v: Any, _: Any) -> int | str:
    if isinstance(v, bool) or not isinstance(v, int | str):
        raise TypeError(f"expected an integer or a string, got {_kind(v)}")
    return _in_range(v) if isinstance(v, int) else v


def _enum(v: Any, cls: type[enum.Enum]) -> enum.Enum:
    try:
        return cls(v)
    except ValueError:
        choices = ", ".join(repr(m.value) for m in cls)
        raise ValueError(f"{shown(v)} is not one of {choices}") from None


def _node_keys(v: Any) -> dict[int, Any]:
    """A table keyed by NUMA node: keys are ASCII decimal numbers, and two spellings of one
    node (`"01"` and `"1"`) are a collision reported with both, never one silently lost
    (Python's isdigit() would also take `"١"` or `"²"`; TOML keys are strings)."""
    if not isinstance(v, dict):
        raise TypeError(f"expected a table, got {_kind(v)}")
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


def _int_keys(v: Any, _: type) -> dict[int, int]:
    return {k: _strict_int(n, int) for k, n in _node_keys(v).items()}


def _cpuset(v: Any, _: Any) -> Any:
    from hostc.cpuset import CpuListError, CpuSet

    if v is None:
        return None
    try:
        return CpuSet.parse(_strict_str(v, str))
    except CpuListError as e:
        raise ValueError(f"malformed cpulist: {e}") from None


def _isolate(v: Any, _: Any) -> Any:
    from hostc.cpuset import CpuListError, CpuSet
    from hostc.spec.model import IsolateMode

    if v is None:
        return None
    text = _strict_str(v, str)
    key = text.strip().lower()
    if key in {m.value for m in IsolateMode}:
        return IsolateMode(key)
    try:
        return CpuSet.parse(text)
    except CpuListError as e:
        raise ValueError(f"neither workload, rest, none nor a cpulist: {e}") from None


def _page_size(v: Any, _: Any) -> Any:
    from hostc.units import PageSize

    if v is None:
        return None
    return PageSize.parse(_strict_str(v, str))


#: The largest finite memlock in KiB: rlim_t is 64-bit and 2^64-1 is RLIM_INFINITY.
MEMLOCK_MAX_KIB = ((1 << 64) - 2) // 1024


def _memlock(v: Any, _: Any) -> Any:
    if v is None:
        return None
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


def _quantity(v: Any, _: Any) -> Any:
    from hostc.knowledge.kubelet import Quantity

    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | str):
        raise TypeError(f'expected a quantity like "1Gi" or a number of bytes, got {_kind(v)}')
    return Quantity.parse(v)


def _kube_version(v: Any, _: Any) -> Any:
    from hostc.knowledge.kubelet import KubeVersion

    return KubeVersion.parse(_strict_str(v, str))


def _node_quantities(v: Any, _: Any) -> Any:
    if v is None:
        return None
    return {k: _quantity(q, None) for k, q in _node_keys(v).items()}


def _is_list(t: Any) -> bool:
    return getattr(t, "__origin__", None) is list


def _strict_list(t: Any, conv: cattrs.Converter) -> Any:
    """cattrs would split a string into characters; TOML arrays only."""
    from cattrs.cols import list_structure_factory

    inner = list_structure_factory(t, conv)

    def hook(v: Any, _: Any) -> Any:
        if not isinstance(v, list):
            raise TypeError(f"expected an array, got {_kind(v)}")
        return inner(v, t)

    return hook


def _table(cl: Any, conv: cattrs.Converter) -> Any:
    """A TOML table where a table belongs; cattrs' own message would be about iteration."""
    from cattrs.gen import make_dict_structure_fn

    inner = make_dict_structure_fn(cl, conv, _cattrs_forbid_extra_keys=True)

    def hook(v: Any, _: Any) -> Any:
        if not isinstance(v, dict):
            raise TypeError(f"expected a table, got {_kind(v)}")
        return inner(v, cl)

    return hook


def _kind(v: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        str: "a string",
        float: "a float",
        list: "an array",
        dict: "a table",
    }.get(type(v), type(v).__name__)


def converter(detailed: bool = True) -> cattrs.Converter:
    """The converter; `detailed=False` is the fast one `structure` tries first (its
    generated code is smaller and cheaper to build, and it stops at the first error)."""
    c = _converters.get(detailed)
    if c is None:
        c = _converters[detailed] = _make_converter(detailed)
    return c


def _make_converter(detailed: bool) -> cattrs.Converter:
    c = cattrs.Converter(forbid_extra_keys=True, detailed_validation=detailed)
    c.register_structure_hook(int, _strict_int)
    c.register_structure_hook(str, _strict_str)
    c.register_structure_hook(bool, _strict_bool)
    c.register_structure_hook(int | str, _int_or_str)
    c.register_structure_hook(
        int | str | None, lambda v, t: None if v is None else _int_or_str(v, t)
    )
    from hostc.cpuset import CpuSet
    from hostc.spec.model import Isolate, Memlock
    from hostc.units import PageSize

    c.register_structure_hook_func(lambda t: t in (CpuSet, CpuSet | None), _cpuset)
    c.register_structure_hook_func(lambda t: t in (Isolate, Isolate | None), _isolate)
    c.register_structure_hook_func(lambda t: t in (PageSize, PageSize | None), _page_size)
    c.register_structure_hook_func(lambda t: t in (Memlock, Memlock | None), _memlock)
    from hostc.spec.text import (
        IfName,
        KernelArgText,
        Name,
        ifname_problem,
        kernel_arg_problem,
        name_problem,
    )

    c.register_structure_hook(Name, _checked(name_problem))
    c.register_structure_hook(IfName, _checked(ifname_problem))
    c.register_structure_hook(KernelArgText, _checked(kernel_arg_problem))
    # `[sysctl]` is the one dict[str, int | str] of the spec
    c.register_structure_hook_func(lambda t: t == dict[str, int | str], _sysctls)
    c.register_structure_hook_func(lambda t: t == dict[int, int], _int_keys)
    c.register_structure_hook_func(
        lambda t: t == dict[int, int] | None,
        lambda v, t: None if v is None else _int_keys(v, t),
    )
    # StrEnum before str in the MRO, so enums are checked, not passed as strings.
    c.register_structure_hook(enum.StrEnum, _enum)
    c.register_structure_hook(enum.Enum, _enum)
    c.register_structure_hook_factory(_is_list, lambda t, conv: _strict_list(t, conv))
    c.register_structure_hook_factory(attrs.has, _table)
    # after attrs.has: these attrs value types are TOML scalars, not tables
    from hostc.knowledge.kubelet import KubeVersion, Quantity

    c.register_structure_hook_func(lambda t: t in (Quantity, Quantity | None), _quantity)
    c.register_structure_hook_func(lambda t: t is KubeVersion, _kube_version)
    c.register_structure_hook_func(
        lambda t: t in (dict[int, Quantity], dict[int, Quantity] | None), _node_quantities
    )
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


def _dotted(path: str) -> str:
    p = path.removeprefix("$").lstrip(".")
    p = re.sub(r"\[(\d+)\]", r"[\1]", p)
    p = re.sub(r"\['([^']*)'\]", r".\1", p)
    return p


def _walk(exc: BaseException, path: str, out: list[Diagnostic]) -> None:
    if isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            full = f"{path}.{toml_key(key)}" if path else toml_key(key)
            out.append(
                Diagnostic(
                    Severity.ERROR,
                    full,
                    f"unknown key {shown(key)}",
                    hint=_known(exc.cl),
                )
            )
        return
    if isinstance(exc, ClassValidationError | IterableValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            name = getattr(note, "name", None)
            idx = getattr(note, "index", None)
            if name is not None:
                # dict keys come as index notes on mappings; attribute names as names
                sub_path = f"{path}.{name}" if path else str(name)
            elif idx is not None:
                sub_path = f"{path}.{toml_key(idx)}" if isinstance(idx, str) else f"{path}[{idx}]"
            else:
                sub_path = path
            _walk(sub, sub_path, out)
        for sub in without:
            _walk(sub, path, out)
        return
    if isinstance(exc, KeyError):
        key = toml_key(str(exc.args[0])) if exc.args else "?"
        # cattrs notes the attribute name already; do not repeat it
        full = path if path.split(".")[-1] == key else (f"{path}.{key}" if path else key)
        out.append(Diagnostic(Severity.ERROR, full, "required key is missing"))
        return
    msg = str(exc) or type(exc).__name__
    if isinstance(exc, ValueError) and "is not a valid" in msg:
        m = re.match(r"'?(.*?)'? is not a valid (\w+)", msg, re.S)
        if m:
            msg = f"{shown(m.group(1))} is not a valid {m.group(2)}"
    if len(msg) > MESSAGE_MAX:  # a message quoting a huge value stays readable
        msg = msg[: MESSAGE_MAX - 1] + "…"
    out.append(Diagnostic(Severity.ERROR, path, msg))


def _known(cl: type) -> str | None:
    import attrs

    if attrs.has(cl):
        return "known keys: " + ", ".join(a.name for a in attrs.fields(cl))
    return None


def diagnostics(exc: BaseException) -> list[Diagnostic]:
    """Flatten a cattrs exception tree into one Diagnostic per leaf, with TOML key paths."""
    out: list[Diagnostic] = []
    _walk(exc, "", out)
    return out
