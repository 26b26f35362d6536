#!/bin/bash
# Per-job RPC slots (issue 12, client/credit.h): on one mount a job with 16
# writers and a job with 1 writer, equal weights, share one OSS whose OST
# is emulated at 40 MB/s (both jobs can exceed it).  With per-job slots
# (the default) the 1-writer job gets at least 40 % of what they share;
# the same run on a second mount with -o job_slots=0 (first come, first
# served) is reported for comparison, not asserted.
#
# The mounts use max_conns=2: the OSS serves its queue FIFO, so a job's
# share of the OST follows its share of the RPCs in flight, and a job with
# one synchronous writer never has more than one.  With 2 slots per OSS
# (what RCC grants a client of a congested OSS) fair slots mean 1 + 1;
# with 8 the lent slots would go to the 16 writers (work-conserving) and
# the single writer would get about 1/8 whatever the client did
# (bench/RESULTS.md "ASCAR and per-job slots" has both).
# timeout: 90
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qos_lib.sh"

BW=${JOBSLOTS_BW:-40}
CONNS=${JOBSLOTS_CONNS:-2}
start_cluster --oss 1 --oss-opt ost_bandwidth="$BW" --mount-opt max_conns="$CONNS"
M2=$CLUSTER/mnt_fcfs
mkdir -p "$M2"
"$PFS_BIN/mount.pfs" "$MDS" "$M2" -o "log=file:$CLUSTER/client_fcfs.log,job_slots=0,max_conns=$CONNS,key=$CLUSTER/keys/client.key" ||
	fail "second mount"
trap 'umount "$M2" 2>/dev/null || umount -l "$M2" 2>/dev/null; cleanup' EXIT

run() { # run MOUNT -> "heavy_MBps light_MBps"
	local d=$1/run.$RANDOM
	mkdir -p "$d" || fail "mkdir $d"
	SLURM_JOB_ID=heavy "$QOS_LOAD" write "$d" --streams 16 --bs 1M --size 64M --direct \
		--seconds 8 --skip 2 --prefix h >"$T/h.out" &
	local hp=$!
	SLURM_JOB_ID=light "$QOS_LOAD" write "$d" --streams 1 --bs 1M --size 64M --direct \
		--seconds 8 --skip 2 --prefix l >"$T/l.out" || fail "light run"
	wait $hp || fail "heavy run"
	echo "$(mbps "$(cat "$T/h.out")") $(mbps "$(cat "$T/l.out")")"
	rm -rf "$d"
}
share() { awk -v h="$1" -v l="$2" 'BEGIN { printf "%.1f", 100 * l / (h + l) }'; }

read -r h0 l0 <<<"$(run "$M2")"
s0=$(share "$h0" "$l0")
echo "job_slots=0: heavy $h0 MB/s, light $l0 MB/s: light share $s0 %"
read -r h1 l1 <<<"$(run "$MNT")"
s1=$(share "$h1" "$l1")
echo "job_slots=1: heavy $h1 MB/s, light $l1 MB/s: light share $s1 %"
gt "$s1" 40 || fail "1-writer job got $s1 % (< 40 %) with per-job slots"
ok "1-writer job gets $s1 % with per-job slots ($s0 % without)"
