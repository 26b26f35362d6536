# bench/lib.sh — what the benchmark scripts share (sourced by bench/run.sh,
# the core benchmark, and bench/peers.sh, pfs against CephFS and
# GlusterFS): package installs, the bounded phases, one repetition of the
# pfs-bench and fio workloads on one target, medians and ratios.
#
# The caller sets, before calling: BENCH_NAME (prefix of messages), W (work
# directory: problems.log, fio.json), PFS_BIN, SEQ_SIZE, RAND_SIZE,
# RAND_OPS, MD_FILES, FIO, FIO_JOBS, FIO_SIZE, FIO_RUNTIME, PHASE_TIMEOUT,
# core_phases, fio_phases; declares the associative array res
# (res[target,workload,rep]); defines drop (settle, then the kernel's caches
# and whatever else of the target holds data: peers.sh remounts the peers'
# FUSE clients).  $t and $rep name the target and repetition being run.

apt_install() { # apt_install PKG...: quietly, waiting for a busy dpkg lock
	local sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=120 install -y -qq \
		--no-install-recommends "$@" >/dev/null 2>&1 && return 0
	DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=120 update -qq >/dev/null 2>&1 &&
		DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=120 install -y -qq \
			--no-install-recommends "$@" >/dev/null 2>&1
}

# page_reporting_hold, _restore, _mib: bench/page_reporting.sh
# shellcheck source=page_reporting.sh
. "$(dirname "${BASH_SOURCE[0]}")/page_reporting.sh"

# Let the disk settle before a measured phase: what an earlier phase left
# dirty (or pfs's background object destroys) must not be billed to it.
settle() { sync; sleep 1; sync; }
val() { awk '{print $2}'; }

# bounded LIMIT CMD...: CMD's stdout, CMD cut off after LIMIT seconds.  A
# failure or a timeout is reported (stderr and the run's problem list) and
# the phase's value stays empty ("-" in the tables): one hung FUSE request
# must not hang the whole run.
bounded() {
	local limit=$1 rc=0 out msg
	shift
	out=$(timeout -k 10 "$limit" "$@") || rc=$?
	if [ $rc -ne 0 ]; then
		msg="failed (exit $rc)"
		[ $rc -eq 124 ] || [ $rc -eq 137 ] && msg="cut off after ${limit}s"
		echo "$BENCH_NAME: rep $rep $t: $* $msg" >&2
		echo "rep $rep $t: \`$*\` $msg" >>"$W/problems.log"
	fi
	printf '%s\n' "$out"
}

# fio_phase DIR RW BS -> "MiB/s IOPS" of one fio run (FIO_JOBS jobs, one
# file each, reused from phase to phase: fio.0 .. fio.3).
fio_phase() {
	local d=$1 rw=$2 bs=$3 key=read
	local -a extra=()
	case $rw in *write) key=write; extra=(--end_fsync=1) ;; esac
	if ! timeout -k 10 $((FIO_RUNTIME + PHASE_TIMEOUT)) fio --name="$rw" --directory="$d" --filename_format='fio.$jobnum' \
		--numjobs=$FIO_JOBS --ioengine=psync --iodepth=1 --direct=0 --fallocate=none \
		--size="$FIO_SIZE" --bs="$bs" --rw="$rw" --runtime="$FIO_RUNTIME" \
		--group_reporting --output-format=json "${extra[@]}" >"$W/fio.json" 2>"$W/fio.err"; then
		echo "$BENCH_NAME: rep $rep $t: fio $rw failed or was cut off: $(tail -n 3 "$W/fio.err")" >&2
		echo "rep $rep $t: fio $rw failed or was cut off after $((FIO_RUNTIME + PHASE_TIMEOUT))s" >>"$W/problems.log"
		echo "- -"
		return 0
	fi
	jq -r --arg k "$key" '.jobs[0][$k] | "\(.bw_bytes / 1048576 * 10 | round / 10) \(.iops | round)"' "$W/fio.json"
}

