#!/bin/bash
# Size recovery from the objects (issue 8 item 2): a writer on mount 2
# writes 3 MiB and keeps the file open (holdwrite: no close, so no FLUSH
# pushes the size), then its mount.pfs is killed with -9: the MDS never
# gets the size.  Its open flagged the inode "size may be stale"; the
# flag outlives the writer's lease, and mount 1 glimpses the size from the
# objects (OSS_STAT of each) and pushes it: it sees 3 MiB with the
# writer's bytes, and so does a fresh mount.  Fails without the glimpse:
# the MDS has size 0 for good.
# timeout: 120
. "$(dirname "$0")/lib.sh"
HW=$TOOLS/holdwrite
[ -x "$HW" ] || fail "no $HW (built by make test / the itools)"
start_cluster --mds-opt lock_lease_s=3
if [ "${PFS_AUTH:-on}" = off ]; then MAUTH=auth=0; else MAUTH=key=$CLUSTER/keys/client.key; fi
MNT2=$CLUSTER/mnt2
MNT3=$CLUSTER/mnt3
mkdir -p "$MNT2" "$MNT3"
check "$PFS_BIN/mount.pfs" "$MDS" "$MNT2" \
	-o "$MAUTH,writeback=0,pid_file=$T/m2.pid,log=file:$CLUSTER/client2.log"
HWPID=
trap '_rc=$?; [ -n "$HWPID" ] && kill "$HWPID" 2>/dev/null
	umount "$MNT3" 2>/dev/null; umount -l "$MNT2" 2>/dev/null; (exit $_rc); cleanup' EXIT
M2PID=$(cat "$T/m2.pid") || fail "no pid file of mount 2"
kill -0 "$M2PID" || fail "mount 2 not running"

SIZE=3145728
head -c $SIZE /dev/zero | tr '\0' '\253' >"$T/want"

# A normal write and close: the size is the MDS's, no glimpse needed.
head -c 100000 /dev/zero | tr '\0' '\253' >"$MNT2/closed"
sleep 1.5
[ "$(stat -c %s "$MNT/closed")" = 100000 ] || fail "closed file: size $(stat -c %s "$MNT/closed")"
ok "a closed file has its size on the other mount"

# The writer on mount 2 keeps 3 MiB unpushed, then its client dies.
"$HW" "$MNT2/f" $SIZE "$T/go" >"$T/hw.out" 2>&1 & HWPID=$!
for _ in $(seq 100); do grep -q written "$T/hw.out" 2>/dev/null && break; sleep 0.1; done
grep -q written "$T/hw.out" || fail "holdwrite did not write: $(cat "$T/hw.out")"
kill -9 "$M2PID"
for _ in $(seq 50); do kill -0 "$M2PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$M2PID" 2>/dev/null && fail "mount 2 survived kill -9"
kill "$HWPID" 2>/dev/null; wait "$HWPID" 2>/dev/null; HWPID=
umount -l "$MNT2" 2>/dev/null
ok "writer's client killed with 3 MiB written and never closed"

# Mount 1 sees the full size within the lease (3 s) and the attribute
# cache (1 s); the glimpse does not need the lease to end.
got=0
for _ in $(seq 40); do
	got=$(stat -c %s "$MNT/f") || fail "stat"
	[ "$got" = $SIZE ] && break
	sleep 0.5
done
[ "$got" = $SIZE ] || fail "mount 1 sees $got bytes, want $SIZE (the size was never recovered)"
cmp -s "$MNT/f" "$T/want" || fail "mount 1 reads other bytes than the writer's"
ok "mount 1 sees the 3 MiB the dead writer never pushed, byte for byte"

# A fresh mount sees it too (from the MDS once the glimpse's SETSIZE,
# after the writer's lease, cleared the flag; mds/open.h).
sleep 4
stat "$MNT/f" >/dev/null
check "$PFS_BIN/mount.pfs" "$MDS" "$MNT3" -o "$MAUTH,log=file:$CLUSTER/client3.log"
[ "$(stat -c %s "$MNT3/f")" = $SIZE ] || fail "fresh mount sees $(stat -c %s "$MNT3/f")"
cmp -s "$MNT3/f" "$T/want" || fail "fresh mount reads other bytes"
ok "a fresh mount sees the recovered size and bytes"
umount "$MNT3"
