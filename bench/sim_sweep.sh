#!/bin/sh
# sim_sweep.sh — GIFT's parameter sensitivity (gift.txt Fig. 11): runs
# `pfs-sim run --json` on a scenario for each value of N, tau and B_thres
# (one at a time, the others at their defaults) and prints a CSV table:
#   param,value,mean_io_time,effective_bandwidth,frac_worse_than_pofs,
#   mean_loss_worse,max_outstanding_node_hours,pofs_mean_io_time,pofs_effective_bandwidth
# Usage: bench/sim_sweep.sh [SCENARIO.json] > sweep.csv
# Env: PFS_SIM (default build/bin/pfs-sim), N_VALUES, TAU_VALUES, B_VALUES.
set -eu
SCEN=${1:-bench/scenarios/gift-default.json}
SIM=${PFS_SIM:-build/bin/pfs-sim}
N_VALUES=${N_VALUES:-"250 1000 2500 10000"}
TAU_VALUES=${TAU_VALUES:-"0.1 0.5 0.8 0.9"}
B_VALUES=${B_VALUES:-"0.1 0.3 0.5 0.8"}
field() { sed -n "s/.*\"$1\": \([^,}]*\).*/\1/p"; }
ref=$("$SIM" run "$SCEN" --policy pofs --reference pofs --json)
rio=$(echo "$ref" | field mean_io_time)
rbw=$(echo "$ref" | field effective_bandwidth)
echo "param,value,mean_io_time,effective_bandwidth,frac_worse_than_pofs,mean_loss_worse,max_outstanding_node_hours,pofs_mean_io_time,pofs_effective_bandwidth"
run() {
	out=$("$SIM" run "$SCEN" --policy gift --param "$1=$2" --json)
	echo "$1,$2,$(echo "$out" | field mean_io_time),$(echo "$out" | field effective_bandwidth),$(echo "$out" | field frac_worse_than_pofs),$(echo "$out" | field mean_loss_worse),$(echo "$out" | field max_outstanding_node_hours),$rio,$rbw"
}
for v in $N_VALUES; do run N "$v"; done
for v in $TAU_VALUES; do run tau "$v"; done
for v in $B_VALUES; do run B_thres "$v"; done
