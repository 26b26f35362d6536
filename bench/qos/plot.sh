#!/bin/bash
# bench/qos/plot.sh — PNGs from the time series of bench/qos/run.sh: per-job
# throughput over time (client-side, MB/s; smoothed over SMOOTH samples),
# with each job's allocation (qos show, dashed) and the TBF rate in force
# on the OSS (dotted) drawn over it in the same colour.
#
#   bench/qos/plot.sh [CSV ...]     default: run 1 of each adaptbf variant and
#                                   both gift runs in $OUT (bench/qos/out)
# Writes NAME.png next to this script for OUT/NAME(-1).csv, and for GIFT a
# second panel of the coupon ledger when OUT/NAME-coupons.csv exists.
# Installs gnuplot-nox with apt-get when gnuplot is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$here/out}
PNG_DIR=${PNG_DIR:-$here}
SMOOTH=${SMOOTH:-5}

if ! command -v gnuplot >/dev/null 2>&1; then
	echo "plot.sh: installing gnuplot-nox" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends gnuplot-nox >/dev/null 2>&1 ||
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends gnuplot-nox >/dev/null; }
fi

if [ $# -eq 0 ]; then
	set --
	for v in nobw static staticmds adaptbf; do
		[ -f "$OUT/adaptbf-$v-1.csv" ] && set -- "$@" "$OUT/adaptbf-$v-1.csv"
	done
	for p in gift pofs; do
		[ -f "$OUT/gift-$p.csv" ] && set -- "$@" "$OUT/gift-$p.csv"
	done
fi
[ $# -gt 0 ] || { echo "plot.sh: no time series in $OUT (run bench/qos/run.sh first)" >&2; exit 1; }

title_of() {
	case $1 in
	adaptbf-nobw*) echo "No BW (FIFO): 4 jobs, 1/1/3/5 nodes, one OST" ;;
	adaptbf-staticmds*) echo "static policy (MDS): 4 jobs, 1/1/3/5 nodes, one OST" ;;
	adaptbf-static*) echo "Static BW (fixed TBF rules 10/10/30/50 %): one OST" ;;
	adaptbf-adaptbf*) echo "AdapTBF: 4 jobs, 1/1/3/5 nodes, one OST" ;;
	gift-gift*) echo "GIFT (B_thres 0.3), Fig. 6 live: A on OST0, B on both; C, D, E, F join at 15 s" ;;
	gift-pofs*) echo "POFS, the same scenario" ;;
	*) echo "$1" ;;
	esac
}

for csv in "$@"; do
	name=$(basename "$csv" .csv)
	name=${name%-1}
	png=$PNG_DIR/$name.png
	jobs=$(awk -F, 'NR > 1 { print $2 }' "$csv" | sort -u | tr '\n' ' ')
	# Smooth each job's rate over SMOOTH samples (a 1 MiB request is 10 MB/s
	# in a 100 ms sample, so raw samples are steps of 10).
	# One file per job: gnuplot breaks a line at every filtered-out row, so
	# interleaved jobs cannot share one file.
	sm=$(mktemp -d)
	awk -F, -v n="$SMOOTH" -v d="$sm" 'NR == 1 { next } {
		j = $2; k = c[j]++ % n; s[j] += $3 - (c[j] > n ? h[j, k] : 0); h[j, k] = $3
		printf "%s,%.3f,%s,%s\n", $1, s[j] / (c[j] < n ? c[j] : n) / 1e6,
			($4 == "" || $4 < 0) ? "NaN" : $4 / 1e6, ($5 == "" || $5 < 0) ? "NaN" : $5 / 1e6 > (d "/" j) }' "$csv"
	coupons=$OUT/$name-coupons.csv
	# a coupon panel only when job A held coupons (POFS issues none)
	[ -f "$coupons" ] && ! awk -F, 'NR > 1 && $2 == "A" { f = 1 } END { exit !f }' "$coupons" && coupons=/nonexistent
	{
		echo "set datafile separator ','"
		echo "set terminal pngcairo noenhanced size 1200,$([ -f "$coupons" ] && echo 900 || echo 600) font 'sans,10'"
		echo "set output '$png'"
		[ -f "$coupons" ] && echo "set multiplot layout 2,1"
		echo "set title \"$(title_of "$name")\""
		echo "set xlabel 'time (s)'; set ylabel 'MB/s'; set grid; set key outside right"
		echo "set yrange [0:*]"
		i=0; sep="plot"
		for j in $jobs; do
			i=$((i + 1))
			echo "$sep '$sm/$j' using 1:2 with lines lw 2 lc $i title '$j', \\"
			echo "  '$sm/$j' using 1:3 with steps dt 2 lc $i title '$j alloc', \\"
			printf "  '%s' using 1:4 with steps dt 3 lc %s title '%s tbf'" "$sm/$j" "$i" "$j"
			sep=", \\"$'\n'
		done
		echo
		if [ -f "$coupons" ]; then
			awk -F, 'NR > 1 && $2 == "A" { printf "%s,%.3f,%.3f,%.3f\n", $1, $3 / 1e6, $4 / 1e6, $5 / 1e6 }' "$coupons" >"$sm/coupons.A"
			echo "set title 'coupon ledger of A (qos coupons)'; set ylabel 'MB'"
			echo "plot '$sm/coupons.A' using 1:2 with lines lw 2 title 'outstanding', \\"
			echo "  '$sm/coupons.A' using 1:3 with lines lw 2 title 'redeemed', \\"
			echo "  '$sm/coupons.A' using 1:4 with lines dt 2 title 'issued'"
			echo "unset multiplot"
		fi
	} >"$sm.gp"
	gnuplot "$sm.gp"
	rm -rf "$sm" "$sm.gp"
	echo "$png"
done
