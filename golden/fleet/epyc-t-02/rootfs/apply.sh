#!/bin/sh
# Managed by hostc for epyc-t-02 (role training); regenerate, do not edit.
# Installs the files of the rootfs tree next to this script (owner root:root,
# hostc's modes), then applies them on this debian-family host.  Run as root:
#     sudo sh apply.sh
# With DESTDIR=/path/to/image set, it installs under DESTDIR only and runs no
# step: the steps act on the running host.  Safe to run twice.
set -eu
src=$(dirname -- "$0")
if [ -z "${DESTDIR:-}" ] && ! command -v tuned-adm >/dev/null 2>&1; then
    echo 'hostc: tuned-adm is missing: install the tuned package first (apt-get install tuned, dnf install tuned); nothing was changed' >&2
    exit 1
fi
install -D -m 0644 -o root -g root -- "$src"/etc/default/grub.d/90-hostc.cfg "${DESTDIR:-}"/etc/default/grub.d/90-hostc.cfg
install -D -m 0644 -o root -g root -- "$src"/etc/sysctl.d/90-hostc.conf "${DESTDIR:-}"/etc/sysctl.d/90-hostc.conf
install -D -m 0644 -o root -g root -- "$src"/etc/security/limits.d/90-hostc.conf "${DESTDIR:-}"/etc/security/limits.d/90-hostc.conf
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system.conf.d/90-hostc-limits.conf "${DESTDIR:-}"/etc/systemd/system.conf.d/90-hostc-limits.conf
install -D -m 0644 -o root -g root -- "$src"/etc/systemd/system/hostc-verify.service "${DESTDIR:-}"/etc/systemd/system/hostc-verify.service
install -D -m 0755 -o root -g root -- "$src"/usr/local/sbin/hostc-verify "${DESTDIR:-}"/usr/local/sbin/hostc-verify
install -D -m 0644 -o root -g root -- "$src"/etc/tuned/hostc/tuned.conf "${DESTDIR:-}"/etc/tuned/hostc/tuned.conf
install -D -m 0644 -o root -g root -- "$src"/etc/modules-load.d/90-hostc.conf "${DESTDIR:-}"/etc/modules-load.d/90-hostc.conf
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
# start hostc-verify.service at every boot
systemctl enable hostc-verify.service
# tuned.service runs now and at every boot
systemctl enable --now tuned.service
# apply systemd-modules-load.service now
systemctl restart systemd-modules-load.service || {
    echo 'hostc: failed: systemctl restart systemd-modules-load.service (the next steps still run)' >&2
    hostc_failed=1
}
# TuneD applies profile hostc
tuned-adm profile hostc
# regenerate the boot configuration
update-grub
echo "hostc: reboot to apply the kernel command line" >&2
if [ -n "$hostc_failed" ]; then
    echo "hostc: the files and the boot configuration are in place, but a live step failed (above)" >&2
    exit 1
fi
