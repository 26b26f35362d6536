#!/bin/bash
# Crash: write and fsync files, kill -9 the MDS and every OSS, restart
# them; everything acknowledged is there byte for byte.  Unlink files and
# crash again before the objects are gone: after restart the destroy log
# finishes the job and no object is leaked.
# timeout: 300
. "$(dirname "$0")/lib.sh"
start_cluster
mkdir -p "$MNT/keep" "$MNT/drop"
for i in $(seq 1 20); do
	head -c $((i * 100000 + 7)) /dev/urandom > "$T/f$i"
	check dd if="$T/f$i" of="$MNT/keep/f$i" bs=64k conv=fsync status=none
	check dd if="$T/f$i" of="$MNT/drop/f$i" bs=64k conv=fsync status=none
done
check mkdir "$MNT/keep/dir"; check ln -s f1 "$MNT/keep/link"; check ln "$MNT/keep/f2" "$MNT/keep/hard"
sync
"$REPO/deploy/pfs-cluster" crash "$CLUSTER"
"$REPO/deploy/pfs-cluster" revive "$CLUSTER" || fail "revive"
sync; echo 3 > /proc/sys/vm/drop_caches
for i in $(seq 1 20); do
	cmp "$T/f$i" "$MNT/keep/f$i" || fail "keep/f$i differs after crash"
done
[ -d "$MNT/keep/dir" ] && [ "$(readlink "$MNT/keep/link")" = f1 ] || fail "namespace after crash"
[ "$(stat -c %h "$MNT/keep/f2")" = 2 ] || fail "hard link count after crash"
ok "acknowledged data and namespace survive kill -9 of MDS and all OSSes"

objects_on_disk() { find "$CLUSTER"/oss*/ost0/O -type f | wc -l; }
before=$(objects_on_disk)
rm -rf "$MNT/drop"
"$REPO/deploy/pfs-cluster" crash "$CLUSTER"    # destroys may be half done
"$REPO/deploy/pfs-cluster" revive "$CLUSTER" || fail "revive 2"
# keep/ and drop/ hold the same sizes, so they use the same number of
# objects: after the unlinks exactly half the objects must remain.
expect=$((before / 2))
[ $((expect * 2)) = "$before" ] || fail "odd object count $before before unlink"
for s in $(seq 1 100); do
	[ "$(objects_on_disk)" -le "$expect" ] && break
	sleep 0.2
done
after=$(objects_on_disk)
echo "objects: before unlink $before, expected after $expect, after $after"
[ "$after" = "$expect" ] || fail "leaked objects: $after on disk, $expect referenced"
for i in $(seq 1 20); do cmp "$T/f$i" "$MNT/keep/f$i" || fail "keep/f$i after 2nd crash"; done
ok "no leaked objects after unlink + crash"
