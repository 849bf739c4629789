# Issue 53: the background load of `hostc measure`'s VM windows (measure-untuned.sh,
# measure-tuned.sh): 6 nice'd shells that fork /bin/true in a loop, so that each is
# switched in again at every fork and wait.  Started from the step's service, they run
# where its CPUs are: every CPU untuned, the housekeeping CPUs tuned.
measure_load_start() {
    MEASURE_LOAD=""
    for _ in 1 2 3 4 5 6; do
        nice -n 19 sh -c 'while :; do /bin/true; done' >/dev/null 2>&1 &
        MEASURE_LOAD="$MEASURE_LOAD $!"
    done
}
measure_load_stop() {
    # shellcheck disable=SC2086  # a list of PIDs
    kill $MEASURE_LOAD 2>/dev/null
    # shellcheck disable=SC2086
    wait $MEASURE_LOAD 2>/dev/null
}
