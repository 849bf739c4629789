#!/bin/sh
# Managed by hostc for dgx-h100-serve (role inference); regenerate, do not edit.
# Installs the files of the rootfs tree next to this script (owner root:root,
# hostc's modes), then applies them on this debian-family host.  Run as root:
#     sudo sh apply.sh
# With DESTDIR=/path/to/image set, it installs under DESTDIR only and runs no
# step: the steps act on the running host.  Safe to run twice.
set -eu
src=$(dirname -- "$0")
install -D -m 0644 -o root -g root -- "$src"/etc/default/grub.d/90-hostc.cfg "${DESTDIR:-}"/etc/default/grub.d/90-hostc.cfg
install -D -m 0644 -o root -g root -- "$src"/etc/sysctl.d/90-hostc.conf "${DESTDIR:-}"/etc/sysctl.d/90-hostc.conf
install -D -m 0644 -o root -g root -- "$src"/etc/security/limits.d/90-hostc.conf "${DESTDIR:-}"/etc/security/limits.d/90-hostc.conf
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system.conf.d/90-hostc-limits.conf "${DESTDIR:-}"/etc/systemd/system.conf.d/90-hostc-limits.conf
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system/hostc-tuning.service "${DESTDIR:-}"/etc/systemd/system/hostc-tuning.service
install -D -m 0755 -o root -g root -- "$src"/usr/local/sbin/hostc-tuning "${DESTDIR:-}"/usr/local/sbin/hostc-tuning
install -D -m 0644 -o root -g root -- "$src"/etc/udev/rules.d/90-hostc-tuning.rules "${DESTDIR:-}"/etc/udev/rules.d/90-hostc-tuning.rules
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system/serve-a.service.d/90-hostc.conf "${DESTDIR:-}"/etc/systemd/system/serve-a.service.d/90-hostc.conf
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system/serve-b.service.d/90-hostc.conf "${DESTDIR:-}"/etc/systemd/system/serve-b.service.d/90-hostc.conf
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system/serve-c.service.d/90-hostc.conf "${DESTDIR:-}"/etc/systemd/system/serve-c.service.d/90-hostc.conf
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system/serve-d.service.d/90-hostc.conf "${DESTDIR:-}"/etc/systemd/system/serve-d.service.d/90-hostc.conf
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system.conf.d/90-hostc-cpuaffinity.conf "${DESTDIR:-}"/etc/systemd/system.conf.d/90-hostc-cpuaffinity.conf
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system-preset/90-hostc.preset "${DESTDIR:-}"/etc/systemd/system-preset/90-hostc.preset
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system/hostc-verify.service "${DESTDIR:-}"/etc/systemd/system/hostc-verify.service
install -D -m 0755 -o root -g root -- "$src"/usr/local/sbin/hostc-verify "${DESTDIR:-}"/usr/local/sbin/hostc-verify
install -D -m 0644 -o root -g root -- "$src"/etc/modprobe.d/90-hostc.conf "${DESTDIR:-}"/etc/modprobe.d/90-hostc.conf
install -D -m 0644 -o root -g root -- "$src"/etc/modules-load.d/90-hostc.conf "${DESTDIR:-}"/etc/modules-load.d/90-hostc.conf
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system/hostc-gpudirect.service "${DESTDIR:-}"/etc/systemd/system/hostc-gpudirect.service
install -D -m 0755 -o root -g root -- "$src"/usr/local/sbin/hostc-gpudirect "${DESTDIR:-}"/usr/local/sbin/hostc-gpudirect
install -D -m 0755 -o root -g root -- "$src"/usr/local/sbin/hostc-apply "${DESTDIR:-}"/usr/local/sbin/hostc-apply
install -D -m 0755 -o root -g root -- "$src"/usr/local/sbin/hostc-revert "${DESTDIR:-}"/usr/local/sbin/hostc-revert
install -D -m 0644 -o root -g root -- "$src"/var/lib/hostc/manifest.new "${DESTDIR:-}"/var/lib/hostc/manifest.new
if [ -n "${DESTDIR:-}" ]; then
    echo "hostc: DESTDIR is set: installed only; the running host's steps were not run" >&2
    exit 0
fi
# A step that only makes the running system take a change now (a restart) may fail,
# as hostc-tuning does when the kernel refuses a write: the steps after it, the boot
# configuration among them, still run, and the script exits 1 at the end.
hostc_failed=""
# systemd rereads units and drop-ins
systemctl daemon-reload
# the manager rereads system.conf.d
systemctl daemon-reexec || {
    echo 'hostc: failed: systemctl daemon-reexec (the next steps still run)' >&2
    hostc_failed=1
}
# load sysctl.d now (systemd-sysctl ran before)
sysctl --system || {
    echo 'hostc: failed: sysctl --system (the next steps still run)' >&2
    hostc_failed=1
}
# /usr/local/sbin/hostc-apply applies what it carries
/usr/local/sbin/hostc-apply
# start hostc-tuning.service at every boot
systemctl enable hostc-tuning.service
# start hostc-verify.service at every boot
systemctl enable hostc-verify.service
# start hostc-gpudirect.service at every boot
systemctl enable hostc-gpudirect.service
# apply hostc-tuning.service now
systemctl restart hostc-tuning.service || {
    echo 'hostc: failed: systemctl restart hostc-tuning.service (the next steps still run)' >&2
    hostc_failed=1
}
# apply systemd-modules-load.service now
systemctl restart systemd-modules-load.service || {
    echo 'hostc: failed: systemctl restart systemd-modules-load.service (the next steps still run)' >&2
    hostc_failed=1
}
# apply hostc-gpudirect.service now
systemctl restart hostc-gpudirect.service || {
    echo 'hostc: failed: systemctl restart hostc-gpudirect.service (the next steps still run)' >&2
    hostc_failed=1
}
# a running serve-a.service rereads its config
systemctl try-restart serve-a.service || {
    echo 'hostc: failed: systemctl try-restart serve-a.service (the next steps still run)' >&2
    hostc_failed=1
}
# a running serve-b.service rereads its config
systemctl try-restart serve-b.service || {
    echo 'hostc: failed: systemctl try-restart serve-b.service (the next steps still run)' >&2
    hostc_failed=1
}
# a running serve-c.service rereads its config
systemctl try-restart serve-c.service || {
    echo 'hostc: failed: systemctl try-restart serve-c.service (the next steps still run)' >&2
    hostc_failed=1
}
# a running serve-d.service rereads its config
systemctl try-restart serve-d.service || {
    echo 'hostc: failed: systemctl try-restart serve-d.service (the next steps still run)' >&2
    hostc_failed=1
}
# modules loaded from the initramfs
update-initramfs -u -k all
# regenerate the boot configuration
update-grub
echo "hostc: reboot to apply the kernel command line" >&2
if [ -n "$hostc_failed" ]; then
    echo "hostc: the files and the boot configuration are in place, but a live step failed (above)" >&2
    exit 1
fi
