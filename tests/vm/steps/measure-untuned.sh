# Issue 53: `hostc measure` on the untuned guest.  Sourced by step1.sh (boot 1) after the
# pristine guest is recorded and before v1's apply.sh: nothing of hostc is in effect yet.
# Three 5 s windows of v1's spec (its CPUs 2-3,6-7 isolated), each under the same
# background load as the tuned clean windows: 2 nice'd shells that fork /bin/true in a
# loop (each fork and wait switches the shell in again), started from this step's service,
# which untuned may run on every CPU.  Where the scheduler puts two shells on eight CPUs
# for five seconds is chance (in two CI runs, one window in three saw both stay on the
# housekeeping CPUs, whether the load started with the window or before hostc), so the
# first shell starts as an unconfined service's child may: `taskset -c 2-3,6-7`, on the
# CPUs v1 isolates, which nothing on the untuned guest keeps it off.  The second is left
# to the scheduler.  Started before hostc: its start-up is the shells' time to be seen.
# The record file stays out of /var/lib/hostc (--no-record): the pristine guest must stay
# pristine for hostc-revert's check.
# Results under /root/results/measure/: untuned-N.json (the measurement), -N.rc, -N.err.
MEASURE_R=/root/results/measure
mkdir -p "$MEASURE_R"
. /root/vmtest/steps/measure-load.sh
for n in 1 2 3; do
    measure_load_start 2-3,6-7
    hostc measure /root/vmtest/v1/node.toml --window 5 --json --no-record \
        >"$MEASURE_R/untuned-$n.json" 2>"$MEASURE_R/untuned-$n.err"
    echo $? >"$MEASURE_R/untuned-$n.rc"
    measure_load_stop
done
