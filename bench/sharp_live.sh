#!/bin/bash
# sharp_live.sh — SHARP on a live cluster (issue 12; ascar.txt sec. III-F):
# search ASCAR rule sets for a signature workload within a budget of runs,
# write the best one, then compare it with no control and a fixed window.
#
#   bench/sharp_live.sh [--budget N] [--repeat R] [--seconds S] [--bw MBps]
#                       [--out FILE] [--seed N]
#
# Cluster: deploy/pfs-cluster with 1 OSS whose OST is emulated at --bw MB/s
# (default 60), one mount (qos_poll_ms=300, log_level=info).  Signature
# workload (S seconds, default 6): three jobs on that mount, all writing
# 1 MiB O_DIRECT: J1 16 streams, J2 4 streams, J3 bursts (2 streams move
# 16 MiB each, pause 0.5 s, again) — bursty, write-heavy, several jobs
# (tests/integration/tools/qos_load).  Score = aggregate MB/s (the sum of
# the jobs' qos_load rates).
#
# Search (sampled hill climbing, not the Cartesian product; budget N runs,
# default 12): start from the single rule <[0,inf)^3> -> <1, 0, 0>; each
# run draws one rule's action from Table II's grid around its current value
# (m in [0.3, 2] step 0.05·k^i, b in [-2.3, 2.3], tau in [0, 70000] us,
# i.e. qos/sharp.h's qos_sharp_values spacing), and keeps it when the score
# beats the best; after the first half of the budget, the rule is split at
# pt_ratio = the mean the client logged for it (the ASCAR statistics lines,
# client/ascar_ctl.h), so the second half searches two rules.
#
# Comparison (R repeats each, default 3): the best rule set, ASCAR off,
# and a fixed window of 2 ([0,inf)^3 -> <0, 2, 0>); aggregate MB/s and the
# p99 RPC latency the client measured per version (its "ascar ... p99_us"
# log line; the histogram has 2^(1/4) buckets, so +-19 %).  Prints a
# Markdown table; the best rule set goes to --out (default
# bench/results/sharp_best.rules).  Needs root (FUSE) and a build
# (PFS_BIN, default build/bin; tools from $(dirname PFS_BIN)/tests/tools).
set -eu
REPO=$(cd "$(dirname "$0")/.." && pwd)
: "${PFS_BIN:=$REPO/build/bin}"
TOOLS=${PFS_TOOLS:-$(dirname "$PFS_BIN")/tests/tools}
QL=$TOOLS/qos_load
BUDGET=12 REPEAT=3 SECS=6 BW=60 OUT=$REPO/bench/results/sharp_best.rules SEED=$$
while [ $# -gt 0 ]; do
	case $1 in
	--budget) BUDGET=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--bw) BW=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--seed) SEED=$2; shift 2 ;;
	*) echo "usage: $0 [--budget N] [--repeat R] [--seconds S] [--bw MBps] [--out FILE] [--seed N]" >&2; exit 2 ;;
	esac
done
[ -x "$QL" ] || { echo "no $QL: make O=... $(dirname "$PFS_BIN")/tests/tools/qos_load" >&2; exit 1; }
W=$(mktemp -d /tmp/pfs-sharp.XXXXXX)
C=$W/c
trap '"$REPO/deploy/pfs-cluster" stop "$C" >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
MNT=$("$REPO/deploy/pfs-cluster" start "$C" --oss 1 --oss-opt ost_bandwidth="$BW" \
	--mount-opt qos_poll_ms=300 --mount-opt log_level=info)
. "$C/cluster.env"
export PFS_KEY
LOG=$C/client.log
admin() { "$PFS_BIN/pfsadmin" --mds "$MDS" "$@"; }
RANDOM=$SEED

# load FILE|off -> the version now on the MDS, once the client has it
load() {
	local v
	if [ "$1" = off ]; then v=$(admin qos ascar off); else v=$(admin qos ascar load "$1"); fi
	v=$(echo "$v" | sed -n 's/.* v\([0-9]*\) .*/\1/p')
	for _ in $(seq 1 50); do
		grep -q "rule set v$v installed" "$LOG" && break
		sleep 0.1
	done
	echo "$v"
}

# one run of the signature workload -> aggregate MB/s
workload() {
	local d=$MNT/w.$RANDOM p1 p2 end
	mkdir -p "$d"
	SLURM_JOB_ID=J1 "$QL" write "$d" --streams 16 --bs 1M --size 64M --direct --seconds "$SECS" --skip 1 --prefix a >"$W/j1" &
	p1=$!
	SLURM_JOB_ID=J2 "$QL" write "$d" --streams 4 --bs 1M --size 64M --direct --seconds "$SECS" --skip 1 --prefix b >"$W/j2" &
	p2=$!
	: >"$W/j3"
	end=$(( $(date +%s) + SECS ))
	while [ "$(date +%s)" -lt "$end" ]; do
		SLURM_JOB_ID=J3 "$QL" write "$d" --streams 2 --bs 1M --size 16M --direct --once --seconds 3 --prefix c >>"$W/j3" || true
		sleep 0.5
	done
	wait $p1 $p2 || true
	rm -rf "$d"
	{
		sed -n 's/.*MBps=\([0-9.]*\).*/\1/p' "$W/j1" "$W/j2" | tail -n 2
		# J3: bytes over the run (its bursts and pauses)
		awk -v s="$SECS" '{ for (i = 1; i <= NF; i++) if ($i ~ /^bytes=/) b += substr($i, 7) } END { printf "%.3f\n", b / s / 1e6 }' "$W/j3"
	} | awk '{ t += $1 } END { printf "%.2f\n", t }'
}

