"""Escaping for every output format hostc writes; no jinja2 here (the cmdline target and
the CLI use it without loading templates).  `hostc.targets._render` explains the layers."""

from __future__ import annotations

import re
import shlex

from hostc.knowledge import charsets


class UnsafeValue(ValueError):
    """A value a template would have to print, but cannot print safely."""


#: Unicode category Cc (exactly U+0000-U+001F and U+007F-U+009F, fixed by Unicode's
#: stability policy) and the line and paragraph separators; one regex, not a Python
#: loop per character (this check runs on every value of every template).
_CONTROL = charsets.CONTROL


def _has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def _short(text: str) -> str:
    r = repr(text)
    return r if len(r) <= 80 else r[:79] + "…"


def oneline(text: object) -> str:
    """Any text as one printable line: control characters dropped, whitespace collapsed."""
    s = str(text)
    if s.isprintable():
        # the only whitespace a printable string can hold is the ASCII space, so a
        # string without a doubled, leading or trailing one is already collapsed
        # (most reasons: this path is a few C calls)
        if "  " not in s and s[:1] != " " and s[-1:] != " ":
            return s
    else:
        s = _CONTROL.sub(" ", s)
    return " ".join(s.split())


def comment(text: object, prefix: str = "# ") -> str:
    """A reason as a comment: one line, nothing that would end the comment."""
    return prefix + oneline(text)


_GRUB_ARG = charsets.KERNEL_ARG


def grubarg(arg: object) -> str:
    """A kernel argument as it may stand inside sh double quotes and unquoted in grub.cfg."""
    s = str(arg)
    if not _GRUB_ARG.fullmatch(s):  # fullmatch: `$` alone lets a trailing newline by
        raise UnsafeValue(f"kernel argument {_short(s)} is not safe for GRUB or sh")
    return s


_SYSCTL_KEY = charsets.SYSCTL_KEY


def sysctl_key(key: object) -> str:
    s = str(key)
    if not _SYSCTL_KEY.fullmatch(s):
        raise UnsafeValue(f"sysctl key {_short(s)} is not safe for sysctl.d")
    return s


def sysctl_value(value: object) -> str:
    """A value for sysctl.d and TuneD's [sysctl] alike: one line, no comment character,
    nothing either reader would strip, unquote or expand (`charsets.SYSCTL_VALUE_REREAD`)."""
    s = str(value)
    if _has_control(s) or "#" in s or ";" in s or not s.strip():
        raise UnsafeValue(f"sysctl value {_short(s)} is not safe for sysctl.d")
    if charsets.SYSCTL_VALUE_REREAD.search(s):
        raise UnsafeValue(f"sysctl value {_short(s)} is not safe for sysctl.d")
    return s


_WORD = re.compile(r"^[A-Za-z0-9_.:@%+=/-]+$")


def word(value: object) -> str:
    """One field of a whitespace-separated line (limits.d, system.conf)."""
    s = str(value)
    if not _WORD.fullmatch(s):
        raise UnsafeValue(f"value {_short(s)} is not one plain word")
    return s


def shell(value: object) -> str:
    """One sh word, as shlex.quote quotes it, with control characters refused: a newline
    inside quotes is valid sh, but not a line a reviewer can read."""
    s = str(value)
    if not s.isprintable() and _has_control(s):
        raise UnsafeValue(f"a shell word holds a control character: {_short(s)}")
    return shlex.quote(s)


#: Filters whose output is a str with no control character (each refuses or drops
#: them; tests check every one with arbitrary text).  `finalize` checks every output
#: again all the same.
ESCAPING = frozenset(
    {"comment", "oneline", "grubarg", "sysctl_key", "sysctl_value", "word", "shell"}
)


def finalize(value: object) -> object:
    """Every `{{ … }}` output: no control character, whatever the filters did."""
    # isprintable() is False for every control character (and some harmless ones,
    # which the regex then lets through): the common case costs one C call.
    if isinstance(value, str) and not value.isprintable() and _has_control(value):
        raise UnsafeValue(f"a template value holds a control character: {_short(value)}")
    return value


