#!/bin/bash
# bench/run.sh — the core benchmark: one run, three targets side by side.
#   local        the local disk directly (the directory the OSTs live on)
#   passthrough  a plain FUSE passthrough of the local disk (bench/passthrough_main.c)
#   pfs          a local pfs cluster: MDS + 4 OSS on loopback, FUSE mount
# Three tools, each against all three targets:
#   pfs-bench    sequential 1 MiB writes and reads with 4 streams, 4 KiB random
#                writes and reads (4 threads), create/stat/unlink rates
#   fio          (Debian's; installed here when missing) sequential 1 MiB
#                write/read and 4 KiB random write/read, numjobs 4, psync,
#                iodepth 1, direct=0 (FUSE), $FIO_SIZE per job, each phase
#                bounded to $FIO_RUNTIME s; writes end with fsync (end_fsync=1)
#   IOR, mdtest  only when on PATH (not packaged in Debian; bench/README.md says
#                how to build them), under mpirun -np 4 when Debian's openmpi is
#                installed, else as one process
# Every workload runs REPS times (default 3); the targets are interleaved
# within a repetition (their order rotates from one repetition to the next)
# and the median is reported with the ratio to the passthrough.  Sequential
# pfs-bench writes get one untimed warm-up pass first.  Kernel caches are
# dropped before every read phase and before the stat and unlink phases.
#
# Output, in $RESDIR (default bench/results/):
#   core.md       the markdown section for bench/RESULTS.md (also on stdout,
#                 and in $OUT if set)
#   core.tsv      medians: suite, workload, unit, local, passthrough, pfs
#   core-raw.tsv  every repetition's value
#   *.png         bar charts, ratio to the passthrough (bench/plot_core.sh;
#                 PLOT=0 skips them)
#   PFS_BIN=build/bin bench/run.sh        (or: make bench)
# Settings (environment): REPS SEQ_SIZE RAND_SIZE RAND_OPS MD_FILES FIO=0|1
# FIO_SIZE FIO_RUNTIME IOR=0|1 IOR_NP IOR_BLOCK PHASE_TIMEOUT BENCH_DIR RESDIR OUT
# PLOT PAGE_REPORTING=hold|leave (a VM's free page reporting, held off for
# the run by default: bench/page_reporting.sh says why).  A phase that fails
# or runs past PHASE_TIMEOUT (180 s) is reported and left out of the medians
# (a hung FUSE request cannot hang the run).
# Takes about 6 minutes with REPS=3 on the 2-vCPU development VM (IOR and
# mdtest, when present, add about a minute per repetition).
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
FIO=${FIO:-1}
FIO_JOBS=4
FIO_SIZE=${FIO_SIZE:-256M}     # per job
FIO_RUNTIME=${FIO_RUNTIME:-10} # seconds, upper bound of each fio phase
PHASE_TIMEOUT=${PHASE_TIMEOUT:-180} # seconds before any one phase is cut off
IOR=${IOR:-1}
IOR_NP=${IOR_NP:-4}
IOR_BLOCK=${IOR_BLOCK:-256m}   # per task (file per process)
W=${BENCH_DIR:-/var/tmp/pfs-bench}
RESDIR=${RESDIR:-$here/results}
PLOT=${PLOT:-1}

t_begin=$(date +%s)
load_begin=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p "$RESDIR"
RESDIR=$(cd "$RESDIR" && pwd)

# --- tools ----------------------------------------------------------------------
BENCH_NAME=bench
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
command -v jq >/dev/null || apt_install jq || { echo "bench: jq is needed" >&2; exit 1; }
fio_note=""
if [ "$FIO" = 1 ] && ! command -v fio >/dev/null; then
	echo "bench: installing fio (Debian)" >&2
	apt_install fio || { FIO=0; fio_note="fio is not installed and apt-get could not install it"; }
fi
[ "$FIO" = 1 ] || fio_note=${fio_note:-"FIO=0"}
ior_note=""
MPIRUN=()
if [ "$IOR" = 1 ]; then
	if ! command -v ior >/dev/null || ! command -v mdtest >/dev/null; then
		IOR=0
		ior_note="ior and mdtest are not on PATH (Debian does not package them; bench/README.md shows how to build them from their public source)"
	elif command -v mpirun >/dev/null; then
		# One node, loopback only: shared-memory transport between the
		# ranks, the runtime's own TCP on lo.
		MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np "$IOR_NP"
			--mca btl self,vader --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
	else
		IOR_NP=1
		ior_note="no mpirun on PATH: IOR and mdtest ran as one process each"
	fi
else
	ior_note="IOR=0"
fi

