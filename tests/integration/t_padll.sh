#!/bin/bash
# PADLL live (issue 12): 4 jobs run create/stat/unlink loops (md_load, 2
# threads each) on one mount against one MDS whose create and unlink
# classes have Max_R = 400 requests/s, far below what it serves here
# (~3,000 rounds/s).  For each algorithm the per-job round rates (one
# create per round) over seconds 3..8 must match the allocation within
# 10 %, and the aggregate over every 5 s window must stay within
# Max_R + 5 %:
#   uniform       jobs=4                      -> 100 each
#   priority      priorities 1,2,3,4          -> 40, 80, 120, 160
#   proportional  demands 50,100,300,300      -> 50, 100, 125, 125
#   psfa          demands 200 each; job d idle for 6 s: a, b, c get
#                 ~133 while d idles, and d gets at least half of its
#                 fair share (100) within two control periods of starting
# Then a mount with -o mdqos=off (a client that ignores the rates) runs one
# job alone with uniform jobs=1 Max_R 200: the MDS's own buckets hold it to
# 200 + 5 %.  Bad input: unknown class, zero and negative Max_R, unknown
# algorithm are refused by pfsadmin and by the MDS (raw keys).  Data
# classes: job r's read calls (its read RPCs at the OSS) with Max_R.read =
# 40 run at 40/s + 5 % (unlimited they run > 80/s), and `pfsadmin jobstats` shows
# its PADLL read row (rate, limit, Max_R).
# timeout: 200
. "$(dirname "$0")/lib.sh"

LOAD=$TOOLS/md_load
[ -x "$LOAD" ] || fail "$LOAD missing (make ${PFS_BIN%/bin}/tests/tools/md_load)"
OFF=$T/m_off
padll_cleanup() {
	local rc=$?
	mountpoint -q "$OFF" 2>/dev/null && { umount "$OFF" 2>/dev/null || umount -l "$OFF"; }
	(exit $rc)
	cleanup
}
trap padll_cleanup EXIT

start_cluster --oss 1
JOBS="a b c d"

