# Boot 4: tampered.  The verifier must have failed; then hostc-revert and a reboot.
R=/root/results
systemctl is-failed hostc-verify.service >$R/verify-tampered 2>&1
systemctl --failed --no-legend --plain >$R/failed-tampered 2>&1
journalctl -b -u hostc-verify.service -o cat --no-pager >$R/verify-tampered.log 2>&1
rm -f /etc/sysctl.d/99-tamper.conf
/usr/local/sbin/hostc-revert >$R/revert.log 2>&1; echo $? >$R/revert.rc
systemctl --no-block reboot