# unmount_all: every mount under $W (also a dead FUSE mount, which
# mountpoint(1) does not recognise: ENOTCONN), deepest first.
unmount_all() {
	local m
	for m in $(awk -v w="$W/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}
PT_PID=
cleanup() {
	page_reporting_restore
	unmount_all
	"$repo/deploy/pfs-cluster" stop "$W/cluster" >/dev/null 2>&1 || true
	if [ -n "$PT_PID" ]; then
		kill "$PT_PID" 2>/dev/null || true
		wait "$PT_PID" 2>/dev/null || true
	fi
	rm -rf "$W"
}
# What an interrupted run left behind.
[ -f "$W/cluster/cluster.env" ] && "$repo/deploy/pfs-cluster" stop "$W/cluster" >/dev/null 2>&1
unmount_all
rm -rf "$W"; mkdir -p "$W/local" "$W/ptsrc" "$W/ptmnt"
: >"$W/raw.log"
: >"$W/problems.log"
trap cleanup EXIT
page_reporting_hold

"$PFS_BIN/pfs-passthrough" "$W/ptsrc" "$W/ptmnt" -f &
PT_PID=$!
for _ in $(seq 1 100); do grep -q " $W/ptmnt " /proc/mounts && break; sleep 0.1; done
grep -q " $W/ptmnt " /proc/mounts || { echo "bench: pfs-passthrough did not mount" >&2; exit 1; }
pfsmnt=$("$repo/deploy/pfs-cluster" start "$W/cluster" --oss 4)
declare -A dirs=([local]=$W/local [passthrough]=$W/ptmnt [pfs]=$pfsmnt)
targets="local passthrough pfs"
core_phases="seqwrite seqread randwrite randread create stat unlink"
fio_phases="seqwrite seqread randwrite randread"
ior_phases="ior-write ior-read mdtest-create mdtest-stat mdtest-remove"
declare -A res

drop() { settle; echo 3 > /proc/sys/vm/drop_caches; }

# IOR's summary table: "Operation Max(MiB) Min(MiB) Mean(MiB) ..." then one
# row per operation; mdtest's "SUMMARY rate" block: "File creation : max
# min mean stddev".  The means (one iteration: all equal).
ior_mean() { awk -v op="$1" '/^Operation/ && /Max\(MiB\)/ {s = 1; next} s && $1 == op {print $4; exit}'; }
mdtest_mean() { awk -v op="$1" '/SUMMARY rate/ {s = 1} s && index($0, op) {sub(/.*:/, ""); print $3; exit}'; }
ior_phase() { # ior_phase TARGET REP: IOR write, read (cold), mdtest
	local t=$1 rep=$2 d=${dirs[$1]}
	mkdir -p "$d/ior"
	res[$t,ior-write,$rep]=$(bounded "$PHASE_TIMEOUT" "${MPIRUN[@]}" ior -a POSIX -F -e -w -k -t 1m -b "$IOR_BLOCK" -i 1 \
		-o "$d/ior/f" 2>&1 | tee "$W/ior.out" | ior_mean write) || true
	drop
	res[$t,ior-read,$rep]=$(bounded "$PHASE_TIMEOUT" "${MPIRUN[@]}" ior -a POSIX -F -r -k -t 1m -b "$IOR_BLOCK" -i 1 \
		-o "$d/ior/f" 2>&1 | tee "$W/ior.out" | ior_mean read) || true
	rm -rf "$d/ior"
	settle
	bounded "$PHASE_TIMEOUT" "${MPIRUN[@]}" mdtest -F -u -i 1 -n $((MD_FILES / IOR_NP)) -d "$d/mdtest" >"$W/mdtest.out"
	res[$t,mdtest-create,$rep]=$(mdtest_mean "File creation" <"$W/mdtest.out")
	res[$t,mdtest-stat,$rep]=$(mdtest_mean "File stat" <"$W/mdtest.out")
	res[$t,mdtest-remove,$rep]=$(mdtest_mean "File removal" <"$W/mdtest.out")
	rm -rf "$d/mdtest"
}

for rep in $(seq 1 "$REPS"); do
	# Rotate the order of the targets: no target always follows the same one.
	set -- $targets
	for _ in $(seq 2 "$rep"); do set -- "${@:2}" "$1"; done
	for t in "$@"; do
		workloads "${dirs[$t]}"
		if [ "$IOR" = 1 ]; then
			settle
			ior_phase "$t" "$rep"
			line="$line |$(for p in $ior_phases; do printf ' %s=%s' $p "${res[$t,$p,$rep]:-}"; done)"
		fi
		echo "$line" >&2
		echo "$line" >>"$W/raw.log"
	done
done

# table SUITE PREFIX PHASES UNIT-OF-PHASE-FUNCTION: markdown rows, TSV rows
printf 'suite\tworkload\tunit\tlocal\tpassthrough\tpfs\n' >"$RESDIR/core.tsv"
printf 'suite\trep\ttarget\tworkload\tvalue\n' >"$RESDIR/core-raw.tsv"
table() {
	local suite=$1 prefix=$2 phases=$3 unitfn=$4 p unit row vals m t rep
	echo "| workload | unit | local disk | FUSE passthrough | pfs (4 OSS) | pfs / passthrough | local / passthrough |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for p in $phases; do
		unit=$($unitfn "$p")
		row="| $p | $unit"
		for t in $targets; do
			vals=""
			for rep in $(seq 1 "$REPS"); do
				vals="$vals ${res[$t,$prefix$p,$rep]:--}"
				printf '%s\t%s\t%s\t%s\t%s\n' "$suite" "$rep" "$t" "$p" "${res[$t,$prefix$p,$rep]:--}" >>"$RESDIR/core-raw.tsv"
			done
			m=$(median $vals)
			eval "med_$t=\$m"
			row="$row | $m"
		done
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$suite" "$p" "$unit" "$med_local" "$med_passthrough" "$med_pfs" >>"$RESDIR/core.tsv"
		echo "$row | $(ratio "$med_pfs" "$med_passthrough") | $(ratio "$med_local" "$med_passthrough") |"
	done
}
ior_unit() { case $1 in ior-*) echo MiB/s ;; *) echo ops/s ;; esac; }

