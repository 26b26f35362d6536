#!/bin/bash
# bench/qos/run.sh — the QoS experiments of shared/EXPERIMENTS.md, scaled to
# one small machine, live on local pfs clusters (loopback only, OST speed
# emulated by the OSS with ost_bandwidth).
#
#   bench/qos/run.sh [EXPERIMENT ...]      default: adaptbf gift accuracy overhead
#                                          (wcache only when named)
#   bench/qos/run.sh report                only assemble RESULTS.md from $OUT/*.md
#
#   adaptbf   AdapTBF IV-D allocation: J1..J4 with 1/1/3/5 nodes (10/10/30/50 %),
#             4 writer streams each, a fixed volume per job, one OST at $BW MB/s;
#             No BW (no rules), Static BW (fixed TBF rules by share, the paper's
#             baseline), Static policy (pfs's MDS policy: shares among active
#             jobs) and AdapTBF; $REPS runs each, interleaved.
#   gift      GIFT Fig. 6 live: 2 OSTs at 100 MB/s; k1 A (OST0) + B (both),
#             k2 C joins A and B on OST0, D, E, F join B on OST1; GIFT
#             (B_thres 0.3) against POFS on the same scenario.
#   accuracy  enforcement accuracy: a job limited to R (MDS static policy, job
#             limit) for R in $RATES MB/s, reads and writes, 1 and 8 streams,
#             enforce=tbf, blkio, both; 4 s windows, $REPS_ACC runs, medians.
#   wcache    the accuracy of writes through mount.pfs's write-back cache
#             (issue 11 item 5; accuracy's writes are O_DIRECT): a job held to R
#             by a TBF rule for R in $RATES_WC MB/s, buffered 256 KiB writes (cached:
#             below the 1 MiB stripe), 1 and 4 streams, wcache_mb=$WC_MB, with an
#             unthrottled job writing on the same mount; 6 s windows after 4 s, $REPS_ACC
#             runs, medians (the pass/fail form: tests/integration/t_qos_wcache.sh).
#   overhead  QoS off (no policy, no rule: the TBF scheduler serves FIFO)
#             against QoS on and not binding
#             (nrs=tbf, AdapTBF running, OST emulated at 100 GB/s):
#             pfs-bench sequential 1 MiB and 4 KiB random, interleaved, $REPS_OVH
#             runs, medians; the issue asks for <= 2 %.
#
# Every run leaves a CSV time series in $OUT:
#   t,job,bytes_per_s,alloc_bytes_per_s,tbf_rate_bytes_per_s
# t in seconds from the run's start; bytes_per_s measured client-side by
# qos_load every $SAMPLE_MS ms; alloc = the job's allocation summed over
# OSTs from `pfsadmin qos show --json` (-1: no allocation/unlimited);
# tbf_rate = the TBF rate in force on the OSSes (`pfsadmin jobstats`), both
# sampled every second and carried forward.  bench/qos/plot.sh draws them.
# Tables go to $OUT/*.md and are assembled into $RESULTS (default
# bench/qos/RESULTS.md) with the machine's description.
#
# Needs root, /dev/fuse, jq, the binaries in $PFS_BIN (default build/bin)
# and the test tools in $TOOLS (default $PFS_BIN/../tests/tools: qos_load);
# no make needed when both exist (see bench/qos/README.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
: "${PFS_BIN:=$repo/build/bin}"
PFS_BIN=$(cd "$PFS_BIN" && pwd)
: "${TOOLS:=$(dirname "$PFS_BIN")/tests/tools}"
export PFS_BIN TOOLS
OUT=${OUT:-$here/out}
RESULTS=${RESULTS:-$here/RESULTS.md}
W=${BENCH_DIR:-/var/tmp/pfs-qosbench}
REPS=${REPS:-3}
REPS_ACC=${REPS_ACC:-3}
REPS_OVH=${REPS_OVH:-5}
BW=${BW:-100}                 # MB/s of the emulated OST (adaptbf)
VOL=${VOL:-128M}              # per stream, adaptbf (4 streams per job)
RATES=${RATES:-10 50 100 200 500}
RATES_WC=${RATES_WC:-10 20 50}
WC_MB=${WC_MB:-64}
SAMPLE_MS=${SAMPLE_MS:-100}
SEQ_SIZE=${SEQ_SIZE:-128M}
RAND_OPS=${RAND_OPS:-20000}
mkdir -p "$OUT"
[ -x "$TOOLS/qos_load" ] || { echo "run.sh: $TOOLS/qos_load missing (make build/tests/tools/qos_load)" >&2; exit 1; }
command -v jq >/dev/null || { echo "run.sh: jq missing (deploy/install-deps.sh)" >&2; exit 1; }
QOS_LOAD=$TOOLS/qos_load
# shellcheck source=../../tests/integration/qos_lib.sh
. "$repo/tests/integration/qos_lib.sh"
# shellcheck source=../page_reporting.sh
. "$repo/bench/page_reporting.sh" # the run's cache drops (bench/README.md)

