#!/bin/bash
# Fault injection under a metadata storm (issue 8, "How it is checked"):
# while two writers (dd with fsync, files striped over both OSSes) and a
# metadata storm (md_load storm: 4 threads of create + write, stat, rename,
# unlink in directories of their own, every acknowledged operation logged)
# run on one mount, the test kills -9 one OSS and revives it, stops the MDS
# (SIGSTOP) for 10 s and continues it, then kills -9 the MDS and revives
# it.  Afterwards: no application saw any error (every errno is logged and
# fails the test: EPIPE/ECONNREFUSED/ETIMEDOUT above all, and EEXIST/ENOENT
# would mean an operation applied twice), every acknowledged file is there
# byte for byte, the namespace is exactly what the acknowledged creates,
# renames and unlinks make (md_load verify: nothing lost, nothing extra,
# each file's content its creation name), and `pfsadmin lfsck --dry-run`
# finds no orphan object.  Prints the longest stall (the longest single
# operation).  No speed is asserted.
#
# STORM_LONG=1: the same faults twice over with longer pauses (about 3
# minutes; run it directly):
#   STORM_LONG=1 PFS_BIN=$PWD/build/bin bash tests/integration/t_storm.sh
# timeout: 240
. "$(dirname "$0")/lib.sh"
LOAD=$TOOLS/md_load
[ -x "$LOAD" ] || fail "no $LOAD (built by make test / the itools)"
ROUNDS=1; PAUSE=3
[ "${STORM_LONG:-0}" = 1 ] && { ROUNDS=2; PAUSE=10; }
start_cluster --oss 2
admin setstripe -c 2 -S 1M "$MNT" >/dev/null 2>&1 || true
mkdir -p "$MNT/w" "$T/src" || fail "mkdir"
for i in $(seq 1 4); do head -c $((2 * 1048576 + i * 4099)) /dev/urandom > "$T/src/s$i"; done
C="$REPO/deploy/pfs-cluster"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# Writer W: file W.k gets source k%4; acked when dd (with fsync) exits 0.
writer() {
	local k=0 s t0
	while [ ! -e "$T/stop" ]; do
		k=$((k + 1)); s=$((k % 4 + 1)); t0=$(now_ms)
		if dd if="$T/src/s$s" of="$MNT/w/$1.$k" bs=1M conv=fsync status=none \
			2>>"$T/w.err"; then
			echo "$1.$k $s" >> "$T/w.ack"
		else
			echo "dd $1.$k exit $?" >> "$T/w.err"
		fi
		echo $(( $(now_ms) - t0 )) >> "$T/w.lat"
	done
}

: > "$T/w.err"; : > "$T/w.ack"; : > "$T/w.lat"
writer a & W1=$!
writer b & W2=$!
# generous upper bound: the storm stops on $T/stop long before
"$LOAD" storm "$MNT/m" 4 "$T/stop" 600 "$T/mdlog" > "$T/md.out" 2> "$T/md.err" & MP=$!

for r in $(seq 1 $ROUNDS); do
	sleep $PAUSE
	echo "round $r: kill -9 oss0, revive after 4 s"
	"$C" kill "$CLUSTER" oss0 KILL || fail "kill oss0"
	sleep 4
	"$C" revive "$CLUSTER" >/dev/null || fail "revive oss0"
	sleep $PAUSE
	echo "round $r: SIGSTOP the MDS for 10 s"
	"$C" kill "$CLUSTER" mds STOP || fail "stop mds"
	sleep 10
	"$C" kill "$CLUSTER" mds CONT || fail "cont mds"
	sleep $PAUSE
	echo "round $r: kill -9 the MDS, revive"
	"$C" kill "$CLUSTER" mds KILL || fail "kill mds"
	sleep 2
	"$C" revive "$CLUSTER" >/dev/null || fail "revive mds"
done
sleep 5
touch "$T/stop"
wait $W1; wait $W2
wait $MP; mrc=$?

nw=$(wc -l < "$T/w.ack")
maxw=$(sort -n "$T/w.lat" | tail -1)
read -r _ nops _ nerr _ maxm < "$T/md.out" || true
echo "writers: $nw files acknowledged, longest file ${maxw:-?} ms"
echo "storm: ${nops:-?} operations acknowledged, ${nerr:-?} errors, longest operation ${maxm:-?} ms"
echo "mount: $(grep -c "resending" "$CLUSTER/client.log") request(s) resent after a lost reply"
errs=$(grep -h "^E " "$T"/mdlog.* 2>/dev/null)
if [ -s "$T/w.err" ] || [ -n "$errs" ] || [ -s "$T/md.err" ] || [ "$mrc" != 0 ]; then
	cat "$T/w.err" "$T/md.err" >&2
	echo "$errs" | head -20 >&2
	all="$(cat "$T/w.err" "$T/md.err"; echo "$errs")"
	echo "$all" | grep -qi "broken pipe\|connection refused\|timed out\|connection reset\|no route" &&
		fail "a network error reached an application"
	echo "$all" | grep -qi "file exists\|no such file" &&
		fail "an operation was applied twice or lost (EEXIST/ENOENT)"
	fail "an application saw an error (storm exit $mrc)"
fi
[ "$nw" -ge 2 ] && [ "${nops:-0}" -ge 30 ] || fail "too little progress ($nw files, ${nops:-0} operations)"
ok "no application error through an OSS kill, an MDS stop and an MDS kill"

sync; echo 3 > /proc/sys/vm/drop_caches
while read -r f s; do
	cmp -s "$T/src/s$s" "$MNT/w/$f" || fail "acknowledged file $f differs"
done < "$T/w.ack"
ok "every acknowledged file is there byte for byte ($nw files)"
out=$("$LOAD" verify "$MNT/m" 4 "$T/mdlog" 2>&1) || { echo "$out" | head -20 >&2; fail "namespace differs from the acknowledged operations"; }
ok "the namespace is what the acknowledged operations made, none twice ($out)"

command -v jq >/dev/null || { echo "skip: the lfsck check (no jq)"; exit 0; }
# unlinked files' objects go through the destroy log (not orphans); give
# a revived OSS's destroys a moment
lfsck_out=$(admin --json lfsck --dry-run) || fail "pfsadmin lfsck --dry-run failed: $lfsck_out"
read -r reached orph <<<"$(echo "$lfsck_out" |
	jq -r '"\([.osts[] | select(.reached)] | length) \(.orphaned)"')"
[ "$reached" = 2 ] || fail "lfsck --dry-run reached $reached of 2 OSTs: $lfsck_out"
[ "$orph" = 0 ] || fail "lfsck --dry-run: $orph orphan object(s): $lfsck_out"
ok "no orphan object (lfsck --dry-run)"
echo "longest stall: $(( ${maxw:-0} > ${maxm:-0} ? ${maxw:-0} : ${maxm:-0} )) ms"