t_end=$(date +%s)
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
{
echo "## Core benchmark — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"\
" $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, kernel $(uname -r),"\
" disk under $W: $(df -h "$W" | awk 'NR==2 {print $1}')."
echo "Load average (1/5/15 min) at the start: $load_begin; at the end: $load_end."
echo "Host memory: $PR_NOTE; $(page_reporting_mib) MiB handed back to the host during the run."
echo "Command: \`make bench\` (bench/run.sh; REPS=$REPS). Run time $(( (t_end - t_begin) / 60 )) min $(( (t_end - t_begin) % 60 )) s."
echo "Medians of $REPS runs, the three targets interleaved (order rotated per repetition)."
echo
echo "### pfs-bench"
echo
echo "4 streams x $SEQ_SIZE sequential (1 MiB, fsync at the end), $RAND_OPS random 4 KiB ops"\
" on a $RAND_SIZE file with 4 threads, $MD_FILES files x 4 threads (cold caches for stat and unlink)."
echo
table core "" "$core_phases" core_unit
echo
echo "### fio$( [ "$FIO" = 1 ] && echo " ($(fio --version))")"
echo
if [ "$FIO" = 1 ]; then
	echo "numjobs=$FIO_JOBS (one file each), ioengine=psync, iodepth=1, direct=0, $FIO_SIZE per job,"\
" runtime bound ${FIO_RUNTIME} s per phase, end_fsync=1 on writes; seq = 1 MiB blocks, rand = 4 KiB;"\
" caches dropped before the reads; the random phases reuse the files the sequential write laid out."
	echo
	table fio fio- "$fio_phases" fio_unit
else
	echo "Not run: $fio_note."
fi
echo
echo "### IOR and mdtest"
echo
if [ "$IOR" = 1 ]; then
	echo "$IOR_NP task(s)$( [ ${#MPIRUN[@]} -gt 0 ] && echo " (mpirun, one node)"), IOR POSIX file per process,"\
" 1 MiB transfers, $IOR_BLOCK per task, fsync after the write, caches dropped before the read;"\
" mdtest -F -u, $((MD_FILES / IOR_NP)) files per task. ${ior_note}"
	echo
	table ior "" "$ior_phases" ior_unit
else
	echo "Not run: $ior_note."
fi
echo
if [ -s "$W/problems.log" ]; then
	echo "Problems during the run (their values are missing, \"-\"; medians of the rest):"
	echo
	sed 's/^/- /' "$W/problems.log"
	echo
fi
echo "Raw values of each repetition:"
echo
echo '```'
cat "$W/raw.log"
echo '```'
} >"$RESDIR/core.md"
cat "$RESDIR/core.md"
[ -n "${OUT:-}" ] && cp "$RESDIR/core.md" "$OUT"
if [ "$PLOT" = 1 ]; then
	TITLE_NOTE=${TITLE_NOTE:-"REPS=$REPS; load average ${load_begin%% *} at the start, ${load_end%% *} at the end, on $(nproc) CPUs"} \
		bash "$here/plot_core.sh" "$RESDIR/core.tsv" "$RESDIR" >&2 || echo "bench: plot_core.sh failed (no charts)" >&2
fi
echo "bench: done in $(( $(date +%s) - t_begin )) s; results in $RESDIR" >&2
