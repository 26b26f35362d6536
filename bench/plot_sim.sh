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
# coupon and outstanding-regret time series (GIFT Figs. 8, 12); then
# `pfs-sim report` on gift-default (SKIP_REPORT=1 skips it; REPORT_DAYS=D
# shortens the horizon to D days; REPORT_ARGS adds options) and draws the
# per-application improvement CDF and the applications worse than POFS
# (Fig. 9), effective-bandwidth gain per system state, the N / tau / B_thres
# sweeps of GIFT (Fig. 11) and GIFT at several contention levels (Fig. 14).
# The sweep and contention plots show the paper's effective system bandwidth
# (capacity minus waste, column esb_gain); the per-state plot the useful
# bandwidth of the time series.  Every run replays the POFS run's start
# times (pfs-sim's default pinned schedule; REPORT_ARGS="--schedule easy"
# for the old mode).
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
if [ "${SKIP_REPORT:-0}" != 1 ]; then
	R="$OUT/report"
	# shellcheck disable=SC2086
	"$BIN/pfs-sim" report bench/scenarios/gift-default.json \
		${REPORT_DAYS:+--days "$REPORT_DAYS"} \
		--sweep N=100,1000,2500,10000 --sweep tau=0.1,0.5,0.8,0.95 \
		--sweep B_thres=0,0.1,0.3,0.5,0.8 --contention 0.5,1,1.5,2 \
		--csv "$R" ${REPORT_ARGS:-} >"$R.json"
	pols=$(tail -n +2 "$R-summary.csv" | cut -d, -f1 | tr '\n' ' ')
	gnuplot <<GP
set terminal pngcairo noenhanced size 1400,480 font ",9"
set output "$OUT/report-fig9.png"
set datafile separator ","
set multiplot layout 1,3 title "gift-default: per-application I/O time vs POFS (cf. GIFT Fig. 9)"
set title "CDF of I/O-time improvement over POFS"
set xlabel "improvement (%), 1 - T/T_POFS"; set ylabel "fraction of applications"
set key bottom right; set grid
set xrange [-50:80]; set yrange [0:1]
plot for [p in "$pols"] sprintf("$R-%s.csv", p) using (100*\$1):2 skip 1 with steps lw 2 title p
unset xrange; set yrange [0:*]
set style data histograms; set style fill solid 0.8 border -1; set boxwidth 0.8
set title "applications worse than POFS"; set ylabel "fraction"; set xlabel ""
plot "$R-summary.csv" using 6:xtic(1) skip 1 notitle
set title "their I/O-time loss"; set ylabel "loss (%)"
set key top left
plot "$R-summary.csv" using (100*\$7):xtic(1) skip 1 title "mean", "" using (100*\$8) skip 1 title "max"
unset multiplot
GP
	nst=$(awk -F, 'NR==1{print NF}' "$R-states.csv")
	gnuplot <<GP
set terminal pngcairo noenhanced size 1000,460 font ",9"
set output "$OUT/report-states.png"
set datafile separator ","
set title "gift-default: effective-bandwidth gain over POFS per system state\n(state = POFS run's applications in an I/O phase, 600 s windows; label: range, windows)"
set style data histograms; set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "gain (%)"; set grid ytics; set key outside right
set xtics rotate by -20
plot for [c=6:$nst] "$R-states.csv" using (100*column(c)):xtic(sprintf("%s-%s (%s)", strcol(2), strcol(3), strcol(4))) title columnheader(c)
GP
	gnuplot <<GP
set terminal pngcairo noenhanced size 1400,420 font ",9"
set output "$OUT/report-sweeps.png"
set datafile separator ","
set multiplot layout 1,3 title "GIFT on gift-default across its parameters, change vs POFS (cf. GIFT Fig. 11)"
set ylabel "%"; set grid; set key center right; set yrange [0:*]
set title "tau"; set xlabel "tau"
plot "$R-sweep-tau.csv" using 1:(100*\$2) skip 1 with linespoints lw 2 title "I/O time impr.", "" using 1:(100*\$9) skip 1 with linespoints lw 2 title "eff. system bandwidth gain", "" using 1:(100*\$6) skip 1 with linespoints title "apps worse"
set title "B_thres"; set xlabel "B_thres"
plot "$R-sweep-B_thres.csv" using 1:(100*\$2) skip 1 with linespoints lw 2 title "I/O time impr.", "" using 1:(100*\$9) skip 1 with linespoints lw 2 title "eff. system bandwidth gain", "" using 1:(100*\$6) skip 1 with linespoints title "apps worse"
set title "N (receding window)"; set xlabel "N"; set logscale x
plot "$R-sweep-N.csv" using 1:(100*\$2) skip 1 with linespoints lw 2 title "I/O time impr.", "" using 1:(100*\$9) skip 1 with linespoints lw 2 title "eff. system bandwidth gain", "" using 1:(100*\$6) skip 1 with linespoints title "apps worse"
unset multiplot
GP
	gnuplot <<GP
set terminal pngcairo noenhanced size 900,440 font ",9"
set output "$OUT/report-contention.png"
set datafile separator ","
set title "GIFT vs POFS at several contention levels (every job's I/O volume x level; cf. GIFT Fig. 14)"
set xlabel "contention level (I/O volume scale)"; set ylabel "improvement over POFS (%)"
set grid; set key top left
plot "$R-contention.csv" using 1:(100*\$2) skip 1 with linespoints lw 2 title "mean I/O time", "" using 1:(100*\$3) skip 1 with linespoints lw 2 title "mean run time", "" using 1:(100*\$9) skip 1 with linespoints lw 2 title "effective system bandwidth", "" using 1:(100*\$5) skip 1 with linespoints lw 2 title "throughput"
GP
fi
echo "plots in $OUT"
