#!/bin/bash
# sharp_live.sh — SHARP on a live cluster (issue 12; ascar.txt sec. III-F):
# search ASCAR rule sets for a signature workload within a budget of runs
# (pfs-sharp: qos/sharp.h's qos_sharp_search, not the Cartesian product),
# write the best one, then compare it with no control and a fixed window.
#
#   bench/sharp_live.sh [--budget N] [--repeat R] [--seconds S] [--bw MBps]
#                       [--mounts M] [--weight W] [--mode hill|sampled]
#                       [--out FILE] [--seed N]
#
# Cluster: deploy/pfs-cluster with 1 OSS whose OST is emulated at --bw MB/s
# (default 60) and M mounts (default 1; up to 4), qos_poll_ms=300,
# log_level=info.  Signature workload (S seconds, default 6), all 1 MiB
# O_DIRECT writes (tests/integration/tools/qos_load), one job per mount
# (round robin when M < 4): J1 16 streams, J2 4 streams, J3 bursts (2
# streams move 16 MiB each, pause 0.5 s, again), J4 8 streams — bursty,
# write-heavy, several jobs, and with M > 1 several clients contending for
# the OST, which is what ASCAR is for.
#
# One run prints "MBps p99_us" (aggregate of the jobs' rates; the largest
# p99 RPC latency any client measured for the rule set's version, from its
# "ascar ... p99_us" log line: 2^(1/4) buckets, so +-19 %) and the rule
# statistics the clients logged, summed ("rule I HITS SUMS").  pfs-sharp
# scores it (1 - W) * MBps / MBps_1 - W * p99 / p99_1 against the first
# run (default W = 0.3), spends the budget (default 12 runs: seeded hill
# climbing from <[0,inf)^3> -> <1, 0, 0> over Table II's grids, splitting
# the hottest rule at its observed means when the climb stalls), and
# writes the best set to --out (default bench/results/sharp_best.rules).
#
# Comparison (R repeats each, default 3, interleaved): the best rule set,
# ASCAR off, and a fixed window of 2 ([0,inf)^3 -> <0, 2, 0>); prints a
# Markdown table.  Needs root (FUSE) and a build (PFS_BIN, default
# build/bin, with pfs-sharp; tools from $(dirname PFS_BIN)/tests/tools).
set -eu
REPO=$(cd "$(dirname "$0")/.." && pwd)
: "${PFS_BIN:=$REPO/build/bin}"
TOOLS=${PFS_TOOLS:-$(dirname "$PFS_BIN")/tests/tools}
QL=$TOOLS/qos_load

admin() { "$PFS_BIN/pfsadmin" --mds "$MDS" "$@"; }

# load FILE|off -> the version now on the MDS, once every client has it
load() {
	local v l
	if [ "$1" = off ]; then v=$(admin qos ascar off); else v=$(admin qos ascar load "$1"); fi
	v=$(echo "$v" | sed -n 's/.* v\([0-9]*\) .*/\1/p')
	for l in $LOGS; do
		for _ in $(seq 1 50); do
			grep -q "rule set v$v installed" "$l" && break
			sleep 0.1
		done
	done
	echo "$v"
}

# one run of the signature workload -> aggregate MB/s
workload() {
	local tag=$RANDOM pids=() i=0 m d
	for m in $MNTS; do mkdir -p "$m/w.$tag"; done
	set -- $MNTS
	for j in 1 2 3 4; do
		i=$(( (j - 1) % NM + 1 ))
		d=$(eval echo "\${$i}")/w.$tag
		case $j in
		1) SLURM_JOB_ID=J1 "$QL" write "$d" --streams 16 --bs 1M --size 64M --direct --seconds "$SECS" --skip 1 --prefix a >"$W/j1" & pids+=($!) ;;
		2) SLURM_JOB_ID=J2 "$QL" write "$d" --streams 4 --bs 1M --size 64M --direct --seconds "$SECS" --skip 1 --prefix b >"$W/j2" & pids+=($!) ;;
		3) (
			: >"$W/j3"
			end=$(( $(date +%s) + SECS ))
			while [ "$(date +%s)" -lt "$end" ]; do
				SLURM_JOB_ID=J3 "$QL" write "$d" --streams 2 --bs 1M --size 16M --direct --once --seconds 3 --prefix c >>"$W/j3" || true
				sleep 0.5
			done ) & pids+=($!) ;;
		4) if [ "$NM" -ge 4 ]; then
			SLURM_JOB_ID=J4 "$QL" write "$d" --streams 8 --bs 1M --size 64M --direct --seconds "$SECS" --skip 1 --prefix e >"$W/j4" & pids+=($!)
		   else : >"$W/j4"; fi ;;
		esac
	done
	wait "${pids[@]}" || true
	for m in $MNTS; do rm -rf "$m/w.$tag"; done
	{
		for f in "$W/j1" "$W/j2" "$W/j4"; do sed -n 's/.*MBps=\([0-9.]*\).*/\1/p' "$f" | tail -n 1; done
		# J3: bytes over the run (its bursts and pauses)
		awk -v s="$SECS" '{ for (i = 1; i <= NF; i++) if ($i ~ /^bytes=/) b += substr($i, 7) } END { printf "%.3f\n", b / s / 1e6 }' "$W/j3"
	} | awk '{ t += $1 } END { printf "%.2f\n", t }'
}