#: What each target's consumer expands or re-reads in a value, and the one rule that
#: keeps hostc's values literal there (docs/escaping.md is the same table in prose;
#: tests/test_downstream_expansion.py parses every artifact back with these rules).
EXPANSION: dict[str, tuple[str, str, str]] = {
    "grub": (
        "grub-mkconfig sources the drop-in with sh; grub.cfg pastes the arguments unquoted",
        "sh: $, `, \\, quotes, globs, ;|&<>; GRUB script: $ { } quotes",
        "kernel arguments from charsets.KERNEL_ARG only (no character either expands)",
    ),
    "grubby": (
        "sh runs the script; grubby --args passes the words to the kernel",
        "sh expansion and word splitting",
        "each argument quoted with `shell` (shlex.quote) and from charsets.KERNEL_ARG",
    ),
    "cmdline": (
        "the kernel's parser (kernel/params.c): `-` is `_` in names, `--` ends its arguments",
        "quotes group a value; `--` hands the rest to init",
        "charsets.KERNEL_ARG, no argument starting with `-`, names compared as the kernel does",
    ),
    "sysctl": (
        "systemd-sysctl and sysctl -p: key normalisation, `-` prefix, globs, value stripped",
        "`-key` ignores errors, `*` globs, `/` and `.` swapped, `//` and `.` collapsed",
        "canonical keys only (charsets.SYSCTL_KEY), values per charsets.SYSCTL_VALUE_REREAD",
    ),
    "tuned": (
        "TuneD's profile loader (configparser, `=`, inline `#`) and its variables",
        "${var}, ${f:function:…} (${f:exec:…} runs as root), ${i:PROFILE_DIR}; "
        "sysctl values unquoted and `<`/`>` prefixes; keys `.` → `/` without swap",
        "`${`, quoted, `<`/`>`-prefixed values refused; keys with a literal dot refused",
    ),
    "systemd": (
        "systemd unit files and drop-ins: specifiers in almost every setting",
        "%n, %i, %h … in Environment=, ExecStart=, Description=, dependencies",
        "Environment= values double-quoted with `%` doubled; other values typed (no `%`)",
    ),
    "limits": (
        "pam_limits (limits.d) and systemd's system.conf: whitespace-separated fields",
        "whitespace splits fields; `#` starts a comment",
        "each field through `word` (one plain word)",
    ),
    "modprobe": (
        "modprobe.d: `options MODULE key=value …`, whitespace-separated",
        "whitespace, `#` comments, `-`/`_` equal in module names",
        "module names and options from check.runtime's charsets; names compared as modprobe does",
    ),
    "kubelet": (
        "the kubelet's YAML configuration and RKE2/K3s config.yaml.d",
        "YAML syntax",
        "a YAML serializer (never text templating) for every value",
    ),
    "cloud-init": (
        "cloud-init: YAML user-data; runcmd entries run by sh",
        "YAML syntax; sh expansion in runcmd strings",
        "PyYAML's SafeDumper for the files; runcmd as argv lists of fixed words",
    ),
    "ignition": (
        "Ignition: JSON config, file contents as data: URLs",
        "JSON syntax; URL percent-encoding",
        "json.dumps and urllib.parse.quote: no value is interpreted",
    ),
    "rootfs": (
        "the files as they are; apply.sh run by sh",
        "sh expansion in apply.sh",
        "apply.sh holds fixed commands and words through `shell`",
    ),
    "rootfs-tar": (
        "tar: member names and modes",
        "`..` and absolute names, links",
        "fixed relative names, regular files only",
    ),
    "ansible": (
        "ansible-playbook: Jinja2 in every string of the playbook and the vars file, "
        "templated at run time on the controller; YAML",
        "{{ … }}, {% … %}, {# … #} (lookup('pipe', …) runs commands); YAML tags and quotes",
        "file bodies in base64; every other value a typed name, mode or digest, and the "
        "target refuses any string that opens a Jinja2 delimiter (ansible.JINJA_OPENERS); "
        "YAML from the serializer",
    ),
}