CL=$W/c
MDS=
cleanup() {
	jobs -p | xargs -r kill 2>/dev/null || true
	"$repo/deploy/pfs-cluster" stop "$CL" >/dev/null 2>&1 || true
	rm -rf "$W"
	page_reporting_restore
}
trap cleanup EXIT
trap 'exit 130' INT TERM
page_reporting_hold
rm -rf "$W"; mkdir -p "$W"

cluster() { # cluster START-OPTIONS...: a fresh cluster in $CL
	"$repo/deploy/pfs-cluster" stop "$CL" >/dev/null 2>&1 || true
	rm -rf "$CL"
	# One retry: on this shared machine a start has failed once in a long
	# run (a port taken between the pick and the bind, a slow mount).
	if ! "$repo/deploy/pfs-cluster" start "$CL" "$@" >"$W/start.log" 2>&1; then
		echo "run.sh: cluster did not start, retrying: $*" >&2
		tail -n 5 "$W/start.log" "$CL"/*.log >&2 || true
		"$repo/deploy/pfs-cluster" stop "$CL" >/dev/null 2>&1 || true
		rm -rf "$CL"
		"$repo/deploy/pfs-cluster" start "$CL" "$@" >"$W/start.log" 2>&1 ||
			{ echo "run.sh: cluster did not start: $*" >&2; tail -n 5 "$W/start.log" "$CL"/*.log >&2; exit 1; }
	fi
	# shellcheck disable=SC1091
	. "$CL/cluster.env"
	# the cluster's admin key (pfs-cluster made it) for pfsadmin
	if [ -n "${PFS_KEY:-}" ]; then export PFS_KEY; fi
	read -ra M <<<"${MNTS:-$MNT}"
}
admin() { "$PFS_BIN/pfsadmin" --mds "$MDS" "$@"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }

# Sample allocations and TBF rates every second into $1 (t,job,alloc,tbf)
# until killed.
sampler() {
	local f=$1
	while :; do
		local t
		t=$(now)
		{
			admin --json qos show 2>/dev/null | jq -r --arg t "$t" '[.allocations[]? ] | group_by(.job)[] |
				"\($t),\(.[0].job),\(if any(.[]; .alloc_bytes_per_s == null) then -1 else (map(.alloc_bytes_per_s) | add) end),"'
			admin --json jobstats 2>/dev/null | jq -r --arg t "$t" '.jobs[]? |
				"\($t),\(.job),,\(if any(.osts[]; .tbf_rate_bytes_per_s == null) then -1 else ([.osts[].tbf_rate_bytes_per_s] | add) end)"'
		} >>"$f" 2>/dev/null || true
		sleep 1
	done
}

# merge RATES ALLOCS T0 OUT: one CSV, times relative to T0, each rate row
# with the latest allocation and TBF rate of its job at that time.
merge() {
	{
		awk -F, -v t0="$3" '{ printf "%.3f,%s,A,%s,%s\n", $1 - t0, $2, $3, $4 }' "$2"
		awk -F, -v t0="$3" '{ printf "%.3f,%s,R,%s\n", $1 - t0, $2, $3 }' "$1"
	} | sort -t, -k1,1g -s | awk -F, 'BEGIN { print "t,job,bytes_per_s,alloc_bytes_per_s,tbf_rate_bytes_per_s" }
		$3 == "A" { if ($4 != "") al[$2] = $4; if ($5 != "") tb[$2] = $5; next }
		{ printf "%s,%s,%s,%s,%s\n", $1, $2, $4, ($2 in al) ? al[$2] : "", ($2 in tb) ? tb[$2] : "" }' >"$4"
}

machine() {
	echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"\
" $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM, kernel $(uname -r),"\
" disk under $W: $(df -h "$W" | awk 'NR == 2 { print $1 }'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg);"\
" pfs at $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')."
	echo "Host memory: $PR_NOTE."
}

# ---------------------------------------------------------------- adaptbf
exp_adaptbf() {
	local variants="nobw static staticmds adaptbf" v rep j k
	local -A done_s share mk tot
	echo "adaptbf: $REPS x {$variants}, OST $BW MB/s, $VOL per stream x 4 streams per job" >&2
	for rep in $(seq 1 "$REPS"); do
		for v in $variants; do
			local mopt=(--mds-opt qos_policy=none)
			case $v in
			staticmds) mopt=(--mds-opt qos_policy=static --mds-opt qos_interval=1) ;;
			adaptbf) mopt=(--mds-opt qos_policy=adaptbf --mds-opt qos_interval=1) ;;
			esac
			cluster --oss 1 --mounts 4 --oss-opt "ost_bandwidth=$BW" "${mopt[@]}"
			k=0
			for jn in J1:1 J2:1 J3:3 J4:5; do
				j=${jn%:*}
				admin job register "$j" --nodes "${jn#*:}" >/dev/null
				[ $v = static ] && admin nrs tbf rule start "r$j" \
					"jobid={$j} rate=$(awk -v b="$BW" -v n="${jn#*:}" 'BEGIN { print b * n / 10 }')MB/s" >/dev/null
				mkdir -p "${M[$k]}/$j"
				k=$((k + 1))
			done
			local raw=$W/rates.raw al=$W/alloc.raw t0
			: >"$raw"; : >"$al"
			sampler "$al" & local sp=$!
			t0=$(now)
			local st
			st=$(awk -v t="$t0" 'BEGIN { printf "%.3f", t + 0.5 }')
			k=0
			for j in J1 J2 J3 J4; do
				load "$j" write "${M[$k]}/$j" --streams 4 --once --size "$VOL" --seconds 600 \
					--direct --interval-ms "$SAMPLE_MS" --csv "$raw" --start-at "$st" >"$W/sum.$j" &
				k=$((k + 1))
			done
			wait $(jobs -p | grep -v "^$sp\$") 2>/dev/null || true
			kill $sp 2>/dev/null; wait $sp 2>/dev/null || true
			merge "$raw" "$al" "$st" "$OUT/adaptbf-$v-$rep.csv"
			local first=1e9 last=0 e
			for j in J1 J2 J3 J4; do
				e=$(sed -n 's/.*elapsed=\([0-9.]*\).*/\1/p' "$W/sum.$j")
				done_s[$v,$j,$rep]=$e
				first=$(awk -v a="$first" -v b="$e" 'BEGIN { print (b < a) ? b : a }')
				last=$(awk -v a="$last" -v b="$e" 'BEGIN { print (b > a) ? b : a }')
			done
			mk[$v,$rep]=$last
			# total bytes / makespan; shares while all four ran (1 s .. first end)
			tot[$v,$rep]=$(awk -v m="$last" -v s="$VOL" 'BEGIN { v = s + 0; u = substr(s, length(s)); if (u == "M") v *= 1048576; else if (u == "G") v *= 1073741824; printf "%.1f", 16 * v / m / 1e6 }')
			for j in J1 J2 J3 J4; do
				share[$v,$j,$rep]=$(awk -F, -v j="$j" -v a=1 -v b="$first" 'NR > 1 && $1 >= a && $1 < b { s[$2] += $3; t += $3 }
					END { printf "%.1f", t ? 100 * s[j] / t : 0 }' "$OUT/adaptbf-$v-$rep.csv")
			done
			echo "adaptbf rep $rep $v: makespan ${mk[$v,$rep]} s, total ${tot[$v,$rep]} MB/s, ends $(for j in J1 J2 J3 J4; do printf '%s=%s ' $j "${done_s[$v,$j,$rep]}"; done), shares $(for j in J1 J2 J3 J4; do printf '%s=%s%% ' $j "${share[$v,$j,$rep]}"; done)" >&2
		done
	done
	{
		echo "## AdapTBF IV-D allocation (scaled) — $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo
		echo "One OSS, one OST emulated at $BW MB/s; J1..J4 registered with 1/1/3/5 nodes (target"
		echo "shares 10/10/30/50 %), 4 O_DIRECT writer streams each (paper: 16 processes), $VOL per"
		echo "stream (paper: 1 GB per process), each job on its own mount. Medians of $REPS runs,"
		echo "variants interleaved. Shares: of the bytes served while all four jobs ran (1 s to"
		echo "the first job's end). Total: all bytes / makespan. Command: \`bench/qos/run.sh adaptbf\`."
		echo
		echo "| variant | J1 share | J2 share | J3 share | J4 share | J1 end (s) | J2 end | J3 end | J4 end | makespan (s) | total MB/s |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		for v in $variants; do
			local name=$v
			case $v in nobw) name="No BW (FIFO)" ;; static) name="Static BW (fixed rules)" ;;
			staticmds) name="static policy (MDS)" ;; adaptbf) name=AdapTBF ;; esac
			printf '| %s' "$name"
			for j in J1 J2 J3 J4; do
				printf ' | %s %%' "$(median $(for r in $(seq 1 "$REPS"); do echo "${share[$v,$j,$r]}"; done))"
			done
			for j in J1 J2 J3 J4; do
				printf ' | %s' "$(median $(for r in $(seq 1 "$REPS"); do echo "${done_s[$v,$j,$r]}"; done))"
			done
			printf ' | %s | %s |\n' "$(median $(for r in $(seq 1 "$REPS"); do echo "${mk[$v,$r]}"; done))" \
				"$(median $(for r in $(seq 1 "$REPS"); do echo "${tot[$v,$r]}"; done))"
		done
		echo
		echo "Time series: \`bench/qos/out/adaptbf-VARIANT-REP.csv\`; plots \`bench/qos/adaptbf-VARIANT.png\` (run 1)."
		echo
	} >"$OUT/adaptbf.md"
}

