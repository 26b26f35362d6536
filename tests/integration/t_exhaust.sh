#!/bin/bash
# Resource exhaustion (issue 7): while 2,000 idle connections sit on the MDS
# and on an OSS data port, and that data port also has a slowloris, a slow
# reader and a pipelining writer of requests with 1 MiB replies, and 100,000
# requests with random job ids, a normal client's stat (p99 reported; sanity bound 2 s)
# and a 1 MiB read (sha256 checked) complete; the slowloris and the
# pipeliner are closed by the server's timeouts; the OSS job table stays
# bounded.  RSS and thread count of both daemons are logged before and after.
# timeout: 600
. "$(dirname "$0")/lib.sh"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
start_cluster --oss 2 \
	--mds-opt max_conns=4096 \
	--oss-opt max_conns=4096 --oss-opt conn_send_timeout_ms=5000 \
	--oss-opt conn_frame_ms=3000
AB=$TOOLS/conn_abuse
[ -x "$AB" ] || fail "no $AB (build the integration tools)"
# With authentication (the default) the hostile peers hold a client key, so
# they reach the server past the handshake.
KEY=()
[ -f "$CLUSTER/keys/client.key" ] && KEY=(--key "$CLUSTER/keys/client.key")

usage() { # NAME PIDFILE
	local pid
	pid=$(cat "$2")
	printf '%s: rss %s kB, threads %s, fds %s\n' "$1" \
		"$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")" \
		"$(awk '/^Threads/ {print $2}' "/proc/$pid/status")" \
		"$(ls "/proc/$pid/fd" | wc -l)"
}

# The victim: a 1 MiB file (one object), and 200 small files to stat.
head -c 1048576 /dev/urandom >"$T/big"
want=$(sha256sum <"$T/big" | cut -d' ' -f1)
check cp "$T/big" "$MNT/big"
mkdir "$MNT/s" || fail "mkdir"
for i in $(seq 0 199); do : >"$MNT/s/f$i" || fail "create f$i"; done
sync
ost=$(admin getstripe --json "$MNT/big" | jq -r '.stripes[0].ost')
port=$(admin ost list --json | jq -r ".osts[] | select(.index == $ost) | .data_port")
oss=$(admin ost list --json | jq -r ".osts[] | select(.index == $ost) | .oss")
[ -n "$port" ] && [ "$port" != null ] || fail "no data port for OST $ost"
ossi=${oss#oss}
DATA=127.0.0.1:$port
echo "target: OST $ost on $oss ($DATA), where the 1 MiB file lives"

echo "--- before"
usage mds "$CLUSTER/mds.pid"
usage "$oss" "$CLUSTER/oss$ossi.pid"

DUR=40
"$AB" "${KEY[@]}" idle "$MDS" 2000 $DUR >"$T/idle-mds.out" 2>&1 &
"$AB" "${KEY[@]}" idle "$DATA" 2000 $DUR >"$T/idle-oss.out" 2>&1 &
"$AB" "${KEY[@]}" slowloris "$DATA" $DUR >"$T/slowloris.out" 2>&1 &
"$AB" "${KEY[@]}" slowread "$DATA" $DUR >"$T/slowread.out" 2>&1 &
"$AB" "${KEY[@]}" pipeline "$DATA" $DUR >"$T/pipeline.out" 2>&1 &
"$AB" "${KEY[@]}" jobids "$DATA" "$ost" 100000 >"$T/jobids.out" 2>&1 &
jobids_pid=$!
for f in idle-mds idle-oss; do
	for _ in $(seq 1 300); do
		grep -q "connections open" "$T/$f.out" 2>/dev/null && break
		sleep 0.1
	done
	cat "$T/$f.out"
	grep -q "idle: 2000 of 2000 connections open" "$T/$f.out" || fail "$f: not all open"
done
sleep 2

echo "--- during"
usage mds "$CLUSTER/mds.pid"
usage "$oss" "$CLUSTER/oss$ossi.pid"
sync; echo 3 >/proc/sys/vm/drop_caches
out=$("$AB" statlat "$MNT/s" 200) || fail "stat during the attack: $out"
echo "$out"
p99=$(echo "$out" | sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p')
awk -v p="$p99" 'BEGIN { exit !(p < 2000) }' || fail "stat p99 $p99 ms"
t0=$(date +%s%N)
got=$(dd if="$MNT/big" bs=1M count=1 2>/dev/null | sha256sum | cut -d' ' -f1)
t1=$(date +%s%N)
[ "$got" = "$want" ] || fail "1 MiB read during the attack: sha256 differs"
echo "1 MiB read during the attack: $(( (t1 - t0) / 1000000 )) ms, sha256 ok"

wait "$jobids_pid" || fail "jobids: $(cat "$T/jobids.out")"
cat "$T/jobids.out"
sync; echo 3 >/proc/sys/vm/drop_caches
out=$("$AB" statlat "$MNT/s" 200) || fail "stat after the job ids: $out"
echo "$out"

echo "--- at the end of the attack (idle connections still open)"
usage mds "$CLUSTER/mds.pid"
usage "$oss" "$CLUSTER/oss$ossi.pid"
wait
for f in idle-mds idle-oss slowloris slowread pipeline; do cat "$T/$f.out"; done
grep -q " [1-9][0-9]* closed by the server" "$T/slowloris.out" || fail "slowloris never closed"
grep -q "frame timeout" "$CLUSTER/oss$ossi.log" || fail "no frame timeout logged"
grep -q "send timeout" "$CLUSTER/oss$ossi.log" || fail "pipeliner not closed by the send timeout"

echo "--- after"
sleep 1
usage mds "$CLUSTER/mds.pid"
usage "$oss" "$CLUSTER/oss$ossi.pid"
"$REPO/deploy/pfs-cluster" status "$CLUSTER" | grep -q stopped && fail "a daemon died"
sync; echo 3 >/proc/sys/vm/drop_caches
got=$(sha256sum <"$MNT/big" | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "1 MiB read after the attack: sha256 differs"
ok "stat and 1 MiB read complete under idle connections, slowloris, slow reader, pipeliner and random job ids"
