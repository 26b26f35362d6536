#!/bin/bash
# bench/run.sh — the core benchmark: one run, three targets side by side.
#   local        the local disk directly (the directory the OSTs live on)
#   passthrough  a plain FUSE passthrough of the local disk (bench/passthrough_main.c)
#   pfs          a local pfs cluster: MDS + 4 OSS on loopback, FUSE mount
# Workloads (pfs-bench): sequential 1 MiB writes and reads with 4 streams,
# 4 KiB random writes and reads, create/stat/unlink rates.  Each is run
# REPS times (default 3), the median is reported, with the ratio to the
# passthrough.  Sequential writes get one untimed warm-up pass first.
# Kernel caches are dropped before every read phase and
# before the stat and unlink phases (every lookup reaches the file system).
# Output: a markdown section on stdout (and in $OUT if set).
#   PFS_BIN=build/bin bench/run.sh        (or: make bench)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
: "${PFS_BIN:=$repo/build/bin}"
export PFS_BIN
REPS=${REPS:-3}
SEQ_SIZE=${SEQ_SIZE:-256M}     # per stream
RAND_SIZE=${RAND_SIZE:-256M}
RAND_OPS=${RAND_OPS:-20000}
MD_FILES=${MD_FILES:-5000}
W=${BENCH_DIR:-/var/tmp/pfs-bench}
rm -rf "$W"; mkdir -p "$W/local" "$W/ptsrc" "$W/ptmnt"

cleanup() {
	mountpoint -q "$W/ptmnt" && umount "$W/ptmnt" || true
	"$repo/deploy/pfs-cluster" stop "$W/cluster" >/dev/null 2>&1 || true
	rm -rf "$W"
}
trap cleanup EXIT

"$PFS_BIN/pfs-passthrough" "$W/ptsrc" "$W/ptmnt"
pfsmnt=$("$repo/deploy/pfs-cluster" start "$W/cluster" --oss 4)
declare -A dirs=([local]=$W/local [passthrough]=$W/ptmnt [pfs]=$pfsmnt)
targets="local passthrough pfs"
phases="seqwrite seqread randwrite randread create stat unlink"
declare -A res

# Let the disk settle before a measured phase: what an earlier phase left
# dirty (or pfs's background object destroys) must not be billed to it.
settle() { sync; sleep 1; sync; }
drop() { settle; echo 3 > /proc/sys/vm/drop_caches; }
val() { awk '{print $2}'; }

for rep in $(seq 1 "$REPS"); do
	for t in $targets; do
		d=${dirs[$t]}
		# Warm-up (untimed): on this VM the first large write after other
		# work runs at half speed for every target while the hypervisor
		# backs freshly reused memory; one untimed pass makes the timed
		# pass measure the file system, not that.
		"$PFS_BIN/pfs-bench" seqwrite "$d" --streams 4 --size "$SEQ_SIZE" >/dev/null
		rm -f "$d"/seq.*
		settle
		res[$t,seqwrite,$rep]=$("$PFS_BIN/pfs-bench" seqwrite "$d" --streams 4 --size "$SEQ_SIZE" | val)
		drop
		res[$t,seqread,$rep]=$("$PFS_BIN/pfs-bench" seqread "$d" --streams 4 --size "$SEQ_SIZE" | val)
		rm -f "$d"/seq.*
		settle
		res[$t,randwrite,$rep]=$("$PFS_BIN/pfs-bench" randwrite "$d" --size "$RAND_SIZE" --ops "$RAND_OPS" --threads 4 | val)
		drop
		res[$t,randread,$rep]=$("$PFS_BIN/pfs-bench" randread "$d" --size "$RAND_SIZE" --ops "$RAND_OPS" --threads 4 | val)
		rm -f "$d/rand.dat"
		settle
		out=$("$PFS_BIN/pfs-bench" md "$d" --files "$MD_FILES" --threads 4 --cold 1)
		for p in create stat unlink; do
			res[$t,$p,$rep]=$(echo "$out" | awk -v p=$p '$1 == p {print $2}')
		done
		echo "rep $rep $t:$(for p in $phases; do printf ' %s=%s' $p "${res[$t,$p,$rep]}"; done)" >&2
	done
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

{
echo "## Core benchmark — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"\
" $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, kernel $(uname -r),"\
" disk under $W: $(df -h "$W" | awk 'NR==2 {print $1}')."
echo "Command: \`make bench\` (bench/run.sh; REPS=$REPS, 4 streams x $SEQ_SIZE sequential,"\
" $RAND_OPS random 4 KiB ops on a $RAND_SIZE file with 4 threads, $MD_FILES files x 4 threads)."
echo "Medians of $REPS runs; ratio = pfs / passthrough."
echo
echo "| workload | unit | local disk | FUSE passthrough | pfs (4 OSS) | pfs / passthrough |"
echo "|---|---|---:|---:|---:|---:|"
for p in $phases; do
	unit="ops/s"; case $p in seq*) unit="MiB/s" ;; esac
	row="| $p | $unit"
	for t in $targets; do
		vals=""
		for rep in $(seq 1 "$REPS"); do vals="$vals ${res[$t,$p,$rep]}"; done
		m=$(median $vals)
		eval "med_$t=$m"
		row="$row | $m"
	done
	ratio=$(awk -v a="$med_pfs" -v b="$med_passthrough" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}')
	echo "$row | $ratio |"
done
} | tee ${OUT:+"$OUT"}
