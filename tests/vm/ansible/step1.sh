# Boot 1: the playbook's first run: it installs every file, runs the apply steps and,
# the kernel command line having changed, schedules the host's reboot (shutdown -r +1
# over -c local), which ends this boot.
R=/root/results
cat /proc/cmdline >$R/cmdline-1
start=$(date +%s)
sh /root/vmtest/steps/play.sh >$R/play1.log 2>&1; echo $? >$R/play1.rc
echo $(( $(date +%s) - start )) >$R/play1.seconds
cat /run/systemd/shutdown/scheduled >$R/scheduled 2>&1
sync
sleep 300  # the scheduled reboot stops this; a boot that outlives it ends without one
