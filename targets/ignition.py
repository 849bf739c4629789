"""ignition: one Ignition 3.3.0 config carrying every host file, its units and the kernel arguments.

Files go to `storage.files` as RFC 2397 data URLs (percent-encoded text,
base64 otherwise; a file of `cloud_init.COMPRESS_FROM` bytes or more gzip-compressed,
base64, with `compression: gzip`, which spec 3.1.0 on takes for a file's contents: the
scripts are most of the config, and a cloud's user-data takes 16 KB to 256 KB,
`hostc.knowledge.clouds`) with a decimal `mode` and `overwrite: true`; systemd units
and their `<unit>.d/*.conf` drop-ins go to `systemd.units` (`enabled` when a
file asks for the unit to be enabled).  The kernel arguments travel in
`kernelArguments.shouldExist`, straight from `hostc.plan.kernelargs`: CoreOS has
no GRUB drop-in to regenerate, so a file that takes effect through the boot
loader (Action.BOOTLOADER: the GRUB drop-in) is not carried.  Ignition runs
once, in the initramfs of the first boot, before systemd reads any of these
files: units, sysctl.d, system.conf.d and modprobe.d take effect on that boot
without an apply step, and Ignition reboots for the kernel arguments itself.
It runs no command, so a script hostc means to be run (Action.RUN, such as the
RHEL-family grubby script) lands but is not run: the arguments it would add
are in kernelArguments already.  Nothing live needs doing either: the first
boot starts from the files.  `tuned-adm profile X` (Action.TUNED_PROFILE)
becomes the two files it writes, /etc/tuned/active_profile and profile_mode,
which TuneD reads when it starts (tuned/consts.py); tuned.service is enabled.
Built as dicts, serialized by json.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from urllib.parse import quote

from hostc.artifact import Action, Artifact, ArtifactKind, file
from hostc.plan.kernelargs import kernel_args
from hostc.plan.model import Plan
from hostc.targets import lifecycle
from hostc.targets._emitter import Emitter
from hostc.targets.cloud_init import COMPRESS_FROM, gzipped
from hostc.targets.rootfs import enabled_units

NAME = "config.ign"
VERSION = "3.3.0"  # the newest spec ignition-validate 2.14 accepts as stable; has kernelArguments

#: Ignition writes units and drop-ins with this mode; a unit file with another
#: mode is carried as a plain file so its mode survives.
UNIT_MODE = 0o644
_UNIT = r"[A-Za-z0-9:_.\\@-]+\.(?:service|socket|timer|target|mount|automount|path|slice|swap)"
_UNIT_RE = re.compile(rf"/etc/systemd/system/({_UNIT})")
_DROPIN_RE = re.compile(rf"/etc/systemd/system/({_UNIT})\.d/([^/]+\.conf)")
#: Left as they are in a percent-encoded data URL (no `%`, `#`, `?`, `+`, space).
_SAFE = "/=,:@"


def _text(data: bytes) -> str | None:
    """Printable UTF-8 text (newlines and tabs allowed), or None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if all(c.isprintable() or c in "\n\t" for c in text) else None


def data_url(data: bytes) -> str:
    """Readable percent-encoding for text, base64 for anything else."""
    if _text(data) is not None:
        return "data:," + quote(data, safe=_SAFE)
    return "data:;base64," + base64.b64encode(data).decode("ascii")


def contents(data: bytes) -> dict[str, str]:
    """A file's `contents`: gzip-compressed from COMPRESS_FROM bytes on (the same rule as
    cloud-init's write_files), a plain data URL below."""
    if len(data) >= COMPRESS_FROM:
        return {"compression": "gzip", "source": data_url(gzipped(data))}
    return {"source": data_url(data)}


def carried(plan: Plan, files: Sequence[Artifact]) -> list[Artifact]:
    """The host files Ignition carries: all but those the boot loader reads (GRUB drop-in),
    with the lifecycle's manifest recorded as the current one.

    Other deliveries leave `manifest.new` for hostc-apply to compare with the build
    installed before and then make current.  Ignition runs no command, and it runs once,
    on a machine nothing was installed on: so it writes the manifest as installed,
    listing exactly the files it writes (not the GRUB drop-in) and the kernelArguments.
    A later delivery (an Ansible push, a rootfs tree) then finds the build it replaces,
    and hostc-apply removes what only this one installed; left as `manifest.new`, it was
    overwritten by the next delivery's before anything compared them."""
    out = [
        a
        for a in files
        if a.kind is ArtifactKind.FILE
        and not any(x.action is Action.BOOTLOADER for x in a.activation)
    ]
    if not any(a.path == lifecycle.NEW_MANIFEST for a in out):
        return out
    installed = [a for a in out if a.path != lifecycle.NEW_MANIFEST]
    kargs = [str(a) for a in kernel_args(plan)]  # hostc-revert takes them out again
    record = file("ignition", lifecycle.MANIFEST, lifecycle.manifest_text(plan, installed, kargs))
    return [record if a.path == lifecycle.NEW_MANIFEST else a for a in out]


#: What `tuned-adm profile <name>` leaves behind for the TuneD daemon to read at start.
TUNED_ACTIVE = "/etc/tuned/active_profile"
TUNED_MODE = "/etc/tuned/profile_mode"


def tuned_selection(files: Sequence[Artifact]) -> list[Artifact]:
    """The profile a file asks TuneD to apply, as the files tuned-adm would write."""
    names = sorted(
        {x.unit for a in files for x in a.activation if x.action is Action.TUNED_PROFILE and x.unit}
    )
    if len(names) != 1:
        return []
    return [
        Artifact("ignition", TUNED_ACTIVE, f"{names[0]}\n".encode()),
        Artifact("ignition", TUNED_MODE, b"manual\n"),
    ]


def config(plan: Plan, files: Sequence[Artifact]) -> dict[str, object]:
    storage: list[dict[str, object]] = []
    units: dict[str, dict[str, object]] = {}
    installed = carried(plan, files)
    enabled = enabled_units(installed)
    for art in [*installed, *tuned_selection(installed)]:
        as_unit = art.mode == UNIT_MODE and _text(art.data) is not None
        unit = _UNIT_RE.fullmatch(art.path) if as_unit else None
        dropin = _DROPIN_RE.fullmatch(art.path) if as_unit else None
        if unit:
            units.setdefault(unit[1], {"name": unit[1]})["contents"] = art.text
        elif dropin:
            entry = units.setdefault(dropin[1], {"name": dropin[1]})
            dropins = entry.setdefault("dropins", [])
            assert isinstance(dropins, list)
            dropins.append({"name": dropin[2], "contents": art.text})
        else:
            storage.append(
                {
                    "path": art.path,
                    "mode": art.mode,
                    "overwrite": True,
                    "contents": contents(art.data),
                }
            )
    for name in enabled:
        units.setdefault(name, {"name": name})["enabled"] = True
    doc: dict[str, object] = {"ignition": {"version": VERSION}}
    args = [str(a) for a in kernel_args(plan)]
    if args:
        doc["kernelArguments"] = {"shouldExist": args}
    if storage:
        doc["storage"] = {"files": storage}
    if units:
        doc["systemd"] = {"units": list(units.values())}
    return doc


def emit(plan: Plan, files: Sequence[Artifact], out: Emitter) -> None:
    out.deliverable(NAME, json.dumps(config(plan, files), sort_keys=False, indent=2) + "\n")
