#!/bin/bash
# Locks and O_APPEND across two mounts of one cluster (MDS lock service,
# lock_lease_s=3): an fcntl lock held on one mount is seen by F_GETLK (with
# its pid) and refused by F_SETLK on the other; F_SETLKW waits until the
# holder unlocks; flock is exclusive across mounts; a lock goes when its
# process is killed (kill -9 closes its files: FLUSH) and when its whole
# mount dies (lease expiry); a blocked F_SETLKW interrupted by a signal
# returns EINTR; 2 x 2,000 O_APPEND lines from two mounts all arrive intact.
# timeout: 300
. "$(dirname "$0")/lib.sh"
LP=$TOOLS/lockprobe
[ -x "$LP" ] || fail "no $LP (built by make test / the itools)"
start_cluster --mds-opt lock_lease_s=3
# the mounts' key, as pfs-cluster gives it to its own mount
if [ "${PFS_AUTH:-on}" = off ]; then MAUTH=auth=0; else MAUTH=key=$CLUSTER/keys/client.key; fi
MNT2=$CLUSTER/mnt2
mkdir -p "$MNT2"
check "$PFS_BIN/mount.pfs" "$MDS" "$MNT2" -o "$MAUTH,log=file:$CLUSTER/client2.log"
A=$MNT/lk
B=$MNT2/lk
touch "$A"

# wait_for FILE PATTERN SECS: until FILE has a line matching PATTERN
wait_for() {
	local i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt $(($3 * 10)) ] && return 1
		sleep 0.1
	done
}

# 1. conflict visible across mounts
"$LP" setlk "$A" w 0 100 30 >"$T/a1.out" & apid=$!
wait_for "$T/a1.out" locked 10 || fail "setlk on mount 1"
out=$("$LP" getlk "$B" w 50 10) || fail "getlk on mount 2"
[ "$out" = "locked w $apid 0 100" ] || fail "F_GETLK on mount 2 says '$out', want 'locked w $apid 0 100'"
"$LP" setlk "$B" r 50 1 0 >/dev/null; rc=$?
[ $rc = 2 ] || fail "F_SETLK of a locked range on mount 2: exit $rc, want busy"
check "$LP" setlk "$B" w 100 10 0 >/dev/null
out=$("$LP" getlk "$B" w 90 0)
[ "$out" = "locked w $apid 0 100" ] || fail "F_GETLK to EOF: '$out'"
ok "fcntl lock of mount 1 seen and refused on mount 2"

# 2. a killed holder's locks go at once (its files are closed: FLUSH)
kill -9 $apid; wait $apid 2>/dev/null
out=$("$LP" getlk "$B" w 0 0)
[ "$out" = unlocked ] || fail "lock of a killed process still there: '$out'"
ok "kill -9 of the holder releases its lock"

# 3. F_SETLKW on mount 2 waits until mount 1 unlocks
"$LP" setlk "$A" w 0 0 3 >"$T/a2.out" & apid=$!
wait_for "$T/a2.out" locked 10 || fail "setlk on mount 1"
"$LP" setlkw "$B" w 10 10 0 >"$T/b1.out" & bpid=$!
sleep 1
grep -q locked "$T/b1.out" && fail "F_SETLKW on mount 2 did not wait"
wait $apid || fail "holder on mount 1"
wait_for "$T/b1.out" locked 20 || fail "F_SETLKW on mount 2 not granted after the unlock"
wait $bpid || fail "setlkw on mount 2"
ok "F_SETLKW waits for the other mount's unlock"

# 4. flock exclusive across mounts, then handed over
"$LP" flock "$A" ex 3 >"$T/a3.out" & apid=$!
wait_for "$T/a3.out" locked 10 || fail "flock on mount 1"
"$LP" flock "$B" exnb 0 >/dev/null; rc=$?
[ $rc = 2 ] || fail "flock LOCK_NB on mount 2: exit $rc, want busy"
"$LP" flock "$B" shnb 0 >/dev/null; rc=$?
[ $rc = 2 ] || fail "shared flock on mount 2 beside an exclusive one: exit $rc"
# fcntl locks are independent of flock
check "$LP" setlk "$B" w 0 0 0 >/dev/null
"$LP" flock "$B" ex 0 >"$T/b2.out" & bpid=$!
wait $apid || fail "flock holder"
wait_for "$T/b2.out" locked 20 || fail "blocking flock on mount 2 not granted"
wait $bpid
ok "flock exclusive across mounts"

# 5. a blocked F_SETLKW interrupted by a signal returns EINTR
"$LP" setlk "$A" w 0 0 60 >"$T/a4.out" & apid=$!
wait_for "$T/a4.out" locked 10 || fail "setlk on mount 1"
out=$("$LP" intr "$B" w 0 0 2) || fail "interrupted F_SETLKW: '$out', want eintr"
kill -9 $apid; wait $apid 2>/dev/null
check "$LP" setlk "$B" w 0 0 0 >/dev/null
ok "F_SETLKW interrupted by SIGALRM: EINTR"

# 6. a mount that dies loses its locks when its lease expires
MNT3=$CLUSTER/mnt3
mkdir -p "$MNT3"
"$PFS_BIN/mount.pfs" "$MDS" "$MNT3" -f -o "$MAUTH,log=file:$CLUSTER/client3.log" & mpid=$!
i=0
until mountpoint -q "$MNT3"; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "third mount did not come up"; sleep 0.1
done
"$LP" setlk "$MNT3/lk" w 0 0 120 >"$T/c.out" & cpid=$!
wait_for "$T/c.out" locked 10 || fail "setlk on mount 3"
kill -9 $mpid; wait $mpid 2>/dev/null
kill -9 $cpid; wait $cpid 2>/dev/null
umount -l "$MNT3" 2>/dev/null
"$LP" setlk "$B" w 0 0 0 >/dev/null; rc=$?
[ $rc = 2 ] || fail "lock of a dead mount gone before its lease expired (exit $rc)"
i=0
until "$LP" setlk "$B" w 0 0 0 >/dev/null; do
	i=$((i + 1)); [ $i -gt 30 ] && fail "lock of a dead mount still there after 15 s (lease 3 s)"
	sleep 0.5
done
grep -q "lease expired" "$CLUSTER/mds.log" || fail "the MDS did not log the lease expiry"
ok "lease expiry releases a dead mount's locks"

# 7. O_APPEND from two mounts: every line intact
rm -f "$A"
"$LP" append "$A" A 2000 & apid=$!
"$LP" append "$B" B 2000 & bpid=$!
wait $apid || fail "appender on mount 1"
wait $bpid || fail "appender on mount 2"
sleep 2
for m in "$MNT" "$MNT2"; do
	f=$m/lk
	n=$(wc -l <"$f")
	[ "$n" = 4000 ] || fail "$f: $n lines, want 4000"
	for tag in A B; do
		c=$(grep -c "^$tag [0-9]\{6\} the quick brown fox jumps over the lazy dog\$" "$f")
		[ "$c" = 2000 ] || fail "$f: $c intact lines of $tag, want 2000"
		u=$(grep "^$tag " "$f" | sort -u | wc -l)
		[ "$u" = 2000 ] || fail "$f: $u distinct lines of $tag"
	done
done
ok "O_APPEND from two mounts: 4,000 intact lines"
umount "$MNT2"

