# Boot 1: TuneD installed but disabled (the image's state); the rootfs tree of
# tuned.toml + apply.sh (enables and starts tuned.service, selects profile hostc,
# runs update-grub), and a reboot.
R=/root/results
systemctl is-enabled tuned.service >$R/tuned-enabled-before 2>&1
sh /root/vmtest/tuned/rootfs/apply.sh >$R/apply.log 2>&1; echo $? >$R/apply.rc
tuned-adm active >$R/active-boot1 2>&1
cp /var/log/tuned/tuned.log $R/tuned-boot1.log 2>/dev/null
systemctl --no-block reboot
