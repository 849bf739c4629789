# Boot 2, on the command line update-grub wrote: the second run changes nothing, and
# `hostc audit` finds the spec applied.
R=/root/results
cat /proc/cmdline >$R/cmdline-2
start=$(date +%s)
sh /root/vmtest/steps/play.sh >$R/play2.log 2>&1; echo $? >$R/play2.rc
echo $(( $(date +%s) - start )) >$R/play2.seconds
hostc audit /root/vmtest/spec/node.toml --json >$R/audit.json 2>$R/audit.err; echo $? >$R/audit.rc
sync
