# Issue 53: `hostc measure` on the untuned guest.  Sourced by step1.sh (boot 1) after the
# pristine guest is recorded and before v1's apply.sh: nothing of hostc is in effect yet.
# Three 5 s windows of v1's spec (its CPUs 2-3,6-7 isolated), each under the same
# background load: 6 nice'd shells that fork /bin/true in a loop (each fork and wait
# switches the shell in again), started from this step's service and so, untuned, spread
# by the scheduler over every CPU.  The record file stays out of /var/lib/hostc
# (--no-record): the pristine guest must stay pristine for hostc-revert's check.
# Results under /root/results/measure/: untuned-N.json (the measurement), -N.rc, -N.err.
MEASURE_R=/root/results/measure
mkdir -p "$MEASURE_R"
. /root/vmtest/steps/measure-load.sh
for n in 1 2 3; do
    measure_load_start
    hostc measure /root/vmtest/v1/node.toml --window 5 --json --no-record \
        >"$MEASURE_R/untuned-$n.json" 2>"$MEASURE_R/untuned-$n.err"
    echo $? >"$MEASURE_R/untuned-$n.rc"
    measure_load_stop
done
