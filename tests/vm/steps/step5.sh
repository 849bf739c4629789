# Boot 5: reverted.  /etc, grub.cfg's command line and /proc/cmdline as in boot 1; then
# the TuneD owner, applied on the reverted guest.
R=/root/results
find /etc /usr/local /var/lib/hostc -xdev -type f 2>/dev/null | grep -v -e ^/etc/machine-id -e ^/etc/ld.so.cache | sort | xargs sha256sum >$R/final.sha
grep -E '^\s*linux\s' /boot/grub/grub.cfg | head -1 >$R/final-grub
cat /proc/cmdline >$R/final-cmdline
systemctl --failed --no-legend --plain >$R/failed-final 2>&1
# Then the TuneD owner (tests/vm/tuned.toml, results under tuned/) on the reverted guest,
# where TuneD is installed but disabled as in the image: the rootfs tree + apply.sh
# (enables and starts tuned.service, selects profile hostc, runs update-grub), a reboot.
T=$R/tuned; mkdir -p $T
systemctl is-enabled tuned.service >$T/tuned-enabled-before 2>&1
sh /root/vmtest/tuned/rootfs/apply.sh >$T/apply.log 2>&1; echo $? >$T/apply.rc
tuned-adm active >$T/active-boot1 2>&1
cp /var/log/tuned/tuned.log $T/tuned-boot1.log 2>/dev/null
# Issue 52 (F3): a stand-in kubelet.service, enabled, with no ordering of its own
. /root/vmtest/steps/tuned-order.sh; tuned_order_install
systemctl --no-block reboot
