#!/bin/sh
# plot_sim.sh — PNG plots of pfs-sim's output, for bench/RESULTS.md
# ("Request-level simulation" and "Simulator figures").
#
#   bench/plot_sim.sh [OUTDIR]        (default bench/results/sim)
#
# Runs `pfs-sim req` on the AdapTBF scenarios (bench/scenarios/adaptbf-*.json)
# and draws, per scenario, the per-job throughput every 100 ms under No BW,
# Static BW and AdapTBF side by side (the paper's Figs. 3, 5, 7) and, for
# IV-F, the AdapTBF records (Fig. 7); then runs `pfs-sim run` on
# gift-default under GIFT (SKIP_GIFT=1 skips it, about 20 s) and draws its
# coupon and outstanding-regret time series (GIFT Figs. 8, 12).
# Needs gnuplot: installs gnuplot-nox with apt-get when it is missing (only
# here, never in the build or the tests).  PFS_BIN: where pfs-sim is
# (default build/bin).
set -eu
cd "$(dirname "$0")/.."
BIN=${PFS_BIN:-build/bin}
OUT=${1:-bench/results/sim}
mkdir -p "$OUT"
if ! command -v gnuplot >/dev/null 2>&1; then
	echo "plot_sim.sh: installing gnuplot-nox" >&2
	apt-get install -y -q gnuplot-nox >/dev/null || {
		echo "plot_sim.sh: gnuplot missing and apt-get failed" >&2; exit 1; }
fi
[ -x "$BIN/pfs-sim" ] || { echo "plot_sim.sh: no $BIN/pfs-sim (make first)" >&2; exit 1; }

for s in d e f; do
	scen=bench/scenarios/adaptbf-$s.json
	"$BIN/pfs-sim" req "$scen" --json --csv "$OUT/adaptbf-$s" >"$OUT/adaptbf-$s.json"
	"$BIN/pfs-sim" req "$scen" >"$OUT/adaptbf-$s.txt"
	gnuplot <<GP
set terminal pngcairo noenhanced size 1500,420 font ",9"
set output "$OUT/adaptbf-$s.png"
set datafile separator ","
set multiplot layout 1,3 title "AdapTBF IV-$(echo $s | tr a-z A-Z) in pfs-sim req: per-job MB/s every 100 ms"
set key top right
set xlabel "time (s)"
set ylabel "MB/s"
set yrange [0:450]
do for [ctl in "nobw static adaptbf"] {
  set title ctl
  f = sprintf("$OUT/adaptbf-$s-%s.csv", ctl)
  plot for [j=2:5] f using 1:(column(j)) every 1 with lines lw 1 title columnheader(j)
}
unset multiplot
GP
done
gnuplot <<GP
set terminal pngcairo noenhanced size 900,420 font ",9"
set output "$OUT/adaptbf-f-records.png"
set datafile separator ","
set title "AdapTBF IV-F in pfs-sim req: records (tokens lent +, borrowed -), cf. Fig. 7"
set xlabel "time (s)"; set ylabel "tokens"
set key top left
plot for [j=10:13] "$OUT/adaptbf-f-adaptbf.csv" using 1:(column(j)) with lines lw 2 title columnheader(j)
GP

if [ "${SKIP_GIFT:-0}" != 1 ]; then
	"$BIN/pfs-sim" run bench/scenarios/gift-default.json --policy gift \
		--csv "$OUT/gift-default.csv" --json >"$OUT/gift-default.json"
	gnuplot <<GP
set terminal pngcairo noenhanced size 900,420 font ",9"
set output "$OUT/gift-coupons.png"
set datafile separator ","
set title "GIFT on gift-default: outstanding coupons and regret (cf. Figs. 8, 12)"
set xlabel "time (days)"; set ylabel "coupon worth"; set y2label "node-hours"
set y2tics; set ytics nomirror
set key top left
plot "$OUT/gift-default.csv" using (\$1/86400):9 skip 1 with lines title "outstanding coupons", \
     "" using (\$1/86400):10 skip 1 axes x1y2 with lines title "outstanding node-hours"
GP
fi
echo "plots in $OUT"
