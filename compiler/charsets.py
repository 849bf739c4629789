"""The character sets of every value that reaches an artifact, defined once.

The spec loader and check refuse values outside them (with a key path); the
templates' escaping filters refuse them again (so one missed check cannot
inject).  Both sides read these patterns, so they never drift apart.  A module
of plain regular expressions: targets may import it (it is neither spec nor
topology).
"""

from __future__ import annotations

import re

#: C0 (NUL, tab, LF, CR …), DEL, C1, and the Unicode line and paragraph separators:
#: each either ends a line in some reader or is invisible in review.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

#: A kernel argument: characters both the kernel's parser and GRUB's script
#: language take literally when unquoted (no quoting, braces, globs, comments,
#: variables, separators or whitespace).
KERNEL_ARG_KEY = r"[A-Za-z0-9_.-]+"
KERNEL_ARG_VALUE = r"[A-Za-z0-9_.,:/=+@%-]+"
KERNEL_ARG = re.compile(rf"^{KERNEL_ARG_KEY}(={KERNEL_ARG_VALUE})?$")

#: A sysctl key in its canonical dotted form: lowercase words, `/` standing for a
#: literal dot inside a component (`net.ipv4.conf.eth0/100.rp_filter`), `*` as
#: sysctl.d's glob.
SYSCTL_KEY = re.compile(r"^[a-z0-9_-]+(\.[a-z0-9_*/-]+)+$")

#: systemd.unit(5): "[A-Za-z0-9:_.\\-]" plus one "@" for templates and a type suffix;
#: hostc refuses `\\` (escapes) to stay literal, and a leading dot (no `..` in paths).
UNIT_TYPES = (
    "service", "socket", "device", "mount", "automount", "swap", "target", "path", "timer",
    "slice", "scope",
)  # fmt: skip
UNIT = re.compile(
    r"^[A-Za-z0-9:_-][A-Za-z0-9:_.-]*(@[A-Za-z0-9:_.-]*)?\.(" + "|".join(UNIT_TYPES) + r")$"
)
