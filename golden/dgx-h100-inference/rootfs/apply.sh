#!/bin/sh
# Managed by hostc for dgx-h100-serve (role inference); regenerate, do not edit.
# Installs the files of the rootfs tree next to this script (owner root:root,
# hostc's modes), then applies them on this debian-family host.  Run as root:
#     sudo sh apply.sh
# With DESTDIR=/path/to/image set, it installs under DESTDIR only and runs no
# step: the steps act on the running host.  Safe to run twice.
set -eu
src=$(dirname -- "$0")
# put MODE PATH: install the tree's PATH; HOSTC_CHANGED names it when it differed, so
# that hostc-apply runs the steps its change calls for (a file put back by hand too)
HOSTC_CHANGED=""
put() {
    if ! cmp -s -- "$src$2" "${DESTDIR:-}$2"; then
        HOSTC_CHANGED="$HOSTC_CHANGED $2"
    fi
    install -D -m "$1" -o root -g root -- "$src$2" "${DESTDIR:-}$2"
}
put 0644 /etc/default/grub.d/90-hostc.cfg
put 0644 /etc/sysctl.d/90-hostc.conf
put 0644 /etc/security/limits.d/90-hostc.conf
put 0644 /etc/systemd/system.conf.d/90-hostc-limits.conf
put 0644 /etc/systemd/system/hostc-tuning.service
put 0755 /usr/local/sbin/hostc-tuning
put 0644 /etc/udev/rules.d/90-hostc-tuning.rules
put 0644 /etc/systemd/system/serve-a.service.d/90-hostc.conf
put 0644 /etc/systemd/system/serve-b.service.d/90-hostc.conf
put 0644 /etc/systemd/system/serve-c.service.d/90-hostc.conf
put 0644 /etc/systemd/system/serve-d.service.d/90-hostc.conf
put 0644 /etc/systemd/system.conf.d/90-hostc-cpuaffinity.conf
put 0644 /etc/systemd/system-preset/90-hostc.preset
put 0644 /etc/systemd/system/hostc-verify.service
put 0755 /usr/local/sbin/hostc-verify
put 0644 /etc/modprobe.d/90-hostc.conf
put 0644 /etc/modules-load.d/90-hostc.conf
put 0644 /etc/systemd/system/hostc-gpudirect.service
put 0755 /usr/local/sbin/hostc-gpudirect
put 0755 /usr/local/sbin/hostc-apply
put 0755 /usr/local/sbin/hostc-revert
put 0644 /var/lib/hostc/manifest.new
export HOSTC_CHANGED
if [ -n "${DESTDIR:-}" ]; then
    echo "hostc: DESTDIR is set: installed only; the running host's steps were not run" >&2
    exit 0
fi
# Each reload or restart runs through hostc-apply, only when its files changed (a
# restart not at all while a reboot is owed); hostc-apply runs last and records the
# build as applied.  A step that only makes the running system take a change now may fail,
# as hostc-tuning does when the kernel refuses a write: the steps after it, the boot
# configuration among them, still run, and the script exits 1 at the end.
hostc_failed=""
# systemd rereads units and drop-ins
/usr/local/sbin/hostc-apply --changed /etc/systemd/system/hostc-tuning.service /etc/systemd/system/serve-a.service.d/90-hostc.conf /etc/systemd/system/serve-b.service.d/90-hostc.conf /etc/systemd/system/serve-c.service.d/90-hostc.conf /etc/systemd/system/serve-d.service.d/90-hostc.conf /etc/systemd/system-preset/90-hostc.preset /etc/systemd/system/hostc-verify.service /etc/systemd/system/hostc-gpudirect.service -- systemctl daemon-reload
# the manager rereads system.conf.d
/usr/local/sbin/hostc-apply --changed /etc/systemd/system.conf.d/90-hostc-limits.conf /etc/systemd/system.conf.d/90-hostc-cpuaffinity.conf -- systemctl daemon-reexec || {
    echo 'hostc: failed: systemctl daemon-reexec (the next steps still run)' >&2
    hostc_failed=1
}
# load sysctl.d now (systemd-sysctl ran before)
/usr/local/sbin/hostc-apply --changed /etc/sysctl.d/90-hostc.conf -- sysctl --system || {
    echo 'hostc: failed: sysctl --system (the next steps still run)' >&2
    hostc_failed=1
}
# start hostc-tuning.service at every boot
systemctl enable --no-reload hostc-tuning.service
# start hostc-verify.service at every boot
systemctl enable --no-reload hostc-verify.service
# start hostc-gpudirect.service at every boot
systemctl enable --no-reload hostc-gpudirect.service
# apply hostc-tuning.service now
/usr/local/sbin/hostc-apply --changed /etc/systemd/system/hostc-tuning.service /usr/local/sbin/hostc-tuning /etc/udev/rules.d/90-hostc-tuning.rules /etc/systemd/system-preset/90-hostc.preset -- systemctl restart hostc-tuning.service || {
    echo 'hostc: failed: systemctl restart hostc-tuning.service (the next steps still run)' >&2
    hostc_failed=1
}
# apply systemd-modules-load.service now
/usr/local/sbin/hostc-apply --changed /etc/modules-load.d/90-hostc.conf -- systemctl restart systemd-modules-load.service || {
    echo 'hostc: failed: systemctl restart systemd-modules-load.service (the next steps still run)' >&2
    hostc_failed=1
}
# apply hostc-gpudirect.service now
/usr/local/sbin/hostc-apply --changed /usr/local/sbin/hostc-gpudirect -- systemctl restart hostc-gpudirect.service || {
    echo 'hostc: failed: systemctl restart hostc-gpudirect.service (the next steps still run)' >&2
    hostc_failed=1
}
# a running serve-a.service rereads its config
/usr/local/sbin/hostc-apply --restart /etc/systemd/system/serve-a.service.d/90-hostc.conf -- systemctl try-restart serve-a.service || {
    echo 'hostc: failed: systemctl try-restart serve-a.service (the next steps still run)' >&2
    hostc_failed=1
}
# a running serve-b.service rereads its config
/usr/local/sbin/hostc-apply --restart /etc/systemd/system/serve-b.service.d/90-hostc.conf -- systemctl try-restart serve-b.service || {
    echo 'hostc: failed: systemctl try-restart serve-b.service (the next steps still run)' >&2
    hostc_failed=1
}
# a running serve-c.service rereads its config
/usr/local/sbin/hostc-apply --restart /etc/systemd/system/serve-c.service.d/90-hostc.conf -- systemctl try-restart serve-c.service || {
    echo 'hostc: failed: systemctl try-restart serve-c.service (the next steps still run)' >&2
    hostc_failed=1
}
# a running serve-d.service rereads its config
/usr/local/sbin/hostc-apply --restart /etc/systemd/system/serve-d.service.d/90-hostc.conf -- systemctl try-restart serve-d.service || {
    echo 'hostc: failed: systemctl try-restart serve-d.service (the next steps still run)' >&2
    hostc_failed=1
}
# modules loaded from the initramfs
/usr/local/sbin/hostc-apply --changed /etc/modprobe.d/90-hostc.conf -- update-initramfs -u -k all
# regenerate the boot configuration
/usr/local/sbin/hostc-apply --changed /etc/default/grub.d/90-hostc.cfg -- update-grub
# /usr/local/sbin/hostc-apply: removes what only the previous build installed, records this build
/usr/local/sbin/hostc-apply
if [ -n "$hostc_failed" ]; then
    echo "hostc: the files and the boot configuration are in place, but a live step failed (above)" >&2
    exit 1
fi
