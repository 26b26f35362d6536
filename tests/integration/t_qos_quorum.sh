#!/bin/bash
# QoS decisions across an OSS failure: 4 OSSes, decisions every second
# (qos_policy=static, job Q limited to 20 MB/s per OST), quorum 80 %.
#   - kill -9 one OSS: while the MDS still counts it (heartbeat_timeout_ms 3000)
#     3 of 4 answers are below quorum and intervals are skipped; once it is
#     down, decisions continue with the 3 left, and Q stays held to its rate
#     on the surviving OSTs;
#   - restart it: it registers again, is counted in the quorum, and gets
#     the current allocation: a writer of Q on its OST runs at 20 MB/s, not
#     at the OST's 200 MB/s.
# timeout: 150
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qos_lib.sh"

start_cluster --oss 4 --oss-opt ost_bandwidth=200 --mds-opt qos_policy=static \
	--mds-opt qos_interval_s=1 --mds-opt heartbeat_timeout_ms=3000
admin job register Q --nodes 1 --limit 20MB/s >/dev/null || fail "register Q"
# The OSS of the highest OST index is the victim; Q has one file per OST.
victim=$(admin --json ost list | jq -r '.osts[] | select(.index == 3) | .oss')
[ -n "$victim" ] || fail "no OST 3: $(admin --json ost list)"
mkdir -p "$MNT/Q"
for i in 0 1 2; do file_on_ost "$MNT/Q/load.$i" "$i" || fail "file on OST $i"; done
file_on_ost "$MNT/Q/v.0" 3 || fail "file on OST 3"
echo "victim: $victim (OST 3)"

shown() { admin --json qos show | jq -c "$1"; }
q_alloc() { alloc_mbps Q "$1"; }

load_bg Q write "$MNT/Q" --streams 3 --seconds 30 --direct --size 32M --interval-ms 500 --csv "$T/rates.csv" >"$T/p1"
p1=$LOAD_PID
load_bg Q write "$MNT/Q" --prefix v --streams 1 --seconds 30 --direct --size 32M >"$T/p2"
p2=$LOAD_PID
sleep 4
for o in 0 1 2 3; do
	a=$(q_alloc $o); [ "$a" = 20 ] || fail "before: Q on OST $o allocated '$a' MB/s, want 20"
done
ok "Q allocated 20 MB/s on each of 4 OSTs: $(shown '.quorum')"

kill -TERM $p2; wait $p2 2>/dev/null
d0=$(qos_decisions); s0=$(shown '.skipped')
"$REPO/deploy/pfs-cluster" kill "$CLUSTER" "$victim" || fail "kill $victim"
tk=$(date +%s.%N)
qos_wait_decisions $((d0 + 4)) 15 || fail "decisions stopped after $victim died: $(shown '{decisions, skipped, quorum}')"
d1=$(qos_decisions); s1=$(shown '.skipped')
echo "decisions $d0 -> $d1, skipped $s0 -> $s1 after the kill; quorum now $(shown '.quorum')"
[ "$(shown '.quorum.answered')" = 3 ] || fail "quorum after the kill: $(shown '.quorum')"
admin --json ost list | jq -e --arg v "$victim" '.osts[] | select(.oss == $v) | .state == "down"' >/dev/null ||
	fail "$victim not down in ost list"
sleep 3
for o in 0 1 2; do
	a=$(q_alloc $o); [ "$a" = 20 ] || fail "after the kill: Q on OST $o allocated '$a' MB/s, want 20"
done
r=$(csv_mbps "$T/rates.csv" Q "$(awk -v t="$tk" 'BEGIN { printf "%.3f", t + 5 }')" "$(date +%s.%N)")
echo "Q on the 3 surviving OSTs: $r MB/s"
near "$r" 60 10 || fail "Q at $r MB/s on 3 OSTs, want 3 x 20 +- 10 %"
ok "decisions continue with 3 of 4 OSSes (skipped while the dead one was still counted: $((s1 - s0)))"

"$REPO/deploy/pfs-cluster" revive "$CLUSTER" >/dev/null || fail "revive $victim"
d2=$(qos_decisions)
qos_wait_decisions $((d2 + 2)) 10 || fail "no decisions after $victim came back"
[ "$(shown '.quorum.answered')" = 4 ] || sleep 2
[ "$(shown '.quorum.answered')" = 4 ] || fail "quorum after revive: $(shown '.quorum')"
out=$(load Q write "$MNT/Q" --prefix v --streams 1 --seconds 7 --skip 3 --direct --size 32M)
r=$(mbps "$out")
echo "Q on OST 3 after $victim came back: $r MB/s; rules there: $(admin --json nrs tbf rule list | jq -c --arg v "$victim" '[.oss[] | select(.oss == $v) | .rules[] | {expr, origin}]')"
near "$r" 20 5 || fail "restarted $victim does not hold Q to its 20 MB/s: $r MB/s"
a=$(q_alloc 3); [ "$a" = 20 ] || fail "after revive: Q on OST 3 allocated '$a' MB/s"
ok "restarted $victim counted in the quorum again and enforcing the current rate"
kill -TERM $p1 2>/dev/null; wait
