#!/bin/sh
# sim_sweep.sh — GIFT's parameter sensitivity (gift.txt Fig. 11): runs
# `pfs-sim run --json` on a scenario for each value of N, tau, B_thres and
# regret_period (one at a time, the others at their defaults) and prints a
# CSV table:
#   param,value,mean_io_time,effective_bandwidth,effective_system_bandwidth,
#   frac_worse_than_pofs,mean_loss_worse,max_outstanding_node_hours,
#   coupons_issued,csys_blocked_frac,pofs_mean_io_time,
#   pofs_effective_bandwidth,pofs_effective_system_bandwidth
# (effective_bandwidth: useful bandwidth; effective_system_bandwidth: the
# paper's, capacity minus waste; bench/sim/README.md.)  Each run carries
# its own POFS reference (the "reference" object of --json).
# Usage: bench/sim_sweep.sh [SCENARIO.json] > sweep.csv
# Env: PFS_SIM (default build/bin/pfs-sim), N_VALUES, TAU_VALUES, B_VALUES,
# R_VALUES (regret_period, s), SEED (default: the scenario's), SCHEDULE
# (pinned, the default: GIFT replays the POFS run's start times; or easy;
# bench/sim/README.md "Schedules"), EXTRA (more pfs-sim arguments for every
# run, e.g. "--param tau=0").  B_thres = 0 is GIFT without throttling.
set -eu
SCEN=${1:-bench/scenarios/gift-default.json}
SIM=${PFS_SIM:-build/bin/pfs-sim}
N_VALUES=${N_VALUES:-"250 1000 2500 10000 250000"}
TAU_VALUES=${TAU_VALUES:-"0.1 0.5 0.8 0.9"}
B_VALUES=${B_VALUES:-"0 0.1 0.3 0.5 0.8"}
SCHEDULE=${SCHEDULE:-pinned}
SEED=${SEED:-}
EXTRA=${EXTRA:-}
R_VALUES=${R_VALUES:-"86400 604800 2160000"}
# top-level keys only: drop the reference object first
top() { sed 's/"reference": {[^}]*}//'; }
field() { sed -n "s/.*\"$1\": \([^,}]*\).*/\1/p"; }
ref() { sed -n 's/.*"reference": {\([^}]*\)}.*/\1/p' | field "$1"; }
echo "param,value,mean_io_time,effective_bandwidth,effective_system_bandwidth,frac_worse_than_pofs,mean_loss_worse,max_outstanding_node_hours,coupons_issued,csys_blocked_frac,pofs_mean_io_time,pofs_effective_bandwidth,pofs_effective_system_bandwidth"
run() {
	# shellcheck disable=SC2086 # EXTRA and the seed split into arguments
	out=$("$SIM" run "$SCEN" --policy gift --param "$1=$2" --json --schedule "$SCHEDULE" \
		${SEED:+--seed $SEED} $EXTRA)
	t=$(echo "$out" | top)
	row="$1,$2"
	for k in mean_io_time effective_bandwidth effective_system_bandwidth frac_worse_than_pofs \
		 mean_loss_worse max_outstanding_node_hours coupons_issued csys_blocked_frac; do
		row="$row,$(echo "$t" | field $k)"
	done
	for k in mean_io_time effective_bandwidth effective_system_bandwidth; do
		row="$row,$(echo "$out" | ref $k)"
	done
	echo "$row"
}
for v in $N_VALUES; do run N "$v"; done
for v in $TAU_VALUES; do run tau "$v"; done
for v in $B_VALUES; do run B_thres "$v"; done
for v in $R_VALUES; do run regret_period "$v"; done
