"""Free text in a spec, typed: names, kernel arguments, sysctl keys and values.

Every string a user writes ends up in a file that some other program parses:
a shell (the GRUB drop-in is sourced by grub-mkconfig), grub.cfg (GRUB's own
script language, into which the arguments are pasted unquoted), sysctl.d,
limits.d.  So each kind of text has a charset that all of those readers take
literally, and anything else is refused at load time with the key path.  The
targets escape once more on their side (`hostc.targets._render`), so one
missed check is not enough to forge a line.

The functions here return a problem (a message) or None; they never echo more
than `shown()` allows of the offending value.
"""

from __future__ import annotations

import json
import re
from typing import NewType

from hostc.knowledge import charsets

#: Host and workload names: a DNS-label-like word.
Name = NewType("Name", str)
#: One kernel argument, `key` or `key=value`.
KernelArgText = NewType("KernelArgText", str)
#: A network interface name (`eth0`, `bond0.100`): what NCCL_SOCKET_IFNAME matches.
IfName = NewType("IfName", str)

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"
_NAME = re.compile(NAME_PATTERN)

#: Interface names: the kernel takes at most IFNAMSIZ-1 = 15 bytes and refuses `/`,
#: `:` and whitespace (net/core/dev.c dev_valid_name); hostc takes the plain subset
#: that udev's and the distributions' names use, so the value is one word everywhere.
IFNAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}$"
_IFNAME = re.compile(IFNAME_PATTERN)

#: A kernel argument (`hostc.knowledge.charsets.KERNEL_ARG` says which characters).
KERNEL_ARG_PATTERN = charsets.KERNEL_ARG.pattern
_ARG_KEY = re.compile(rf"^{charsets.KERNEL_ARG_KEY}$")
_ARG_VALUE = re.compile(rf"^{charsets.KERNEL_ARG_VALUE}$")
#: Longest single argument (the whole command line is budgeted separately).
KERNEL_ARG_MAX = 1024

#: A value is one line of words; /proc/sys takes at most a page.
SYSCTL_VALUE_MAX = 4096

#: How much of a bad value a diagnostic shows.
SHOWN_MAX = 80


