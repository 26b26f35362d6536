#!/bin/bash
# mount.pfs -o writeback=1 (issue 11): the kernel's write-back cache.
# - the mount's bdi gets readahead_kb and dirty_mb (sysfs);
# - a write-only open writes part of a page: the kernel reads the rest of
#   the page through that open, so its capabilities must allow READ (the
#   open asks the MDS for O_RDWR);
# - a writer who may not read the file (0602, uid 65534) falls back to
#   direct I/O and still writes;
# - a writer who does not own the file: the kernel's own mtime write-back
#   at close must not fail the close;
# - close-to-open: a second mount reads what the first wrote once closed;
# - O_APPEND stays direct I/O: appends from two descriptors all land.
# timeout: 180
. "$(dirname "$0")/lib.sh"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
start_cluster --mount-opt writeback=1 --mount-opt readahead_kb=2048 --mount-opt dirty_mb=64
if [ "${PFS_AUTH:-on}" = off ]; then MAUTH=auth=0; else MAUTH=key=$CLUSTER/keys/client.key; fi
MNT2=$CLUSTER/mnt2
mkdir -p "$MNT2"
check "$PFS_BIN/mount.pfs" "$MDS" "$MNT2" -o "$MAUTH,log=file:$CLUSTER/client2.log"
trap '_rc=$?; umount "$MNT2" 2>/dev/null; (exit $_rc); cleanup' EXIT

# 0. the bdi settings
dev=$(stat -c %d "$MNT")
bdi=/sys/class/bdi/$((dev >> 8)):$((dev & 255))
# mount.pfs writes them from a thread once INIT is through, one after the
# other.  The kernel keeps max_bytes as a share of the dirty threshold and
# reads it back rounded (67,1xx,xxx for 64 MiB), so "about": a FUSE bdi's
# own 1 % share is tens of MiB, below the range.
max_ok() { v=$(cat "$bdi/max_bytes"); [ "$v" -gt $((60 << 20)) ] && [ "$v" -le $((65 << 20)) ]; }
for _ in $(seq 50); do [ "$(cat "$bdi/read_ahead_kb")" = 2048 ] && max_ok && break; sleep 0.1; done
[ "$(cat "$bdi/read_ahead_kb")" = 2048 ] || fail "read_ahead_kb $(cat "$bdi/read_ahead_kb"), want 2048"
max_ok || fail "max_bytes $(cat "$bdi/max_bytes"), want about 64 MiB"
ok "bdi: readahead 2048 KiB, dirty limit 64 MiB"

# 1. partial-page write through a write-only open (kernel reads the page)
check dd if=/dev/urandom of="$T/base" bs=20000 count=1 status=none
check cp "$T/base" "$MNT2/part" # not in the cache of mount 1
cp "$T/base" "$T/want"
printf 'xyz' | dd of="$T/want" bs=1 seek=5 conv=notrunc status=none
printf 'xyz' | dd of="$MNT/part" bs=1 seek=5 conv=notrunc status=none ||
	fail "partial-page write through O_WRONLY"
cmp "$T/want" "$MNT2/part" || fail "partial-page write: contents on the other mount"
ok "partial-page write through a write-only open"

# 2. a writer who may not read: 0602, uid 65534 writes part of a page
check cp "$T/base" "$MNT2/wonly"
check chmod 0602 "$MNT2/wonly"
# (from inside the mount: uid 65534 may not walk the test's 0700 directory)
cd "$MNT" || fail "cd $MNT"
as_nobody sh -c "printf 'abc' | dd of=wonly bs=1 seek=7 conv=notrunc status=none" ||
	fail "uid 65534: write-only write to a 0602 file"
cp "$T/base" "$T/want2"
printf 'abc' | dd of="$T/want2" bs=1 seek=7 conv=notrunc status=none
cmp "$T/want2" "$MNT2/wonly" || fail "write-only writer: contents"
ok "a writer who may not read writes through"

# 3. a writer who does not own the file (0666): close succeeds
check touch "$MNT/shared"
check chmod 0666 "$MNT/shared"
as_nobody sh -c "head -c 100000 /dev/zero > shared" || fail "uid 65534: write+close of a 0666 file"
[ "$(stat -c %s "$MNT2/shared")" = 100000 ] || fail "non-owner write: size $(stat -c %s "$MNT2/shared")"
ok "a non-owner's cached write and close"
cd / || fail "cd /"

# 4. close-to-open across mounts, several MiB
check dd if=/dev/urandom of="$T/big" bs=1M count=6 status=none
check cp "$T/big" "$MNT/big"
cmp "$T/big" "$MNT2/big" || fail "close-to-open: the other mount reads other bytes"
ok "close-to-open: the second mount reads the writer's data after close"

# 5. O_APPEND (direct I/O) from two descriptors on the two mounts
: > "$MNT/log"
for i in $(seq 20); do
	printf 'a%02d\n' "$i" >> "$MNT/log"
	printf 'b%02d\n' "$i" >> "$MNT2/log"
done
sleep 1.5 # the write-through mount's attribute cache
n=$(wc -l < "$MNT2/log")
[ "$n" = 40 ] || fail "appends from two mounts: $n lines, want 40"
ok "appends from two mounts all land"
