# Issue 53: `hostc measure` on the tuned guest.  Sourced by step2.sh (boot 2: v1 in
# effect) right after its `hostc audit`, before anything there moves an IRQ or starts a
# unit.  v1 isolates CPUs 2-3 (demo2) and 6-7 (demo); hostc owns the IRQs.
#
# Three planted windows (5 s each): the serial console's IRQ (ttyS0, an IO-APIC line
# hostc-tuning placed on the housekeeping CPUs) moved onto isolated CPU 6 while a loop
# writes to /dev/ttyS0, and a shell pinned with taskset to isolated CPU 7 (moved to the
# root cgroup first: this 6.1 kernel's system.slice cpuset holds the step's service on
# the housekeeping CPUs, so taskset could not pin it there).  The IRQ's affinity is put
# back after each window.  Then three clean windows under the load of measure-untuned.sh
# (started from this step's service: the housekeeping CPUs).  The first clean window
# also writes a record file (--record), the others none.
# Results under /root/results/measure/: plant-N.{json,rc,err,txt}, clean-N.{json,rc,err},
# record.json.
MEASURE_R=/root/results/measure
mkdir -p "$MEASURE_R"
measure_spec=/root/vmtest/v1/node.toml
measure_irq=$(awk '$NF == "ttyS0" { sub(":", "", $1); print $1; exit }' /proc/interrupts)
measure_was=$(cat "/proc/irq/$measure_irq/smp_affinity_list" 2>/dev/null)
for n in 1 2 3; do
    echo 6 >"/proc/irq/$measure_irq/smp_affinity_list"
    (while :; do echo "hostc measure plant $n" >/dev/ttyS0; sleep 0.05; done) >/dev/null 2>&1 &
    measure_writer=$!
    sh -c 'echo $$ >/sys/fs/cgroup/cgroup.procs && exec taskset -c 7 sh -c "while :; do sleep 0.05; done"' >/dev/null 2>&1 &
    measure_pinned=$!
    sleep 1
    {
        echo "irq $measure_irq ttyS0 was $measure_was now $(cat "/proc/irq/$measure_irq/smp_affinity_list") effective $(cat "/proc/irq/$measure_irq/effective_affinity_list" 2>/dev/null)"
        echo "pinned $measure_pinned $(grep Cpus_allowed_list "/proc/$measure_pinned/status" 2>&1) cgroup $(cat "/proc/$measure_pinned/cgroup" 2>&1)"
    } >"$MEASURE_R/plant-$n.txt" 2>&1
    hostc measure "$measure_spec" --window 5 --json --no-record \
        >"$MEASURE_R/plant-$n.json" 2>"$MEASURE_R/plant-$n.err"
    echo $? >"$MEASURE_R/plant-$n.rc"
    kill "$measure_writer" "$measure_pinned" 2>/dev/null
    wait "$measure_writer" "$measure_pinned" 2>/dev/null
    echo "$measure_was" >"/proc/irq/$measure_irq/smp_affinity_list"
    echo "restored $(cat "/proc/irq/$measure_irq/smp_affinity_list")" >>"$MEASURE_R/plant-$n.txt"
done
. /root/vmtest/steps/measure-load.sh
for n in 1 2 3; do
    measure_record="--no-record"
    [ "$n" = 1 ] && measure_record="--record=$MEASURE_R/record.json"
    measure_loaded "clean-$n" "$measure_spec" --window 5 --json "$measure_record"
done