# ------------------------------------------------------------------- gift
# eff_bw CSV T0 T1: the sum over jobs of each job's mean client-side rate
# between T0 and T1 (each job samples on its own clock), MB/s.
eff_bw() {
	awk -F, -v a="$2" -v b="$3" 'NR > 1 && $1 >= a && $1 < b { s[$2] += $3; n[$2]++ }
		END { for (j in s) t += s[j] / n[j]; printf "%.1f", t / 1e6 }' "$1"
}

exp_gift() {
	local pol
	local -A res
	for pol in gift pofs; do
		local popt=(--mds-opt "qos_policy=$pol" --mds-opt qos_interval=1)
		[ $pol = gift ] && popt+=(--mds-opt qos_param=B_thres=0.3)
		cluster --oss 2 --mounts 6 --oss-opt ost_bandwidth=100 "${popt[@]}"
		local j i k
		for j in A B C D E F; do admin job register "$j" --nodes 1 >/dev/null; mkdir -p "$MNT/$j"; done
		for i in 0 1 2 3; do file_on_ost "$MNT/A/load.$i" 0; done
		for i in 0 1; do
			file_on_ost "$MNT/C/load.$i" 0
			for j in D E F; do file_on_ost "$MNT/$j/load.$i" 1; done
		done
		admin setstripe -c 2 -S 1M "$MNT/B" >/dev/null
		local raw=$W/rates.raw al=$W/alloc.raw cp=$W/coupons.raw t0
		: >"$raw"; : >"$al"; : >"$cp"
		sampler "$al" & local sp=$!
		t0=$(now)
		# k1: 0-15 s A and B; k2: 15-40 s C, D, E, F join; then A and B alone again to 50 s.
		load A write "${M[0]}/A" --streams 4 --seconds 50 --direct --size 32M --interval-ms "$SAMPLE_MS" --csv "$raw" >"$W/sum.A" &
		load B write "${M[1]}/B" --streams 4 --seconds 50 --direct --size 32M --interval-ms "$SAMPLE_MS" --csv "$raw" >"$W/sum.B" &
		( while :; do admin --json qos coupons 2>/dev/null | jq -r --arg t "$(now)" '.coupons[]? | "\($t),\(.job),\(.outstanding_bytes),\(.redeemed_bytes),\(.issued_bytes)"' >>"$cp"; sleep 1; done ) &
		local cs=$!
		sleep 15
		res[$pol,k1]=$(for x in "A 0" "B 0" "B 1"; do printf '%s ' "$(alloc_mbps $x)"; done)
		k=2
		for j in C D E F; do
			load "$j" write "${M[$k]}/$j" --streams 2 --seconds 25 --direct --size 32M --interval-ms "$SAMPLE_MS" --csv "$raw" >"$W/sum.$j" &
			k=$((k + 1))
		done
		sleep 5
		res[$pol,k2]=$(for x in "A 0" "C 0" "B 0" "B 1"; do printf '%s ' "$(alloc_mbps $x)"; done)
		wait $(jobs -p | grep -v "^$sp\$\|^$cs\$") 2>/dev/null || true
		kill $sp $cs 2>/dev/null; wait $sp $cs 2>/dev/null || true
		merge "$raw" "$al" "$t0" "$OUT/gift-$pol.csv"
		awk -F, -v t0="$t0" 'BEGIN { print "t,job,outstanding_bytes,redeemed_bytes,issued_bytes" } { printf "%.3f,%s,%s,%s,%s\n", $1 - t0, $2, $3, $4, $5 }' "$cp" >"$OUT/gift-$pol-coupons.csv"
		# effective bandwidth per phase (sum of client-side rates), A's bytes
		res[$pol,eff1]=$(eff_bw "$OUT/gift-$pol.csv" 3 15)
		res[$pol,eff2]=$(eff_bw "$OUT/gift-$pol.csv" 18 40)
		for j in A B C; do
			res[$pol,mb$j]=$(awk -F, -v j="$j" 'NR > 1 && $2 == j { s += $3 } END { printf "%.0f", s * '"$SAMPLE_MS"' / 1000 / 1e6 }' "$OUT/gift-$pol.csv")
		done
		res[$pol,coupons]=$(admin --json qos regret 2>/dev/null | jq -r '"\(.coupons_issued) issued, \(.worth_issued_bytes / 1e6) MB worth, \(.worth_redeemed_bytes / 1e6) MB redeemed"' || echo "-")
		echo "gift $pol: k1 ${res[$pol,k1]}; k2 ${res[$pol,k2]}; eff ${res[$pol,eff1]} / ${res[$pol,eff2]} MB/s; ${res[$pol,coupons]}" >&2
	done
	{
		echo "## GIFT Fig. 6 live — $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo
		echo "Two OSSes with one OST each, emulated at 100 MB/s; decisions every second. k1 (0-15 s):"
		echo "A (4 streams, OST0 only) and B (4 streams, striped over both). k2 (15-40 s): C joins on"
		echo "OST0, D, E, F on OST1 (2 streams each). 40-50 s: A and B alone again. All jobs"
		echo "registered with 1 node, throttle-friendly. Allocations from \`pfsadmin qos show\` 15 s"
		echo "and 20 s into the run; effective bandwidth = sum of the client-side rates (k1: 3-15 s,"
		echo "k2: 18-40 s). Command: \`bench/qos/run.sh gift\`."
		echo
		echo "| policy | k1 A@OST0 | k1 B@OST0 | k1 B@OST1 | k2 A@OST0 | k2 C@OST0 | k2 B@OST0 | k2 B@OST1 | eff. BW k1 (MB/s) | eff. BW k2 | A MB | B MB | C MB | coupons |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
		for pol in gift pofs; do
			# shellcheck disable=SC2086
			set -- ${res[$pol,k1]} ${res[$pol,k2]}
			echo "| $pol | $1 | $2 | $3 | $4 | $5 | $6 | $7 | ${res[$pol,eff1]} | ${res[$pol,eff2]} | ${res[$pol,mbA]} | ${res[$pol,mbB]} | ${res[$pol,mbC]} | ${res[$pol,coupons]} |"
		done
		echo "| paper (Fig. 6) | 35 | 65 | 65 | 42 | 33 | 25 | 25 | | | | | | k1: one 0.15 coupon; k2: 1/12 redeemed |"
		echo
		echo "Time series: \`bench/qos/out/gift-POLICY.csv\`, coupons \`bench/qos/out/gift-POLICY-coupons.csv\`; plots \`bench/qos/gift-POLICY.png\`."
		echo
	} >"$OUT/gift.md"
}

