# qos_lib.sh — helpers shared by the QoS integration tests (t_qos_*.sh) and
# bench/qos/run.sh; sourced after lib.sh (tests) or with PFS_BIN, TOOLS and
# MDS set (bench).
#
#   load JOB ARGS...          run the qos_load tool as job JOB (SLURM_JOB_ID)
#   load_bg JOB ARGS...       the same in the background; LOAD_PID = its pid
#   mbps "SUMMARY"            the MBps= value of a qos_load summary line
#   near V TARGET PCT         V within TARGET +- PCT percent
#   near_abs V TARGET D       |V - TARGET| <= D
#   file_on_ost PATH OST      create PATH, one stripe, on cluster OST index OST
#   rss_kb PID                VmRSS of PID in KiB
#   qos_wait_decisions N S    wait up to S seconds for `qos show` decisions >= N
#   csv_mbps FILE JOB T0 T1   mean MB/s of JOB in a qos_load CSV between two times
#   alloc_mbps JOB OST        allocation of JOB on OST in `qos show`, MB/s
# jq is required (deploy/install-deps.sh installs it).

command -v jq >/dev/null 2>&1 || { echo "FAIL: jq missing (deploy/install-deps.sh installs it)" >&2; exit 1; }
QOS_LOAD=${QOS_LOAD:-$TOOLS/qos_load}
[ -x "$QOS_LOAD" ] || { echo "FAIL: $QOS_LOAD missing (make ${PFS_BIN%/bin}/tests/tools/qos_load)" >&2; exit 1; }

load() { local job=$1; shift; SLURM_JOB_ID=$job "$QOS_LOAD" "$@"; }
# load_bg JOB ARGS...: the same in the background, LOAD_PID = the tool's own
# pid (a backgrounded `load` would be a subshell: signals to $! would stop
# the subshell, not the writer).
load_bg() { local job=$1; shift; SLURM_JOB_ID=$job "$QOS_LOAD" "$@" & LOAD_PID=$!; }

mbps() { printf '%s\n' "$1" | sed -n 's/.*MBps=\([0-9.]*\).*/\1/p' | tail -n 1; }

near() { awk -v v="$1" -v t="$2" -v p="$3" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(v != "" && d <= t * p / 100) }'; }
near_abs() { awk -v v="$1" -v t="$2" -v e="$3" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(v != "" && d <= e) }'; }
# gt A B: A > B (floats)
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 > b + 0) }'; }

# file_on_ost PATH OST: the MDS picks OSTs round-robin, so create empty
# one-stripe files next to PATH until one lands on OST and rename it to
# PATH (a rename keeps the layout).  getstripe is the check.
file_on_ost() {
	local path=$1 want=$2 i ost tmp
	for i in $(seq 1 64); do
		tmp=$path.try$i
		"$PFS_BIN/pfsadmin" --mds "$MDS" setstripe -c 1 -S 1M "$tmp" >/dev/null || return 1
		ost=$("$PFS_BIN/pfsadmin" --mds "$MDS" --json getstripe "$tmp" | jq '.stripes[0].ost')
		if [ "$ost" = "$want" ]; then
			mv "$tmp" "$path"
			return 0
		fi
		rm -f "$tmp"
	done
	echo "file_on_ost: no file of 64 landed on OST $want" >&2
	return 1
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

qos_decisions() { "$PFS_BIN/pfsadmin" --mds "$MDS" --json qos show 2>/dev/null | jq '.decisions // 0'; }

qos_wait_decisions() {
	local want=$1 secs=$2 i d=0
	for i in $(seq 1 $((secs * 10))); do
		d=$(qos_decisions)
		[ "${d:-0}" -ge "$want" ] && return 0
		sleep 0.1
	done
	echo "qos: $d decisions after ${secs}s, wanted $want" >&2
	return 1
}

# csv_mbps FILE JOB T0 T1: mean rate of JOB in MB/s over the rows of a
# qos_load CSV (t,job,bytes_per_s) with T0 <= t < T1 (epoch seconds).
csv_mbps() {
	awk -F, -v j="$2" -v a="$3" -v b="$4" '$2 == j && $1 >= a && $1 < b { s += $3; n++ }
		END { if (n) printf "%.3f\n", s / n / 1e6 }' "$1"
}

# alloc_mbps JOB OST: the allocation of JOB on OST in `qos show`, MB/s
# (empty when none, "unlimited" when the job runs without a rule).
alloc_mbps() {
	"$PFS_BIN/pfsadmin" --mds "$MDS" --json qos show |
		jq -r --arg j "$1" --argjson o "$2" '.allocations[] | select(.job == $j and .ost == $o) |
			if .alloc_bytes_per_s == null then "unlimited" else .alloc_bytes_per_s / 1e6 end'
}
