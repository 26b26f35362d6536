#!/bin/bash
# bench/auth_cost.sh — the cost of authentication in the core benchmark's
# pfs workloads: pfs-bench's phases exactly as bench/run.sh runs them
# (sequential 1 MiB write/read with 4 streams after an untimed write pass,
# 4 KiB random write/read with 4 threads, create/stat/unlink with cold
# caches) against a local cluster (deploy/pfs-cluster, 4 OSS) in three
# configurations: auth on with integrity=header (the default), auth on with
# integrity=full, auth off (PFS_AUTH=off).  Every repetition starts a fresh
# cluster per configuration and rotates their order, so slow drift of a
# shared machine spreads over all three.  Prints one line per run and the
# medians with the change against auth off.
#   PFS_BIN=build/bin REPS=5 bench/auth_cost.sh
# Settings: REPS (5) SEQ_SIZE RAND_SIZE RAND_OPS MD_FILES (run.sh's defaults)
# BENCH_DIR (/var/tmp/pfs-authcost, wiped).  Needs root (FUSE, drop_caches).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
: "${PFS_BIN:=$repo/build/bin}"
export PFS_BIN
REPS=${REPS:-5}
SEQ_SIZE=${SEQ_SIZE:-256M}
RAND_SIZE=${RAND_SIZE:-256M}
RAND_OPS=${RAND_OPS:-20000}
MD_FILES=${MD_FILES:-5000}
W=${BENCH_DIR:-/var/tmp/pfs-authcost}
B=$PFS_BIN/pfs-bench
phases="seqwrite seqread randwrite randread create stat unlink"

stop() { "$repo/deploy/pfs-cluster" stop "$W/c" >/dev/null 2>&1 || true; rm -rf "$W"; }
trap stop EXIT
stop
settle() { sync; sleep 1; sync; }
drop() { settle; echo 3 >/proc/sys/vm/drop_caches; }
val() { awk '{print $2; exit}'; }

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A res
set -- header full off
for rep in $(seq 1 "$REPS"); do
	for cfg in "$@"; do
		case $cfg in
		header) envs=() ;;
		full) envs=(PFS_MDS_OPTS=--integrity=full PFS_OSS_OPTS=--integrity=full) ;;
		off) envs=(PFS_AUTH=off) ;;
		esac
		mkdir -p "$W"
		d=$(env "${envs[@]}" "$repo/deploy/pfs-cluster" start "$W/c" --oss 4)
		"$B" seqwrite "$d" --streams 4 --size "$SEQ_SIZE" >/dev/null
		rm -f "$d"/seq.*
		settle
		res[$cfg,seqwrite,$rep]=$("$B" seqwrite "$d" --streams 4 --size "$SEQ_SIZE" | val)
		drop
		res[$cfg,seqread,$rep]=$("$B" seqread "$d" --streams 4 --size "$SEQ_SIZE" | val)
		rm -f "$d"/seq.*
		settle
		res[$cfg,randwrite,$rep]=$("$B" randwrite "$d" --size "$RAND_SIZE" --ops "$RAND_OPS" --threads 4 | val)
		drop
		res[$cfg,randread,$rep]=$("$B" randread "$d" --size "$RAND_SIZE" --ops "$RAND_OPS" --threads 4 | val)
		rm -f "$d/rand.dat"
		settle
		out=$("$B" md "$d" --files "$MD_FILES" --threads 4 --cold 1)
		for p in create stat unlink; do
			res[$cfg,$p,$rep]=$(echo "$out" | awk -v p=$p '$1 == p {print $2}')
		done
		stop
		echo "rep $rep $cfg:$(for p in $phases; do printf ' %s=%s' $p "${res[$cfg,$p,$rep]}"; done)"
	done
	set -- "${@:2}" "$1"
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
med() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo
echo "| workload | unit | auth off | on, integrity=header | change | on, integrity=full | change |"
echo "|---|---|---:|---:|---:|---:|---:|"
for p in $phases; do
	declare -A m=()
	for cfg in off header full; do
		m[$cfg]=$(med $(for r in $(seq 1 "$REPS"); do echo "${res[$cfg,$p,$r]}"; done))
	done
	case $p in seq*) u=MiB/s ;; *) u=ops/s ;; esac
	awk -v p="$p" -v u="$u" -v o="${m[off]}" -v h="${m[header]}" -v f="${m[full]}" 'BEGIN {
		printf "| %s | %s | %.0f | %.0f | %+.1f %% | %.0f | %+.1f %% |\n", p, u, o, h,
			100 * (h - o) / o, f, 100 * (f - o) / o }'
done