# --------------------------------------------------------------- accuracy
exp_accuracy() {
	local mode r op s rep
	local -A got
	for rep in $(seq 1 "$REPS_ACC"); do
		for mode in tbf blkio both; do
			cluster --oss 1 --mounts 1 --oss-opt ost_bandwidth=5000 --oss-opt "enforce=$mode" \
				--mds-opt qos_policy=static --mds-opt qos_interval=1
			local note=""
			grep -q "blkio unavailable" "$CL/oss0.log" && note=" (blkio unavailable: TBF)"
			mkdir -p "$MNT/acc"
			load prep prep "$MNT/acc" --streams 8 --direct --size 64M >/dev/null
			for r in $RATES; do
				admin job register "acc$r" --nodes 1 --limit "${r}MB/s" >/dev/null
				for op in write read; do
					for s in 1 8; do
						local out
						out=$(load "acc$r" "$op" "$MNT/acc" --streams "$s" --seconds 6.5 --skip 2.5 --direct --size 64M)
						got[$mode,$r,$op,$s,$rep]=$(mbps "$out")
						echo "accuracy rep $rep $mode$note R=$r $op x$s: ${got[$mode,$r,$op,$s,$rep]} MB/s" >&2
					done
				done
				admin job end "acc$r" >/dev/null 2>&1 || true
			done
		done
	done
	{
		echo "## Enforcement accuracy — $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo
		echo "One OSS, one OST (real disk, pacing at 5,000 MB/s so it never binds); one job"
		echo "registered with \`--limit R\` under the MDS static policy (decisions every second),"
		echo "so the same limit is enforced by TBF rules, blkio cgroup throttles (the OSS opens"
		echo "objects O_DIRECT) or both. O_DIRECT 1 MiB requests from the client, 1 or 8 streams;"
		echo "the rate is measured client-side over 4 s after 2.5 s of warm-up (the first"
		echo "decision). Median of $REPS_ACC runs, MB/s (error vs R). Command: \`bench/qos/run.sh accuracy\`."
		echo
		echo "| R (MB/s) | op | streams | tbf | blkio | both |"
		echo "|---:|---|---:|---:|---:|---:|"
		for r in $RATES; do
			for op in write read; do
				for s in 1 8; do
					printf '| %s | %s | %s' "$r" "$op" "$s"
					for mode in tbf blkio both; do
						local m
						m=$(median $(for x in $(seq 1 "$REPS_ACC"); do echo "${got[$mode,$r,$op,$s,$x]}"; done))
						printf ' | %s (%+.1f %%)' "$m" "$(awk -v m="$m" -v r="$r" 'BEGIN { print 100 * (m - r) / r }')"
					done
					echo " |"
				done
			done
		done
		echo
	} >"$OUT/accuracy.md"
}

