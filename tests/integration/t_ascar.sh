#!/bin/bash
# ASCAR live (issue 12): a rule set loaded with `pfsadmin qos ascar load`
# reaches the mount (fetched from the MDS) and changes the congestion
# window of its OSS streams; `qos ascar show` prints it back; `qos ascar
# off` turns it off on the client; malformed rule files are refused with
# the file and line named, and change nothing on the MDS.
# timeout: 90
. "$(dirname "$0")/lib.sh"

start_cluster --oss 1 --oss-opt ost_bandwidth=200 \
	--mount-opt log_level=info --mount-opt qos_poll_ms=300
LOG=$CLUSTER/client.log

# bad input first: nothing may be stored
printf '[0, inf) [0, inf)\n' >"$T/bad1.rules"
out=$(admin qos ascar load "$T/bad1.rules" 2>&1) && fail "short rule accepted"
echo "$out" | grep -q "bad1.rules:1" || fail "no line number: $out"
printf '# ok line\n[0, inf) [0, inf) [0, inf) 1 0 0\n[5, 9) [0, inf) [0, inf) 1 0 0\n' >"$T/bad2.rules"
out=$(admin qos ascar load "$T/bad2.rules" 2>&1) && fail "overlapping rules accepted"
echo "$out" | grep -q "bad2.rules:3" || fail "overlap not on line 3: $out"
printf '# nothing\n\n' >"$T/bad3.rules"
admin qos ascar load "$T/bad3.rules" >/dev/null 2>&1 && fail "empty rule file accepted"
admin qos ascar load "$T/nonexistent.rules" >/dev/null 2>&1 && fail "missing file accepted"
admin qos ascar show | grep -q "ascar off (v0)" || fail "a refused file changed the MDS: $(admin qos ascar show)"
ok "malformed rule files refused with line numbers"

# a fixed window of 2 in the whole state space, then one of 5
printf '[0, inf) [0, inf) [0, inf) 0 2 0\n' >"$T/w2.rules"
admin qos ascar load "$T/w2.rules" | grep -q "v1 loaded" || fail "load"
admin qos ascar show | grep -q "^\[0, inf) *\[0, inf) *\[0, inf) *0 *2 *0" ||
	fail "show: $(admin qos ascar show)"
# the mount picks it up within a few poll periods
for _ in $(seq 1 50); do grep -q "ascar: rule set v1 installed (on)" "$LOG" && break; sleep 0.1; done
grep -q "ascar: rule set v1 installed (on)" "$LOG" || fail "client did not fetch v1"
SLURM_JOB_ID=a1 dd if=/dev/zero of="$MNT/f" bs=1M count=40 oflag=direct status=none ||
	fail "write"
grep -q "ascar .*: window 8 -> 2 (rule 0, v1)" "$LOG" || fail "window not set to 2: $(grep ascar "$LOG" | tail -5)"
ok "rule set v1 reached the client and set its window to 2"

printf '[0, inf) [0, inf) [0, inf) 0 5 0\n' >"$T/w5.rules"
admin qos ascar load "$T/w5.rules" | grep -q "v2 loaded" || fail "load v2"
for _ in $(seq 1 50); do grep -q "rule set v2 installed" "$LOG" && break; sleep 0.1; done
SLURM_JOB_ID=a1 dd if=/dev/zero of="$MNT/g" bs=1M count=40 oflag=direct status=none || fail "write 2"
grep -q "ascar .*: window 8 -> 5 (rule 0, v2)" "$LOG" || fail "window not 5 under v2"
grep -q "ascar .*: v1 rpcs [1-9][0-9]* p50_us [0-9]* p99_us [1-9]" "$LOG" ||
	fail "no statistics for v1"
grep -q "ascar .*: v1 rule 0 hits [1-9]" "$LOG" || fail "no rule hits for v1"
ok "a new version replaces the window; the old version's statistics are logged"

admin qos ascar off | grep -q "v3 off" || fail "off"
for _ in $(seq 1 50); do grep -q "rule set v3 installed (off)" "$LOG" && break; sleep 0.1; done
grep -q "rule set v3 installed (off)" "$LOG" || fail "off not fetched"
admin qos ascar show | grep -q "ascar off (v3)" || fail "show after off"
ok "off"
