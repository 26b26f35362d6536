#!/bin/bash
# Open-unlinked files (issue 8 item 1): a descriptor whose file another
# mount unlinks or renames over keeps reading the old bytes, writing and
# fstat-ing (nlink 0); after the last close no object of it remains on the
# OSTs; a file closed before its unlink loses its objects as before.
# timeout: 180
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
start_cluster
if [ "${PFS_AUTH:-on}" = off ]; then MAUTH=auth=0; else MAUTH=key=$CLUSTER/keys/client.key; fi
MNT2=$CLUSTER/mnt2
mkdir -p "$MNT2"
check "$PFS_BIN/mount.pfs" "$MDS" "$MNT2" -o "$MAUTH,log=file:$CLUSTER/client2.log"
trap 'r=$?; umount -l "$MNT2" 2>/dev/null; (exit $r); cleanup' EXIT

objects() { find "$CLUSTER" -path '*/O/*' -type f | wc -l; }
# wait until the OSTs hold $1 objects (the destroyer runs after the sync)
wait_objects() {
	local i n
	for i in $(seq 1 100); do
		n=$(objects)
		[ "$n" = "$1" ] && return 0
		sleep 0.1
	done
	fail "$n objects on the OSTs, want $1"
}

base=$(objects)
head -c 3000000 /dev/urandom > "$T/ref"
for how in unlink rename; do
	cp "$T/ref" "$MNT/f"
	[ $how = rename ] && echo other > "$MNT/g"
	sync
	python3 - "$MNT/f" "$MNT2" "$how" "$T/ref" <<'PY' || fail "$how: descriptor check"
import os, sys
path, other, how, ref = sys.argv[1:]
want = open(ref, 'rb').read()
fd = os.open(path, os.O_RDWR)
if how == 'unlink':
    os.unlink(os.path.join(other, 'f'))
else:
    os.rename(os.path.join(other, 'g'), os.path.join(other, 'f'))
st = os.fstat(fd)
assert st.st_nlink == 0, "nlink %d" % st.st_nlink
assert st.st_size == len(want), "size %d" % st.st_size
got = os.pread(fd, len(want), 0)
assert got == want, "old bytes differ (%d read)" % len(got)
os.pwrite(fd, b'written after the unlink', len(want))
os.fsync(fd)
assert os.fstat(fd).st_size == len(want) + 24
assert os.pread(fd, 24, len(want)) == b'written after the unlink'
fd2 = os.open("/proc/self/fd/%d" % fd, os.O_RDONLY)  # a second handle, same mount
os.close(fd)
assert os.pread(fd2, 10, 0) == want[:10], "second handle after the first closed"
os.close(fd2)
PY
	ok "$how by another mount: read, write, fsync and fstat through the open descriptor"
	if [ $how = rename ]; then
		[ "$(cat "$MNT2/f")" = other ] || fail "rename: new file content"
		rm -f "$MNT2/f"
	fi
	wait_objects "$base"
	ok "$how: no object left after the last close"
done

# Not open: unlinked at once, objects go.
cp "$T/ref" "$MNT/h"
sync
[ "$(objects)" -gt "$base" ] || fail "no objects for h"
rm "$MNT2/h"
wait_objects "$base"
ok "a closed file's objects go at its unlink"
umount "$MNT2" || { sleep 1; umount "$MNT2"; } || fail "umount of the second mount"