# run SECS [job:delay ...]: md_load per job into $T/out.JOB
run() {
	local secs=$1; shift
	local pids=()
	for jd in "$@"; do
		local j=${jd%%:*} delay=${jd#*:}
		[ "$delay" = "$jd" ] && delay=0
		PFS_JOBID=$j "$LOAD" "$MNT/$j" 2 "$secs" "$delay" >"$T/out.$j" 2>"$T/err.$j" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || fail "md_load failed: $(cat "$T"/err.*)"; done
}
# mean JOB FROM TO: mean rounds/s of seconds [FROM, TO)
mean() { awk -F, -v a="$2" -v b="$3" '$1>=a && $1<b {s+=$2; n++} END {printf "%.1f", n ? s/n : 0}' "$T/out.$1"; }
# near GOT WANT PCT
near() { awk -v g="$1" -v w="$2" -v p="$3" 'BEGIN {d = g - w; if (d < 0) d = -d; exit !(d <= w * p / 100)}'; }
# aggregate JOBS...: every 5 s window (from second 2) within MAXR + 5 %
aggregate() {
	local worst
	worst=$(for j in "$@"; do cat "$T/out.$j"; done |
		awk -F, '{s[$1] += $2; if ($1 > m) m = $1}
			 END {w = 0; for (t = 2; t + 5 <= m + 1; t++) {x = 0; for (k = t; k < t + 5; k++) x += s[k]; x /= 5; if (x > w) w = x}; print w}')
	awk -v w="$worst" -v m="$MAXR" 'BEGIN {exit !(w <= m * 1.05)}' ||
		fail "$ALGO: aggregate $worst/s over a 5 s window > Max_R $MAXR + 5 %"
	echo "$ALGO: aggregate (worst 5 s window) $worst/s"
}
expect() { # expect JOB WANT
	local got
	got=$(mean "$1" 3 8)
	near "$got" "$2" 10 || fail "$ALGO: job $1 ran $got/s, allocation $2/s (±10 %)"
	echo "$ALGO: job $1 $got/s (allocation $2)"
}
setmd() { admin qos md "$@" >/dev/null || fail "qos md $*"; }
# sc X: X scaled by F (every rate below is written for Max_R = 400)
sc() { awk -v x="$1" -v f="$F" 'BEGIN {printf "%g", x * f}'; }

# ---- bad input
for bad in max_r.bogus=10 max_r.create=0 max_r.create=-5 algo=fair frob=1; do
	admin qos md set "$bad" >/dev/null 2>"$T/err" && fail "pfsadmin took $bad"
	grep -q "unknown\|must be\|out of range" "$T/err" || fail "no clear error for $bad: $(cat "$T/err")"
done
admin qos md set --job a max_r.create=10 >/dev/null 2>&1 && fail "max_r per job taken"
admin qos md set demand.create=10 >/dev/null 2>&1 && fail "demand without --job taken"
admin --json qos md show | jq -e '.algo == "none" and (.max_r | length) == 0' >/dev/null ||
	fail "a refused setting changed something"
ok "bad input refused"

# ---- capacity: Max_R must be well below what this machine serves (a
# sanitizer build on a loaded 2-CPU VM serves a few hundred rounds/s, a
# normal one thousands), else no algorithm can be held to its allocation.
# Unlimited rounds/s of the four jobs give Max_R = 400, or less: half the
# measured capacity, a multiple of 40 (so every allocation below stays a
# whole number); F scales every expected rate.
run 4 a b c d
CAP=$(for j in $JOBS; do awk -F, '$1>=1 && $1<3 {s+=$2; n++} END {print n ? s/n : 0}' "$T/out.$j"; done |
	awk '{s += $1} END {printf "%d", s}')
MAXR=$(awk -v c="$CAP" 'BEGIN {m = int(c / 2 / 40) * 40; if (m > 400) m = 400; print m}')
[ "$MAXR" -ge 80 ] || fail "the MDS serves only $CAP rounds/s unlimited: too slow to test PADLL"
F=$(awk -v m="$MAXR" 'BEGIN {print m / 400}')
echo "capacity: $CAP rounds/s unlimited; Max_R = $MAXR (rates scaled by $F)"

# ---- uniform
ALGO=uniform
setmd algo uniform max_r.create=$MAXR max_r.unlink=$MAXR jobs=4
sleep 6 # the mount's probe job ages out of the static population
run 9 a b c d
for j in $JOBS; do expect $j "$(sc 100)"; done
aggregate $JOBS
ok "uniform"

# ---- priority
ALGO=priority
for p in "a 1" "b 2" "c 3" "d 4"; do
	set -- $p
	admin job register "$1" --priority "$2" >/dev/null || fail "register $1"
done
setmd algo priority weight_sum=10
run 9 a b c d
expect a "$(sc 40)"; expect b "$(sc 80)"; expect c "$(sc 120)"; expect d "$(sc 160)"
aggregate $JOBS
ok "priority"

# ---- proportional
ALGO=proportional
setmd algo proportional
for jd in "a 50" "b 100" "c 300" "d 300"; do
	set -- $jd
	d=$(sc "$2")
	admin qos md set --job "$1" "demand.create=$d" "demand.unlink=$d" >/dev/null ||
		fail "demand $1"
done
run 9 a b c d
expect a "$(sc 50)"; expect b "$(sc 100)"; expect c "$(sc 125)"; expect d "$(sc 125)"
aggregate $JOBS
admin --json qos md show | jq -e --argjson d "$(sc 50)" '[.rates[] | select(.job == "a" and .class == "create")][0].demand == $d' \
	>/dev/null || fail "demand not shown"
ok "proportional"

# ---- PSFA: d idle for 6 s, then busy
ALGO=psfa
setmd algo psfa epsilon=0.5
for j in $JOBS; do
	admin qos md set --job "$j" demand.create="$(sc 200)" demand.unlink="$(sc 200)" >/dev/null || fail "demand $j"
done
run 14 a b c d:6
for j in a b c; do
	got=$(mean $j 2 6)
	near "$got" "$(sc 133.3)" 10 || fail "psfa: busy job $j got $got/s while d idled (want $(sc 133.3))"
done
echo "psfa: a b c while d idle: $(mean a 2 6) $(mean b 2 6) $(mean c 2 6)"
# d starts at second 6: within two control periods (seconds 6..8) it must
# be served at least half its fair share, and it keeps growing.
got=$(mean d 7 9)
awk -v g="$got" -v w="$(sc 50)" 'BEGIN {exit !(g >= w)}' || fail "psfa: d got $got/s in its first 2 periods"
echo "psfa: d after waking: s7-8 $got/s, s11-13 $(mean d 11 14)/s; a $(mean a 11 14)/s"
aggregate $JOBS
ok "psfa"

# ---- a client that ignores the rates
ALGO=enforce
MAXR=$(sc 200)
setmd algo uniform max_r.create=$MAXR max_r.unlink=$MAXR jobs=1
mkdir -p "$OFF"
if [ "${PFS_AUTH:-on}" = off ]; then AO=auth=0; else AO=key=$CLUSTER/keys/client.key; fi
"$PFS_BIN/mount.pfs" "$MDS" "$OFF" -o "$AO,mdqos=off,log=file:$CLUSTER/mount-off.log" ||
	fail "mount with mdqos=off"
sleep 6 # a..d leave the static population
MNT_SAVE=$MNT; MNT=$OFF
run 9 e
MNT=$MNT_SAVE
got=$(mean e 2 9)
awk -v g="$got" -v m=$MAXR 'BEGIN {exit !(g <= m * 1.05 && g >= m * 0.8)}' ||
	fail "mdqos=off client ran $got/s, Max_R $MAXR"
held=$(admin --json qos md show | jq .held)
echo "enforce: mdqos=off job e $got/s (Max_R $MAXR), MDS held $held requests"
aggregate e
umount "$OFF" || fail "umount $OFF"
ok "MDS holds a client that ignores its rates"

# the settings survive an MDS restart? (persisted in LMDB)
admin --json qos md show | jq -e --argjson m "$MAXR" '.algo == "uniform" and .max_r.create == $m' \
	>/dev/null || fail "settings not shown (Max_R.create $MAXR)"

# ---- data classes (client/osc.c): a job's read calls are held to its
# read rate (one token per read call; 64 KiB O_DIRECT reads are one call
# each).  Unlimited it runs far above Max_R (so the check can fail).
QL=$TOOLS/qos_load
[ -x "$QL" ] || fail "$QL missing"
mkdir -p "$MNT/rd"
PFS_JOBID=r SLURM_JOB_ID=r "$QL" prep "$MNT/rd" --streams 2 --bs 64K --size 4M >/dev/null ||
	fail "prep"
# The page cache may serve some of the application's reads (the kernel's
# readahead makes larger ones), so count what the client sent: job r's
# read RPCs at the OSS (one per read call: 64 KiB..1 MiB in one stripe).
rrpcs() { admin --json jobstats | jq '[.jobs[] | select(.job == "r") | .osts[].read_rpcs] | add // 0'; }
readops() { # -> job r's read calls/s over 5 s (after a 1 s warm-up)
	local a b t0 t1
	PFS_JOBID=r SLURM_JOB_ID=r "$QL" read "$MNT/rd" --streams 2 --bs 64K --size 4M --direct \
		--seconds 1 >/dev/null || fail "read load"
	a=$(rrpcs); t0=$(date +%s.%N)
	PFS_JOBID=r SLURM_JOB_ID=r "$QL" read "$MNT/rd" --streams 2 --bs 64K --size 4M --direct \
		--seconds 5 >/dev/null || fail "read load"
	t1=$(date +%s.%N); b=$(rrpcs)
	awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f", (b - a) / (t1 - t0) }'
}
free_ops=$(readops)
RMAX=40
awk -v g="$free_ops" -v m=$RMAX 'BEGIN {exit !(g > 2 * m)}' ||
	fail "read: unlimited job r ran only $free_ops calls/s: cannot test a limit of $RMAX"
setmd algo uniform max_r.read=$RMAX jobs=1
sleep 2.5 # the mount pulls the new rates (1 s period)
got=$(readops)
awk -v g="$got" -v m=$RMAX 'BEGIN {exit !(g <= m * 1.05 && g >= m * 0.7)}' ||
	fail "read: job r ran $got calls/s, Max_R.read $RMAX (unlimited: $free_ops/s)"
echo "read: job r $got calls/s under Max_R.read $RMAX (unlimited $free_ops/s)"
# jobstats joins the MDS's PADLL rows: job r's read class, its limit and Max_R
admin --json jobstats | jq -e --argjson m $RMAX \
	'[.padll.rates[] | select(.job == "r" and .class == "read")][0] | .max_r == $m and .rate == $m and .arrived_per_s > 0' \
	>/dev/null || fail "jobstats: no PADLL read row for r: $(admin --json jobstats | jq -c .padll)"
admin jobstats | grep -A50 '^PADLL' | grep -q '^r .*read' || fail "jobstats table: no PADLL read row"
ok "PADLL read class held on the data path; jobstats shows it"