# after a run of version v: make every client leave v (it logs v's
# statistics then) -> "p99_us" (max over clients and OSSes)
leave() {
	local m
	load off >/dev/null
	for m in $MNTS; do dd if=/dev/zero of="$m/flush" bs=1M count=1 oflag=direct status=none; done
	sleep 0.2
}
p99_of() {
	cat $LOGS | sed -n "s/.*ascar .*: v$1 rpcs [0-9]* p50_us [0-9]* p99_us \([0-9]*\).*/\1/p" |
		sort -n | tail -n 1
}
rule_stats() {
	cat $LOGS | sed -n "s/.*ascar .*: v$1 rule \([0-9]*\) hits \([0-9]*\) sum \(.*\)/\1 \2 \3/p" |
		awk '{ h[$1] += $2; a[$1] += $3; s[$1] += $4; p[$1] += $5 }
		     END { for (r in h) printf "rule %d %s %s %s %s\n", r, h[r], a[r], s[r], p[r] }'
}

# ---- pfs-sharp's benchmark command: __eval RULESFILE (state in the env)
if [ "${1:-}" = __eval ]; then
	v=$(load "$2")
	s=$(workload)
	leave
	p=$(p99_of "$v")
	echo "$s ${p:-0}"
	rule_stats "$v"
	exit 0
fi

BUDGET=12 REPEAT=3 SECS=6 BW=60 NM=1 WEIGHT=0.3 MODE=hill
OUT=$REPO/bench/results/sharp_best.rules SEED=$$
while [ $# -gt 0 ]; do
	case $1 in
	--budget) BUDGET=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--bw) BW=$2; shift 2 ;;
	--mounts) NM=$2; shift 2 ;;
	--weight) WEIGHT=$2; shift 2 ;;
	--mode) MODE=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--seed) SEED=$2; shift 2 ;;
	*) echo "usage: $0 [--budget N] [--repeat R] [--seconds S] [--bw MBps] [--mounts M] [--weight W] [--mode hill|sampled] [--out FILE] [--seed N]" >&2; exit 2 ;;
	esac
done
[ -x "$QL" ] || { echo "no $QL: make O=... $(dirname "$PFS_BIN")/tests/tools/qos_load" >&2; exit 1; }
[ -x "$PFS_BIN/pfs-sharp" ] || { echo "no $PFS_BIN/pfs-sharp: make O=... all" >&2; exit 1; }
W=$(mktemp -d /tmp/pfs-sharp.XXXXXX)
C=$W/c
trap '"$REPO/deploy/pfs-cluster" stop "$C" >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
"$REPO/deploy/pfs-cluster" start "$C" --oss 1 --mounts "$NM" --oss-opt ost_bandwidth="$BW" \
	--mount-opt qos_poll_ms=300 --mount-opt log_level=info >/dev/null
. "$C/cluster.env"
MNTS="$C/mnt" LOGS="$C/client.log"
for i in $(seq 1 $((NM - 1))); do MNTS="$MNTS $C/mnt$i" LOGS="$LOGS $C/client$i.log"; done
export PFS_KEY MDS MNTS LOGS NM W SECS PFS_BIN QL
RANDOM=$SEED

printf '[0, inf) [0, inf) [0, inf) 1 0 0\n' >"$W/start.rules"
mkdir -p "$(dirname "$OUT")"
"$PFS_BIN/pfs-sharp" --runs "$BUDGET" --mode "$MODE" --seed "$SEED" --weight "$WEIGHT" \
	--start "$W/start.rules" --out "$OUT" -- bash "$0" __eval >&2

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
		leave
		p=$(p99_of "$v")
		echo "| $cfg | $r | $s | $(awk -v p="${p:-0}" 'BEGIN { printf "%.1f", p / 1000 }') |"
	done
done
