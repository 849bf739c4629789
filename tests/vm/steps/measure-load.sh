# Issue 53: the background load of `hostc measure`'s VM windows (measure-untuned.sh,
# measure-tuned.sh): 2 nice'd shells that fork /bin/true in a loop, so that each is
# switched in again at every fork and wait, and each child is placed anew by the
# scheduler's fork and exec balancing.  Started from the step's service, they run where
# its CPUs are: the housekeeping CPUs tuned; untuned, every CPU, the first shell placed on
# the isolated ones (measure-untuned.sh says why).  Two, not more: the guest
# is single-threaded TCG, its 8 vCPUs share one host thread, and every busy vCPU slows
# the whole boot (6 loops made hostc's own start-up in each window several times slower).
# For the same reason the tuned clean windows start the load when the window opens
# (`measure_loaded`), not before hostc's start-up: the loops, round-robin on that one
# thread, made a window's start-up half again as long.
# `measure_load_start [CPUS]`: with CPUS, the first shell starts under `taskset -c CPUS`
# (the untuned windows: see measure-untuned.sh), the second where the step's service is.
measure_load_start() {
    MEASURE_LOAD=""
    measure_load_one "${1:-}"
    measure_load_one ""
}
# `measure_load_one CPUS`: one nice'd shell forking /bin/true, under `taskset -c CPUS`
# when CPUS is not empty; its PID added to MEASURE_LOAD.
measure_load_one() {
    if [ -n "$1" ]; then set -- taskset -c "$1"; else set --; fi
    "$@" nice -n 19 sh -c 'while :; do /bin/true; done' >/dev/null 2>&1 &
    MEASURE_LOAD="$MEASURE_LOAD $!"
}
measure_load_stop() {
    # shellcheck disable=SC2086  # a list of PIDs
    kill $MEASURE_LOAD 2>/dev/null
    # shellcheck disable=SC2086
    wait $MEASURE_LOAD 2>/dev/null
}
# measure_loaded NAME ARG...: `hostc measure ARG...` (its JSON in NAME.json, stderr in
# NAME.err, exit status in NAME.rc), the load started on its "counting for" line (said on
# stderr just before the window opens) and stopped once it ends.
measure_loaded() {
    measure_name=$1
    shift
    hostc measure "$@" >"$MEASURE_R/$measure_name.json" 2>"$MEASURE_R/$measure_name.err" &
    measure_pid=$!
    until grep -q '^hostc measure: counting for' "$MEASURE_R/$measure_name.err" ||
        ! kill -0 "$measure_pid" 2>/dev/null; do
        sleep 0.2
    done
    measure_load_start ""
    wait "$measure_pid"
    echo $? >"$MEASURE_R/$measure_name.rc"
    measure_load_stop
}
