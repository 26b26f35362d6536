#!/bin/bash
# Recovery (issue 8): while a writer (dd, fsync'ed files striped over both
# OSSes) and a metadata loop (mkdir, create, rename, unlink) run, kill -9
# one OSS and revive it 5 s later, SIGSTOP another for 10 s, and kill -9 the
# MDS and revive it.  No application sees an error (in particular no
# EPIPE/ECONNREFUSED/ETIMEDOUT: every tool exits 0 with an empty stderr),
# every acknowledged file is there byte for byte, every acknowledged
# namespace change is there, and no mkdir was applied twice (no EEXIST).
# Prints the longest stall of each loop.
# timeout: 240
. "$(dirname "$0")/lib.sh"
start_cluster --oss 2
admin setstripe -c 2 -S 1M "$MNT" >/dev/null 2>&1 || true
mkdir -p "$MNT/w" "$MNT/m" "$T/src" || fail "mkdir"
for i in $(seq 1 8); do head -c $((3 * 1048576 + i * 4099)) /dev/urandom > "$T/src/s$i"; done

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# Writer: file k gets source k%8; acked when dd (with fsync) exits 0.
writer() {
	local k=0 s t0
	while [ ! -e "$T/stop" ]; do
		k=$((k + 1)); s=$((k % 8 + 1))
		t0=$(now_ms)
		if dd if="$T/src/s$s" of="$MNT/w/f$k" bs=1M conv=fsync status=none 2>>"$T/w.err"; then
			echo "$k $s" >> "$T/w.ack"
		else
			echo "dd f$k exit $?" >> "$T/w.err"
		fi
		echo $(( $(now_ms) - t0 )) >> "$T/w.lat"
	done
}

# Metadata: mkdir dI, create dI/a, rename dI/a -> dI/b, create and unlink tI.
meta() {
	local i=0 t0
	while [ ! -e "$T/stop" ]; do
		i=$((i + 1)); t0=$(now_ms)
		if mkdir "$MNT/m/d$i" 2>>"$T/m.err" && : > "$MNT/m/d$i/a" 2>>"$T/m.err" &&
		   mv "$MNT/m/d$i/a" "$MNT/m/d$i/b" 2>>"$T/m.err" &&
		   : > "$MNT/m/t$i" 2>>"$T/m.err" && rm "$MNT/m/t$i" 2>>"$T/m.err"; then
			echo "$i" >> "$T/m.ack"
		else
			echo "meta $i failed" >> "$T/m.err"
		fi
		echo $(( $(now_ms) - t0 )) >> "$T/m.lat"
	done
}

: > "$T/w.err"; : > "$T/m.err"; : > "$T/w.ack"; : > "$T/m.ack"
writer & WP=$!
meta & MP=$!
C="$REPO/deploy/pfs-cluster"

sleep 3
echo "kill -9 oss0, revive after 5 s"
"$C" kill "$CLUSTER" oss0 KILL || fail "kill oss0"
sleep 5
"$C" revive "$CLUSTER" >/dev/null || fail "revive oss0"
sleep 3
echo "SIGSTOP oss1 for 10 s"
"$C" kill "$CLUSTER" oss1 STOP || fail "stop oss1"
sleep 10
"$C" kill "$CLUSTER" oss1 CONT || fail "cont oss1"
sleep 3
echo "kill -9 the MDS, revive"
"$C" kill "$CLUSTER" mds KILL || fail "kill mds"
sleep 2
"$C" revive "$CLUSTER" >/dev/null || fail "revive mds"
sleep 5
touch "$T/stop"
wait $WP; wait $MP

nw=$(wc -l < "$T/w.ack"); nm=$(wc -l < "$T/m.ack")
maxw=$(sort -n "$T/w.lat" | tail -1); maxm=$(sort -n "$T/m.lat" | tail -1)
echo "writer: $nw files acknowledged, longest stall ${maxw} ms"
echo "metadata: $nm rounds acknowledged, longest stall ${maxm} ms"
if [ -s "$T/w.err" ] || [ -s "$T/m.err" ]; then
	cat "$T/w.err" "$T/m.err" >&2
	grep -qi "broken pipe\|connection refused\|timed out\|connection reset\|no route" \
		"$T/w.err" "$T/m.err" && fail "a network error reached an application"
	grep -qi "file exists" "$T/m.err" && fail "an operation was applied twice (EEXIST)"
	fail "an application saw an error during recovery: $(head -c 400 "$T/w.err" "$T/m.err" | tr '\n' ' ')"
fi
[ "$nw" -ge 3 ] && [ "$nm" -ge 10 ] || fail "too little progress ($nw files, $nm rounds)"
ok "no application error through OSS kill, OSS stop and MDS kill"

sync; echo 3 > /proc/sys/vm/drop_caches
while read -r k s; do
	cmp -s "$T/src/s$s" "$MNT/w/f$k" || fail "acknowledged file f$k differs"
done < "$T/w.ack"
ok "every acknowledged file is there byte for byte ($nw files)"
while read -r i; do
	[ -f "$MNT/m/d$i/b" ] && [ ! -e "$MNT/m/d$i/a" ] && [ ! -e "$MNT/m/t$i" ] ||
		fail "namespace round $i lost"
done < "$T/m.ack"
ok "every acknowledged namespace change is there ($nm rounds)"
