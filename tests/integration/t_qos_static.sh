#!/bin/bash
# Static TBF enforcement: an admin rule `jobid={J} rate=R` holds job J to R
# (+-5 % over a 5 s window, measured client-side with O_DIRECT 1 MiB
# requests) for R = 10 and 50 MB/s, with 1 and 4 streams, for writes and
# for reads, while an unlimited job on the same OSS runs far above R.
# Then the same limits through the MDS (qos_policy=static, job limits)
# with enforce=blkio (4 streams per job), unless the OSS says blkio is
# unavailable here.
#
# Each job has its own mount (one mount.pfs per compute node, as on a real
# cluster): jobs sharing one mount.pfs also share its FUSE worker threads,
# and a throttled job's blocked requests hold them.
# One OST, emulated at 400 MB/s so the unlimited job cannot take all CPU.
# timeout: 150
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qos_lib.sh"

JOBS="s10a s10b s50a s50b free"   # rate (10/50), a = 1 stream, b = 4 streams
start_cluster --oss 1 --mounts 5 --oss-opt ost_bandwidth=400
read -ra M <<<"$MNTS"
for j in s10a s10b s50a s50b; do
	admin nrs tbf rule start "r_$j" "jobid={$j} rate=${j:1:2}MB/s" >/dev/null ||
		fail "rule start r_$j"
done
rules=$(admin --json nrs tbf rule list | jq -r '.oss[0].rules[].expr' | sort | tr '\n' ';')
[ "$rules" = "jobid={s10a} rate=10MB/s;jobid={s10b} rate=10MB/s;jobid={s50a} rate=50MB/s;jobid={s50b} rate=50MB/s;" ] ||
	fail "rules listed: $rules"

streams() { case $1 in *b) echo 4 ;; free) echo 2 ;; *) echo 1 ;; esac; }

# run_phase MODE: every job at once on its own mount; 7 s, the first 2
# (the bucket's initial depth) not counted.
run_phase() {
	local mode=$1 k=0 j
	for j in $JOBS; do
		load "$j" "$mode" "${M[$k]}/$j" --streams "$(streams "$j")" --seconds 7 --skip 2 \
			--direct --size 32M >"$T/$mode.$j" &
		k=$((k + 1))
	done
	wait
	for j in $JOBS; do
		r=$(mbps "$(cat "$T/$mode.$j")")
		echo "$mode $j ($(streams "$j") streams): $r MB/s"
		grep -q "errors=0" "$T/$mode.$j" || fail "$mode $j: I/O errors"
		case $j in
		free) gt "$r" 100 || fail "$mode: unlimited job held to $r MB/s" ;;
		*) near "$r" "${j:1:2}" 5 || fail "$mode $j: $r MB/s, want ${j:1:2} +- 5 %" ;;
		esac
	done
}

k=0
for j in $JOBS; do mkdir -p "${M[$k]}/$j"; k=$((k + 1)); done
run_phase write
ok "writes: 10 and 50 MB/s rules hold with 1 and 4 streams; unlimited job above 100 MB/s"
# Read the files back (an unlimited job id writes them first, to full size).
k=0
for j in $JOBS; do
	load prep prep "${M[$k]}/$j" --streams "$(streams "$j")" --direct --size 32M >/dev/null ||
		fail "prep $j"
	k=$((k + 1))
done
run_phase read
ok "reads: 10 and 50 MB/s rules hold with 1 and 4 streams; unlimited job above 100 MB/s"

# ---- enforce=blkio: limits from the MDS (static policy + job limits) ----
"$REPO/deploy/pfs-cluster" stop "$CLUSTER" >/dev/null 2>&1
rm -rf "$CLUSTER"
start_cluster --oss 1 --mounts 4 --oss-opt ost_bandwidth=400 --oss-opt enforce=blkio \
	--mds-opt qos_policy=static --mds-opt qos_interval_s=1
read -ra M <<<"$MNTS"
if grep -q "blkio unavailable" "$CLUSTER/oss0.log"; then
	echo "SKIP blkio part: $(grep -h "blkio unavailable" "$CLUSTER/oss0.log" | sed 's/^.* pfs-oss\[[0-9]*\] [a-z]*: //')"
	exit 0
fi
grep -q "enforce=blkio: blkio cgroup" "$CLUSTER/oss0.log" || fail "OSS did not say how it enforces"
BJOBS="bw10 bw50 br10 br50"
for j in $BJOBS; do admin job register "$j" --nodes 1 --limit "${j:2:2}MB/s" >/dev/null || fail "register $j"; done
k=0
for j in $BJOBS; do
	mkdir -p "${M[$k]}/$j"
	case $j in br*) load prep prep "${M[$k]}/$j" --streams 4 --direct --size 16M >/dev/null || fail "prep $j" ;; esac
	k=$((k + 1))
done
# The MDS sees a job busy at its next decision and pushes its limit: 4 s
# of warm-up, then a 6 s window.  4 streams per job: with blkio every
# request waits for the real disk (O_DIRECT), so one stream would measure
# the disk's latency on this shared machine as much as the throttle.
k=0
for j in $BJOBS; do
	mode=write; case $j in br*) mode=read ;; esac
	load "$j" "$mode" "${M[$k]}/$j" --streams 4 --seconds 10 --skip 4 --direct --size 16M >"$T/blk.$j" &
	k=$((k + 1))
done
sleep 6
admin --json qos show | jq -c '[.allocations[] | {job, alloc_bytes_per_s}]'
wait
for j in $BJOBS; do
	r=$(mbps "$(cat "$T/blk.$j")")
	echo "blkio $j: $r MB/s"
	grep -q "errors=0" "$T/blk.$j" || fail "blkio $j: I/O errors"
	near "$r" "${j:2:2}" 5 || fail "blkio $j: $r MB/s, want ${j:2:2} +- 5 %"
done
ok "enforce=blkio: MDS limits of 10 and 50 MB/s hold for reads and writes"
