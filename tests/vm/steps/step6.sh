# Boot 6: the TuneD owner's kernel arguments from the GRUB drop-in, TuneD started by
# systemd with the hostc profile.  vmtest-step.service runs after hostc-verify.service.
R=/root/results/tuned
systemctl is-failed hostc-verify.service >$R/verify 2>&1
journalctl -b -u hostc-verify.service -o cat --no-pager >$R/verify.log 2>&1
journalctl -b -u tuned.service -o short-monotonic --no-pager >$R/tuned-journal 2>&1
systemctl show -p ActiveEnterTimestampMonotonic --value tuned.service >$R/tuned-start-us 2>&1
systemctl show -p ExecMainStartTimestampMonotonic --value hostc-verify.service >$R/verify-start-us 2>&1
systemctl is-enabled tuned.service >$R/tuned-enabled 2>&1
systemctl is-active tuned.service >$R/tuned-active 2>&1
tuned-adm active >$R/active 2>&1; echo $? >$R/active.rc
tuned-adm list >$R/list 2>&1
tuned-adm verify >$R/tuned-verify 2>&1; echo $? >$R/tuned-verify.rc
cp /var/log/tuned/tuned.log $R/tuned.log 2>/dev/null
# Issue 52 (F3): what the stand-in kubelet found when it started
. /root/vmtest/steps/tuned-order.sh; tuned_order_record
: >/var/log/tuned/tuned.log
tuned-adm verify --ignore-missing >$R/tuned-verify-i 2>&1; echo $? >$R/tuned-verify-i.rc
cp /var/log/tuned/tuned.log $R/tuned-i.log 2>/dev/null
ls -l /etc/tuned/hostc/tuned.conf >$R/profile-ls 2>&1
cat /etc/tuned/active_profile >$R/active_profile 2>&1
cat /sys/devices/virtual/workqueue/cpumask >$R/wq-cpumask 2>&1
hostc audit /root/vmtest/tuned/node.toml --json >$R/audit.json; echo $? >$R/audit.rc
hostc audit /root/vmtest/tuned/node.toml >$R/audit.txt 2>&1
cat /proc/cmdline >$R/cmdline
grep Cpus_allowed_list /proc/1/status >$R/pid1-cpus 2>&1