def shown(value: object, limit: int = SHOWN_MAX) -> str:
    """`repr(value)`, cut to `limit` characters with an ellipsis (a 50 MB value stays short)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def control_char(text: str) -> str | None:
    """The first control or line-breaking character in `text`, as U+XXXX, or None.

    C0 (NUL, tab, LF, CR …), DEL, C1, and the Unicode line and paragraph
    separators: each either ends a line in some reader or is invisible in review.
    """
    m = charsets.CONTROL.search(text)
    return None if m is None else f"U+{ord(m.group()):04X}"


def name_problem(text: str) -> str | None:
    if (c := control_char(text)) is not None:
        return f"contains a control character ({c})"
    if not _NAME.match(text):
        return (
            f"{shown(text)} is not a name: 1 to 63 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return None


def ifname_problem(text: str) -> str | None:
    if (c := control_char(text)) is not None:
        return f"contains a control character ({c})"
    if not _IFNAME.match(text):
        return (
            f"{shown(text)} is not a network interface name: 1 to 15 letters, digits, "
            "'_', '.' or '-' (IFNAMSIZ), not starting with '.' or '-'"
        )
    return None


def kernel_arg_problem(text: str) -> str | None:
    if (c := control_char(text)) is not None:
        return f"contains a control character ({c})"
    if text.startswith("-"):
        return (
            f"{shown(text)} starts with '-': `--` ends the kernel's parameters and hands "
            "the rest of the command line to init, and no kernel parameter starts with '-'"
        )
    if len(text) > KERNEL_ARG_MAX:
        return f"is {len(text)} characters long; one argument is at most {KERNEL_ARG_MAX}"
    key, sep, value = text.partition("=")
    if not key or (sep and not value):
        return f"{shown(text)} has an empty key or value"
    if not _ARG_KEY.match(key):
        return (
            f"{shown(text)}: the key may hold only letters, digits, '_', '.' and '-' "
            "(no quote, space, $, backslash, brace, # or shell character)"
        )
    if sep and not _ARG_VALUE.match(value):
        return (
            f"{shown(text)}: the value may hold only letters, digits and _ . , : / = + @ % - "
            "(no quote, space, $, backslash, brace, # or shell character)"
        )
    return None


def kernel_param_name(key: str) -> str:
    """The name as the kernel compares it: `-` and `_` are the same character
    (kernel/params.c parameqn(), for `module.param` names too), the value untouched."""
    return key.replace("-", "_")


def normalize_sysctl_key(key: str) -> str:
    """The dotted form sysctl.d(5) and sysctl(8) share.

    If the first separator is '/', the key is in path form and dots in it are
    literal (`net/ipv4/conf/eth0.100/rp_filter`); the dotted form swaps the two
    (`net.ipv4.conf.eth0/100.rp_filter`), exactly as sysctl.d does, so both
    spellings name the same /proc/sys file and compare equal here.
    """
    dot, slash = key.find("."), key.find("/")
    if slash != -1 and (dot == -1 or slash < dot):
        return key.translate(str.maketrans("./", "/."))
    return key


def sysctl_key_problem(key: str) -> str | None:
    """A problem with a key as written (before normalisation), or None."""
    if (c := control_char(key)) is not None:
        return f"the key contains a control character ({c})"
    if key != key.lower():
        return (
            f"{shown(key)} has upper-case letters; sysctl names are lower case "
            f"(write {shown(key.lower())})"
        )
    if key.startswith("-"):
        return (
            f"{shown(key)} starts with '-', which systemd-sysctl and sysctl -p read as "
            '"ignore errors" and strip: write the key without it'
        )
    if any(c in key for c in "*?["):
        return (
            f"{shown(key)} is a glob, which systemd-sysctl expands to other keys past "
            "hostc's rules: name each key"
        )
    if not charsets.SYSCTL_KEY.match(normalize_sysctl_key(key)):
        return (
            f"{shown(key)} is not a sysctl name in canonical form: dot-separated words, "
            "no empty, '.' or '..' component (sysctl would read it as another key)"
        )
    return None


def sysctl_value_problem(value: int | str) -> str | None:
    if not isinstance(value, str):
        return None
    if (c := control_char(value)) is not None:
        return f"the value contains a control character ({c})"
    if len(value) > SYSCTL_VALUE_MAX:
        return f"the value is {len(value)} characters long; /proc/sys takes {SYSCTL_VALUE_MAX}"
    if not value.strip():
        return "the value is empty"
    if "#" in value or ";" in value:
        return f"value {shown(value)} has a # or ; (sysctl.d would read a comment)"
    if value != value.strip():
        return (
            f"value {shown(value)} has leading or trailing whitespace, which sysctl.d, "
            "sysctl -p and TuneD strip"
        )
    if len(value) > 1 and value[0] in "<>":
        return (
            f"value {shown(value)} starts with {value[0]!r}: TuneD reads that as "
            '"only if greater (less) than the current value" and drops the sign'
        )
    if len(value) > 1 and value[0] == value[-1] == '"':
        return f"value {shown(value)} is quoted: TuneD strips the quotes, sysctl.d does not"
    return expansion_problem(value)


def expansion_problem(text: str) -> str | None:
    """`${` in a value: TuneD expands `${name}` and `${f:function:…}` (`${f:exec:…}` runs
    a program as root) in every profile value, and has no escape for a variable
    (`\\${f:…}` only for functions); hostc never needs the sequence, so it is refused
    in every string of a spec (docs/escaping.md)."""
    if "${" in text:
        return f"{shown(text)} holds '${{', which TuneD would expand as a variable or function"
    return None


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(key: str) -> str:
    """One key as a TOML key path spells it: bare when it can be, else quoted with escapes
    (a key holding a newline must not start a new line in a diagnostic), cut short."""
    if _BARE_KEY.match(key) and len(key) <= SHOWN_MAX:
        return key

    inner = json.dumps(key, ensure_ascii=False)[1:-1]
    inner = "".join(f"\\u{ord(c):04x}" if control_char(c) else c for c in inner)
    if len(inner) > SHOWN_MAX:
        inner = inner[: SHOWN_MAX - 1] + "…"
    return f'"{inner}"'


def json_schema(tp: object) -> dict[str, object] | None:
    """The JSON Schema of one of the typed strings here, or None for other types."""
    patterns = {Name: NAME_PATTERN, KernelArgText: KERNEL_ARG_PATTERN, IfName: IFNAME_PATTERN}
    if tp in patterns:
        return {"type": "string", "pattern": patterns[tp]}
    return None
