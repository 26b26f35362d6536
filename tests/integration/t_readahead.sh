#!/bin/bash
# mount.pfs's stream readahead (issue 11 item 2, client/readahead.h): two
# mounts of one cluster, A writes, B reads (its page cache never held the
# files, so every byte B reads comes through mount.pfs's READ path).
#  0. B's page cache is dropped at open after A overwrote a file it had
#     read, even with the old mtime put back (ctime);
#  1. sequential reads of multi-stripe files (4 x 1 MiB stripes; 3 x 2 MiB)
#     byte for byte, and B's readahead served READs (its unmount log),
#     READs spliced from pipes (readahead.h "Pipes": 1 MiB units, also
#     of the 2 MiB stripes);
#  2. close-to-open: A overwrites the middle of a file B has read (same
#     size) and closes; B opening afterwards reads the new bytes;
#  3. a truncate and rewrite by B itself while B's reader holds the file
#     open in the middle of a sequential read (units prefetched ahead): the
#     rest of the read returns the new bytes, never the prefetched old ones;
#     then a reader racing truncates and rewrites ends with the final bytes;
#  4. random 4 KiB reads (no stream) byte for byte.
# timeout: 300
. "$(dirname "$0")/lib.sh"
start_cluster --mount-opt log_level=info
if [ "${PFS_AUTH:-on}" = off ]; then MAUTH=auth=0; else MAUTH=key=$CLUSTER/keys/client.key; fi
MNT2=$CLUSTER/mnt2
mkdir -p "$MNT2"
mount_b() {
	check "$PFS_BIN/mount.pfs" "$MDS" "$MNT2" \
		-o "$MAUTH,log=file:$CLUSTER/clientb.log,log_level=info,ra_window_mb=8"
}
mount_b
trap '_rc=$?; umount "$MNT2" 2>/dev/null; (exit $_rc); cleanup' EXIT

# hits: READs served from prefetched data since B was mounted (logged at
# its unmount; those answered from pipes in $CLUSTER/spliced); B is
# mounted again afterwards
hits() {
	umount "$MNT2" || fail "umount B"
	for _ in $(seq 50); do grep -q "READs spliced" "$CLUSTER/clientb.log" && break; sleep 0.1; done
	sed -n 's/.*readahead: \([0-9]*\) hits.*/\1/p' "$CLUSTER/clientb.log" | tail -n 1
	sed -n 's/.* \([0-9]*\) READs spliced.*/\1/p' "$CLUSTER/clientb.log" | tail -n 1 >"$CLUSTER/spliced"
	: >"$CLUSTER/clientb.log"
	mount_b
}

# 0. close-to-open when A puts the old mtime back after overwriting (cp -p,
# rsync -t do): size and mtime as B saw them, only the ctime tells the
# change (keep_cache).  B reads the file twice first (the second open keeps
# the page cache: checked).
check dd if=/dev/urandom of="$T/k" bs=1M count=8 status=none
check cp "$T/k" "$MNT/k"
sleep 1.2 # A's RELEASE (asynchronous) reached the MDS: B sees no writer
cmp "$T/k" "$MNT2/k" || fail "first read of k"
sleep 1.2
cmp "$T/k" "$MNT2/k" || fail "second read of k"
if command -v fincore >/dev/null; then
	p=$(fincore -n -o PAGES "$MNT2/k" | tr -d ' ')
	[ "$p" = 2048 ] || fail "B did not keep its page cache of an unchanged file ($p pages)"
fi
mt=$(stat -c %y "$MNT/k")
check dd if=/dev/urandom of="$T/patch" bs=1M count=1 status=none
check dd if="$T/patch" of="$MNT/k" bs=1M seek=4 conv=notrunc status=none
check dd if="$T/patch" of="$T/k" bs=1M seek=4 conv=notrunc status=none
check touch -d "$mt" "$MNT/k"
[ "$(stat -c %y "$MNT/k")" = "$mt" ] || fail "touch -d did not put the mtime back"
sleep 1.5 # B's attribute cache
cmp "$T/k" "$MNT2/k" || fail "B kept its page cache after an overwrite with the same size and mtime"
ok "an overwrite that keeps size and mtime still drops B's cache at open (ctime)"

