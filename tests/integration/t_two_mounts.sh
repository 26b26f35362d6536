#!/bin/bash
# Size and truncate across two mounts of one cluster (issue 8): a writer on
# mount A keeps 2 MiB unpushed (file open, no close), mount B truncates the
# file to 0, then A closes: both mounts see 0 bytes (the MDS refuses the
# stale size of A's truncate epoch), not 2 MiB of zeros.  A's writes after
# the truncate count; a truncate on the writer's own mount while it holds
# the file open, and a plain write-then-close, keep the right size.
# st_blocks follows the objects' space (du of sparse files is small).
# timeout: 240
. "$(dirname "$0")/lib.sh"
HW=$TOOLS/holdwrite
[ -x "$HW" ] || fail "no $HW (built by make test / the itools)"
start_cluster
if [ "${PFS_AUTH:-on}" = off ]; then MAUTH=auth=0; else MAUTH=key=$CLUSTER/keys/client.key; fi
MNT2=$CLUSTER/mnt2
mkdir -p "$MNT2"
check "$PFS_BIN/mount.pfs" "$MDS" "$MNT2" -o "$MAUTH,log=file:$CLUSTER/client2.log"
trap '_rc=$?; umount "$MNT2" 2>/dev/null; (exit $_rc); cleanup' EXIT

# size as each mount sees it after the attribute cache (1 s) expired
sizes() { sleep 1.5; echo "$(stat -c %s "$MNT/$1") $(stat -c %s "$MNT2/$1")"; }

# hold NAME BYTES: start holdwrite on mount A, wait until it has written
hold() {
	rm -f "$T/go"
	"$HW" "$MNT/$1" "$2" "$T/go" > "$T/hw.out" & HWPID=$!
	for _ in $(seq 100); do grep -q written "$T/hw.out" 2>/dev/null && return; sleep 0.1; done
	fail "holdwrite did not write"
}
release() { touch "$T/go"; wait $HWPID || fail "holdwrite failed"; }

# 1. the race
hold race 2097152
check truncate -s 0 "$MNT2/race"
release
s=$(sizes race)
[ "$s" = "0 0" ] || fail "after B's truncate and A's close: sizes $s, want 0 0"
ok "stale size of a writer is not pushed over another mount's truncate"

# 2. A writes again after the truncate (a new open sees the new epoch)
check dd if=/dev/urandom of="$T/one" bs=1M count=1 status=none
check dd if="$T/one" of="$MNT/race" bs=1M conv=notrunc status=none
s=$(sizes race)
[ "$s" = "1048576 1048576" ] || fail "write after the truncate: sizes $s"
cmp "$T/one" "$MNT2/race" || fail "write after the truncate: contents"
ok "writes after the truncate grow the file"

# 3. without a truncate the held writer's size arrives at close
hold plain 2097152
release
s=$(sizes plain)
[ "$s" = "2097152 2097152" ] || fail "plain held write: sizes $s"
ok "held write, then close: 2 MiB on both mounts"

# 4. a truncate up on B while A holds 2 MiB: B's size wins, A's bytes are
# past nothing (B's truncate cut them first, then extended with zeros)
hold up 2097152
check truncate -s 3145728 "$MNT2/up"
release
s=$(sizes up)
[ "$s" = "3145728 3145728" ] || fail "truncate up during a held write: sizes $s"
ok "truncate up during a held write keeps the truncate's size"

# 5. st_blocks from the space the objects use (the sum of OSS_STAT that a
# close sends with the size), seen from the other mount: a 1 GiB
# `truncate -s` file has none, 1 MiB written about 2048 (the OSTs' file
# system may add a little), du of a tree of sparse files is small.
check truncate -s 1G "$MNT/sparse1g"
b=$(stat -c %b "$MNT2/sparse1g")
[ "$b" = 0 ] || fail "truncate -s 1G: $b blocks, not 0"
check dd if=/dev/urandom of="$MNT/dense" bs=1M count=1 status=none
b=$(stat -c %b "$MNT2/dense")
[ "$b" -ge 2048 ] && [ "$b" -le 8192 ] || fail "1 MiB written: $b blocks"
mkdir -p "$MNT/sp" || fail "mkdir sp"
for i in 1 2 3 4 5; do
	check truncate -s 10G "$MNT/sp/f$i"
	check dd if=/dev/urandom of="$MNT/sp/f$i" bs=4k count=1 seek=1000 conv=notrunc status=none
done
k=$(du -sk "$MNT2/sp" | cut -f1)
[ "$k" -lt 1024 ] || fail "du of five sparse 10 GiB files: $k KiB"
b=$(stat -c %b "$MNT2/sp/f1")
[ "$b" -ge 8 ] || fail "a sparse file with 4 KiB written: $b blocks"
ok "st_blocks: 0 for truncate -s 1G, ~2048 for 1 MiB, du of sparse files ${k} KiB"

umount "$MNT2"
