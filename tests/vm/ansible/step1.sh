# Boot 1: the playbook's first run: hostc-apply --disruption owes a reboot (a first
# delivery: the kernel arguments), so the reboot play installs every file, runs the
# apply steps and schedules the host's reboot (shutdown -r +N over -c local), which
# ends this boot.
R=/root/results
cat /proc/cmdline >$R/cmdline-1
start=$(date +%s)
# A slow TCG guest on a loaded CI machine can take more than a minute for the play's
# last handlers after the reboot was scheduled: the play schedules it 10 minutes ahead,
# and this step, once the play's end is recorded, brings it forward.
sh /root/vmtest/steps/play.sh -e hostc_reboot_minutes=10 >$R/play1.log 2>&1; echo $? >$R/play1.rc
echo $(( $(date +%s) - start )) >$R/play1.seconds
cat /run/systemd/shutdown/scheduled >$R/scheduled 2>&1
sync
[ -s /run/systemd/shutdown/scheduled ] && shutdown -r now
sleep 900  # the reboot stops this; a boot that outlives it ends without one