# workloads DIR: one repetition ($rep) of pfs-bench's phases, and fio's
# when FIO=1, on target $t mounted at DIR, into res[$t,...,$rep]; the
# repetition's line for the raw log in $line.
workloads() {
	local d=$1 out p
	# Warm-up (untimed): on this VM the first large write after other
	# work runs at half speed for every target while the hypervisor
	# backs freshly reused memory (page_reporting_hold above); one
	# untimed pass makes the timed pass measure the file system, not that.
	bounded "$PHASE_TIMEOUT" "$PFS_BIN/pfs-bench" seqwrite "$d" --streams 4 --size "$SEQ_SIZE" >/dev/null
	rm -f "$d"/seq.*
	settle
	res[$t,seqwrite,$rep]=$(bounded "$PHASE_TIMEOUT" "$PFS_BIN/pfs-bench" seqwrite "$d" --streams 4 --size "$SEQ_SIZE" | val)
	drop
	res[$t,seqread,$rep]=$(bounded "$PHASE_TIMEOUT" "$PFS_BIN/pfs-bench" seqread "$d" --streams 4 --size "$SEQ_SIZE" | val)
	rm -f "$d"/seq.*
	settle
	res[$t,randwrite,$rep]=$(bounded "$PHASE_TIMEOUT" "$PFS_BIN/pfs-bench" randwrite "$d" --size "$RAND_SIZE" --ops "$RAND_OPS" --threads 4 | val)
	drop
	res[$t,randread,$rep]=$(bounded "$PHASE_TIMEOUT" "$PFS_BIN/pfs-bench" randread "$d" --size "$RAND_SIZE" --ops "$RAND_OPS" --threads 4 | val)
	rm -f "$d/rand.dat"
	settle
	out=$(bounded "$PHASE_TIMEOUT" "$PFS_BIN/pfs-bench" md "$d" --files "$MD_FILES" --threads 4 --cold 1)
	rm -rf "$d/md"
	for p in create stat unlink; do
		res[$t,$p,$rep]=$(echo "$out" | awk -v p=$p '$1 == p {print $2}')
	done
	line="rep $rep $t:$(for p in $core_phases; do printf ' %s=%s' $p "${res[$t,$p,$rep]}"; done)"
	[ "$FIO" = 1 ] || return 0
	# seqwrite lays the files out, the other phases reuse them.  An
	# untimed pass first, as for pfs-bench: the first large write after
	# other work is slow on this VM for every target (fio measured 470
	# vs. 860-970 MiB/s on the passthrough).
	settle
	fio_phase "$d" write 1M >/dev/null
	rm -f "$d"/fio.*
	settle
	read -r res[$t,fio-seqwrite,$rep] _ < <(fio_phase "$d" write 1M)
	drop
	read -r res[$t,fio-seqread,$rep] _ < <(fio_phase "$d" read 1M)
	settle
	read -r _ res[$t,fio-randwrite,$rep] < <(fio_phase "$d" randwrite 4k)
	drop
	read -r _ res[$t,fio-randread,$rep] < <(fio_phase "$d" randread 4k)
	rm -f "$d"/fio.*
	line="$line |$(for p in $fio_phases; do printf ' fio-%s=%s' $p "${res[$t,fio-$p,$rep]}"; done)"
}

# median of the numeric arguments ("-" if none)
median() {
	printf '%s\n' "$@" | grep -E '^[0-9.]+([eE][-+]?[0-9]+)?$' | sort -g |
		awk '{a[NR]=$1} END {
			if (NR == 0) { print "-"; exit }
			m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2
			printf (m >= 1000 ? "%.0f\n" : "%.1f\n"), m }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "-" || b == "-" || b <= 0) print "-"; else printf "%.2f", a / b}'; }
core_unit() { case $1 in seq*) echo MiB/s ;; *) echo ops/s ;; esac; }
fio_unit() { case $1 in seq*) echo MiB/s ;; *) echo IOPS ;; esac; }