# the client's p99 for version v (logged when it leaves v) -> us (max over OSSes)
p99_of() {
	local v=$1
	load off >/dev/null
	dd if=/dev/zero of="$MNT/flush" bs=1M count=1 oflag=direct status=none
	sed -n "s/.*ascar .*: v$v rpcs [0-9]* p50_us [0-9]* p99_us \([0-9]*\).*/\1/p" "$LOG" | sort -n | tail -n 1
}
# the mean pt_ratio of rule r under v
pt_mean() {
	sed -n "s/.*ascar .*: v$1 rule $2 hits \([0-9]*\) sum [^ ]* [^ ]* \([^ ]*\).*/\1 \2/p" "$LOG" |
		awk '{ h += $1; s += $2 } END { if (h > 0) printf "%.3f\n", s / h }'
}

# candidate value near x on a geometric grid (qos_sharp_values spacing)
pick() { # pick X LO HI GRAN STEPS
	awk -v x="$1" -v lo="$2" -v hi="$3" -v g="$4" -v st="$5" -v r="$RANDOM" 'BEGIN {
		k = exp(log((hi - lo) / g) / st); i = r % (st + 1); sgn = (int(r / 7) % 2) ? 1 : -1;
		v = x + sgn * g * k ^ i; if (v < lo) v = lo; if (v > hi) v = hi; printf "%.4g\n", v }'
}

write_rules() { # FILE: rules from the arrays LO HI M B TAU (pt_ratio splits)
	local f=$1 i
	: >"$f"
	for i in "${!M[@]}"; do
		printf '[0, inf) [0, inf) [%s, %s) %s %s %s\n' "${LO[$i]}" "${HI[$i]}" "${M[$i]}" "${B[$i]}" "${TAU[$i]}" >>"$f"
	done
}

LO=(0) HI=(inf) M=(1) B=(0) TAU=(0)
write_rules "$W/best.rules"
v=$(load "$W/best.rules")
best=$(workload)
echo "run 1/$BUDGET: start rule set: $best MB/s" >&2
split_done=0
for run in $(seq 2 "$BUDGET"); do
	if [ $split_done = 0 ] && [ "$run" -gt $((BUDGET / 2)) ]; then
		split_done=1
		pm=$(p99_of "$v" >/dev/null; pt_mean "$v" 0)
		if [ -n "$pm" ] && awk -v p="$pm" 'BEGIN { exit !(p > 1) }'; then
			LO=(0 "$pm") HI=("$pm" inf) M=("${M[0]}" "${M[0]}") B=("${B[0]}" "${B[0]}") TAU=("${TAU[0]}" "${TAU[0]}")
			echo "split at pt_ratio $pm" >&2
		fi
	fi
	i=$((RANDOM % ${#M[@]}))
	oM=("${M[@]}") oB=("${B[@]}") oT=("${TAU[@]}")
	M[$i]=$(pick "${M[$i]}" 0.3 2 0.05 4)
	B[$i]=$(pick "${B[$i]}" -2.3 2.3 0.3 4)
	TAU[$i]=$(pick "${TAU[$i]}" 0 70000 500 6)
	write_rules "$W/cand.rules"
	v=$(load "$W/cand.rules")
	s=$(workload)
	echo "run $run/$BUDGET: rule $i -> <${M[$i]}, ${B[$i]}, ${TAU[$i]}>: $s MB/s (best $best)" >&2
	if awk -v a="$s" -v b="$best" 'BEGIN { exit !(a > b) }'; then
		best=$s
		cp "$W/cand.rules" "$W/best.rules"
	else
		M=("${oM[@]}") B=("${oB[@]}") TAU=("${oT[@]}")
	fi
done
mkdir -p "$(dirname "$OUT")"
{ echo "# SHARP (bench/sharp_live.sh): best of $BUDGET runs, $best MB/s, OST ${BW} MB/s"; cat "$W/best.rules"; } >"$OUT"
echo "best rule set ($best MB/s) -> $OUT" >&2

printf '[0, inf) [0, inf) [0, inf) 0 2 0\n' >"$W/fixed.rules"
echo "| configuration | run | aggregate MB/s | p99 RPC latency (ms) |"
echo "|---|---|---|---|"
for r in $(seq 1 "$REPEAT"); do
	for cfg in sharp off fixed2; do
		case $cfg in
		sharp) v=$(load "$OUT") ;;
		off) v=$(load off) ;;
		fixed2) v=$(load "$W/fixed.rules") ;;
		esac
		s=$(workload)
		p=$(p99_of "$v")
		echo "| $cfg | $r | $s | $(awk -v p="${p:-0}" 'BEGIN { printf "%.1f", p / 1000 }') |"
	done
done
