"""The character sets of every value that reaches an artifact, defined once.

The spec loader and check refuse values outside them (with a key path); the
templates' escaping filters refuse them again (so one missed check cannot
inject).  Both sides read these patterns, so they never drift apart.  A module
of plain regular expressions: targets may import it (it is neither spec nor
topology).
"""

from __future__ import annotations

import re

from hostc.knowledge.table import Table

#: What a spec or snapshot string, and any artifact value, may not hold: C0 (NUL, tab,
#: LF, CR …), DEL, C1, the Unicode line and paragraph separators (each ends a line in
#: some reader or is invisible in review), and the bidi and zero-width characters of
#: `TERMINAL_UNSAFE` (they reorder or hide what a reviewer reads).  One set with it.
CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]"
)

#: What a terminal must never be handed raw: every control character (C0 with tab,
#: DEL, C1), the line and paragraph separators, the bidi embeddings, overrides and
#: isolates (U+202A-U+202E, U+2066-U+2069, and the marks U+200E, U+200F, U+061C,
#: which reorder what a reader sees: "Trojan Source", CVE-2021-42574), the
#: zero-width characters (U+200B-U+200D, U+2060) and the BOM U+FEFF, which hide
#: text.  `hostc.diagnostics.printable` escapes them in everything hostc echoes.
TERMINAL_UNSAFE = CONTROL

#: `TERMINAL_UNSAFE` less the line feed and the tab: what a whole text written to a
#: terminal may not hold (`hostc.diagnostics.terminal`).
TERMINAL_UNSAFE_TEXT = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]"
)

#: A kernel argument: characters both the kernel's parser and GRUB's script
#: language take literally when unquoted (no quoting, braces, globs, comments,
#: variables, separators or whitespace).
KERNEL_ARG_KEY = r"[A-Za-z0-9_.-]+"
KERNEL_ARG_VALUE = r"[A-Za-z0-9_.,:/=+@%-]+"
KERNEL_ARG = re.compile(rf"^{KERNEL_ARG_KEY}(={KERNEL_ARG_VALUE})?$")

#: A sysctl value some reader would take for something else: `${` (TuneD expands
#: variables and `${f:…}` functions, `${f:exec:…}` as root, in every profile value),
#: whitespace at either end (sysctl.d, sysctl -p and TuneD strip it), a leading `<` or
#: `>` (TuneD's "only if greater/less" assignment modifiers), a value wholly in double
#: quotes (TuneD's sysctl plugin unquotes it, sysctl.d does not).  docs/escaping.md.
SYSCTL_VALUE_REREAD = re.compile(r'\$\{|^\s|\s$|^[<>].|^".*"$', re.DOTALL)

#: A sysctl key in its canonical dotted form: lowercase words, `/` standing for a
#: literal dot inside a component (`net.ipv4.conf.eth0/100.rp_filter`).  Refused, so
#: that the key hostc checks is the file sysctl writes: a leading `-` (systemd-sysctl
#: and procps read it as "ignore errors" and strip it), globs (`*`: systemd-sysctl
#: expands them, so `fs.nr_*` would set fs.nr_open past every rule), empty components
#: (`vm..swappiness`: path_simplify() collapses `//`) and components that are `.` or
#: `..` once the dots and slashes are swapped back (`/` or `//` here).
SYSCTL_KEY = re.compile(r"^[a-z0-9_][a-z0-9_-]*(\.(?!/{1,2}(?:\.|$))[a-z0-9_/-]+)+$")

#: systemd.unit(5): "[A-Za-z0-9:_.\\-]" plus one "@" for templates and a type suffix;
#: hostc refuses `\\` (escapes) to stay literal, and a leading dot (no `..` in paths).
UNIT_TYPES: Table[str, bool] = Table.members(
    (
        "service",
        "socket",
        "device",
        "mount",
        "automount",
        "swap",
        "target",
        "path",
        "timer",
        "slice",
        "scope",
    ),
    "systemd.unit(5): the unit types (file name suffixes)",
)
UNIT = re.compile(
    r"^[A-Za-z0-9:_-][A-Za-z0-9:_.-]*(@[A-Za-z0-9:_.-]*)?\.(" + "|".join(UNIT_TYPES) + r")$"
)

#: systemd's longest unit name: src/basic/unit-name.h UNIT_NAME_MAX (256, with the NUL;
#: unit_name_is_valid() refuses a name of 256 characters or more).
UNIT_NAME_MAX = 255
#: Linux NAME_MAX (<linux/limits.h>): the longest file name.  A workload's drop-in
#: folder `<unit>.d` is one, so a unit that gets a drop-in has at most NAME_MAX - 2.
NAME_MAX = 255

#: The unit names whose drop-in folder systemd also applies to other units, so a
#: drop-in hostc writes for "one" unit would reach them:
#: - a stem ending in `-` (`foo-.service`): since systemd 239 (commit 2f3f86ab,
#:   "dropin: when looking for dropins for a unit, also look within '-' prefix unit
#:   dirs"; systemd.unit(5), "Along with a unit file foo.service ... foo-.service.d/"),
#:   every `foo-*.service` reads `foo-.service.d/`: `systemd-.service` would pin journald,
#:   udevd and logind, `rke2-.service` the kubelet's unit;
#: - a template without an instance (`foo@.service`): `foo@.service.d/` applies to every
#:   instance `foo@*.service` (systemd.unit(5), "foo@.service.d/").
UNIT_DROPIN_SHARED = re.compile(r"^[^@]*-\.[a-z]+$|@\.[a-z]+$")