# 1. sequential, multi-stripe
admin setstripe -c 4 -S 1M "$MNT/s4" >/dev/null || fail "setstripe s4"
admin setstripe -c 3 -S 2M "$MNT/s3" >/dev/null || fail "setstripe s3"
check dd if=/dev/urandom of="$T/x" bs=1M count=40 status=none
check head -c 35651584 "$T/x" >"$T/x34"   # 34 MiB: not a whole stripe set
check cp "$T/x" "$MNT/s4"
check cp "$T/x34" "$MNT/s3"
cmp "$T/x" "$MNT2/s4" || fail "sequential read of a 4-stripe file differs"
dd if="$MNT2/s3" bs=256k status=none | cmp - "$T/x34" || fail "sequential 256 KiB reads of a 3 x 2 MiB file differ"
h=$(hits)
[ -n "$h" ] && [ "$h" -ge 40 ] || fail "B's readahead served ${h:-no} READs of 74 MiB read sequentially"
sp=$(cat "$CLUSTER/spliced")
[ -n "$sp" ] && [ "$sp" -ge 20 ] || fail "B spliced ${sp:-no} READs from pipes (74 MiB read in order)"
ok "sequential reads of multi-stripe files byte for byte ($h READs from prefetched stripes, $sp spliced)"

# 2. close-to-open after another mount's overwrite of the same size
cmp "$T/x" "$MNT2/s4" || fail "read before the overwrite"
check dd if=/dev/urandom of="$T/patch" bs=1M count=3 status=none
check dd if="$T/patch" of="$MNT/s4" bs=1M seek=5 conv=notrunc status=none
check dd if="$T/patch" of="$T/x" bs=1M seek=5 conv=notrunc status=none
[ "$(stat -c %s "$MNT/s4")" = 41943040 ] || fail "overwrite changed the size"
cmp "$T/x" "$MNT2/s4" || fail "B reads old bytes after A's overwrite and close"
ok "B opening after A's close reads A's new bytes"


# 3. truncate and rewrite by B while B's reader is in the middle of a stream
check dd if=/dev/urandom of="$T/y" bs=1M count=40 status=none
exec 3<"$MNT2/s4"
check dd bs=1M count=6 iflag=fullblock of="$T/head" status=none <&3
cmp "$T/head" <(head -c 6291456 "$T/x") || fail "first 6 MiB before the truncate"
sleep 0.5 # the prefetches ahead of the reader complete
check truncate -s 0 "$MNT2/s4"
check dd if="$T/y" of="$MNT2/s4" bs=1M oflag=direct status=none
check dd bs=1M iflag=fullblock of="$T/rest" status=none <&3
exec 3<&-
cmp "$T/rest" <(tail -c +6291457 "$T/y") || fail "B's reader got prefetched bytes from before its own truncate and rewrite"
ok "a truncate and rewrite on the reader's mount drop the prefetched stripes"

# the same race without pauses: readers loop while B truncates and
# rewrites; afterwards every reader sees the final bytes
(
	for _ in $(seq 6); do cat "$MNT2/s4" >/dev/null 2>&1; done
) & RP=$!
for i in 1 2 3; do
	check truncate -s $((i * 3))M "$MNT2/s4"
	check dd if="$T/y" of="$MNT2/s4" bs=1M oflag=direct status=none
done
wait $RP
cmp "$T/y" "$MNT2/s4" || fail "after truncates racing readers: contents differ"
cmp "$T/y" "$MNT/s4" || fail "after truncates racing readers: A sees other bytes"
ok "reads racing truncates on the same mount end with the final bytes"

# 4. random 4 KiB reads of a file B never read (no stream: no prefetch)
check dd if=/dev/urandom of="$T/r" bs=1M count=16 status=none
admin setstripe -c 4 -S 1M "$MNT/r" >/dev/null || fail "setstripe r"
check cp "$T/r" "$MNT/r"
for i in $(seq 60); do
	blk=$(( (i * 2654435761) % 4096 ))
	a=$(dd bs=4k skip=$blk count=1 status=none <"$T/r" | md5sum)
	b=$(dd if="$MNT2/r" bs=4k skip=$blk count=1 status=none | md5sum)
	[ "$a" = "$b" ] || fail "random read of block $blk differs"
done
ok "random 4 KiB reads byte for byte"