# --------------------------------------------------------------- wcache
exp_wcache() {
	local r s rep out
	local -A got fr
	for rep in $(seq 1 "$REPS_ACC"); do
		cluster --oss 1 --mounts 1 --oss-opt ost_bandwidth=5000 --mount-opt "wcache_mb=$WC_MB"
		mkdir -p "$MNT/wc" "$MNT/wcfree"
		for r in $RATES_WC; do
			admin nrs tbf rule start "wc$r" "jobid={wc$r} rate=${r}MB/s" >/dev/null
			for s in 1 4; do
				load wcfree write "$MNT/wcfree" --streams 2 --bs 256K --size 256M --seconds 10 \
					--skip 4 >"$W/wcfree.out" &
				out=$(load "wc$r" write "$MNT/wc" --streams "$s" --bs 256K --size 256M \
					--seconds 10 --skip 4)
				wait
				got[$r,$s,$rep]=$(mbps "$out")
				fr[$r,$s,$rep]=$(mbps "$(cat "$W/wcfree.out")")
				echo "wcache rep $rep R=$r x$s: ${got[$r,$s,$rep]} MB/s, unthrottled ${fr[$r,$s,$rep]} MB/s" >&2
				rm -f "$MNT"/wc/* "$MNT"/wcfree/*
			done
		done
	done
	{
		echo "## Accuracy with the write-back cache on — $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo
		echo "One OSS, one OST (pacing at 5,000 MB/s); job wcR held to R by a TBF rule writes"
		echo "buffered 256 KiB requests (cached by mount.pfs, \`wcache_mb=$WC_MB\`), 1 or 4 streams,"
		echo "while an unthrottled job writes 2 streams of 256 KiB on the same mount; the write(2)"
		echo "rate is measured client-side over 6 s after 4 s (the job's part of the cache fills"
		echo "in the first second). Median of $REPS_ACC runs, MB/s (error vs R); the unthrottled"
		echo "job's median beside it. Command: \`bench/qos/run.sh wcache\`."
		echo
		echo "| R (MB/s) | streams | throttled job | unthrottled job |"
		echo "|---:|---:|---:|---:|"
		for r in $RATES_WC; do
			for s in 1 4; do
				local m f
				m=$(median $(for x in $(seq 1 "$REPS_ACC"); do echo "${got[$r,$s,$x]}"; done))
				f=$(median $(for x in $(seq 1 "$REPS_ACC"); do echo "${fr[$r,$s,$x]}"; done))
				printf '| %s | %s | %s (%+.1f %%) | %s |\n' "$r" "$s" "$m" \
					"$(awk -v m="$m" -v r="$r" 'BEGIN { print 100 * (m - r) / r }')" "$f"
			done
		done
		echo
	} >"$OUT/wcache.md"
}

# --------------------------------------------------------------- overhead
exp_overhead() {
	local rep cfg p
	local -A v
	local phases="seqwrite seqread randwrite randread"
	for rep in $(seq 1 "$REPS_OVH"); do
		local order="off on"
		[ $((rep % 2)) = 0 ] && order="on off"
		for cfg in $order; do
			if [ $cfg = off ]; then
				cluster --oss 4 --mds-opt qos_policy=none
			else
				cluster --oss 4 --oss-opt ost_bandwidth=100000 --mds-opt qos_policy=adaptbf --mds-opt qos_interval=1
				admin job register ovh --nodes 1 >/dev/null
			fi
			local d=$MNT/ovh val
			mkdir -p "$d"
			export SLURM_JOB_ID=ovh
			"$PFS_BIN/pfs-bench" seqwrite "$d" --streams 4 --size "$SEQ_SIZE" >/dev/null # warm-up
			rm -f "$d"/seq.*; sync; sleep 1
			v[$cfg,seqwrite,$rep]=$("$PFS_BIN/pfs-bench" seqwrite "$d" --streams 4 --size "$SEQ_SIZE" | awk '{ print $2 }')
			sync; echo 3 >/proc/sys/vm/drop_caches
			v[$cfg,seqread,$rep]=$("$PFS_BIN/pfs-bench" seqread "$d" --streams 4 --size "$SEQ_SIZE" | awk '{ print $2 }')
			rm -f "$d"/seq.*; sync; sleep 1
			v[$cfg,randwrite,$rep]=$("$PFS_BIN/pfs-bench" randwrite "$d" --size 128M --ops "$RAND_OPS" --threads 4 | awk '{ print $2 }')
			sync; echo 3 >/proc/sys/vm/drop_caches
			v[$cfg,randread,$rep]=$("$PFS_BIN/pfs-bench" randread "$d" --size 128M --ops "$RAND_OPS" --threads 4 | awk '{ print $2 }')
			unset SLURM_JOB_ID
			[ $cfg = on ] && val=$(admin --json qos show | jq -c '[.policy, .decisions]') || val=""
			echo "overhead rep $rep $cfg: $(for p in $phases; do printf '%s=%s ' $p "${v[$cfg,$p,$rep]}"; done)$val" >&2
		done
	done
	{
		echo "## Overhead of QoS when no limit binds — $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo
		echo "4 OSSes, one mount. QoS off: qos_policy=none and no rule (the OSS's TBF scheduler"
		echo "serves FIFO until a rule exists; nrs=fifo is only allowed with enforce=blkio, which"
		echo "changes the I/O path to O_DIRECT). QoS on: AdapTBF in"
		echo "every OSS (100 ms periods, TBF rule per job) driven by the MDS (decisions every"
		echo "second), OSTs emulated at 100,000 MB/s so no allocation binds. pfs-bench as job"
		echo "\`ovh\`: 4 streams x $SEQ_SIZE sequential 1 MiB, $RAND_OPS random 4 KiB ops on a 128 MiB"
		echo "file with 4 threads; caches dropped before reads. Runs interleaved (off/on, on/off, ...),"
		echo "medians of $REPS_OVH. Target: QoS on within 2 % of QoS off. Command: \`bench/qos/run.sh overhead\`."
		echo
		echo "| workload | unit | QoS off | QoS on | on / off |"
		echo "|---|---|---:|---:|---:|"
		for p in $phases; do
			local unit="ops/s" a b
			case $p in seq*) unit="MiB/s" ;; esac
			a=$(median $(for r in $(seq 1 "$REPS_OVH"); do echo "${v[off,$p,$r]}"; done))
			b=$(median $(for r in $(seq 1 "$REPS_OVH"); do echo "${v[on,$p,$r]}"; done))
			echo "| $p | $unit | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (a > 0 ? b / a : 0) }') |"
		done
		echo
		echo "Raw runs:"
		echo
		echo '```'
		for r in $(seq 1 "$REPS_OVH"); do
			for cfg in off on; do
				echo "rep $r $cfg: $(for p in $phases; do printf '%s=%s ' $p "${v[$cfg,$p,$r]}"; done)"
			done
		done
		echo '```'
		echo
	} >"$OUT/overhead.md"
}

exps=${*:-adaptbf gift accuracy overhead}
[ "$exps" = report ] || machine >"$OUT/machine.txt"
for e in $exps; do
	case $e in
	adaptbf|gift|accuracy|wcache|overhead) "exp_$e" ;;
	report) ;;
	*) echo "run.sh: unknown experiment $e" >&2; exit 2 ;;
	esac
done
{
	echo "# QoS experiments, live"
	echo
	echo "Scaled forms of the experiments in shared/EXPERIMENTS.md, run on local pfs clusters"
	echo "(loopback, OST speed emulated by the OSS) by \`bench/qos/run.sh\`; plots by"
	echo "\`bench/qos/plot.sh\`. Each section says when it was run; the machine of the last run:"
	echo
	cat "$OUT/machine.txt"
	echo
	echo "Other engineers' builds and benchmarks shared this machine during the runs (see the"
	echo "load average), which is why every table reports medians."
	echo
	for e in adaptbf gift accuracy wcache overhead; do
		[ -f "$OUT/$e.md" ] && cat "$OUT/$e.md"
	done
	[ -f "$here/NOTES.md" ] && cat "$here/NOTES.md"
} >"$RESULTS"
echo "results: $RESULTS; time series: $OUT" >&2
