#!/bin/bash
# mount(8) integration: `mount -t pfs HOST:PORT DIR` finds /sbin/mount.pfs,
# `umount DIR` ends the client process cleanly; two clusters run side by
# side in two directories.
# timeout: 180
. "$(dirname "$0")/lib.sh"
start_cluster --oss 2
made_link=0
if [ ! -e /sbin/mount.pfs ]; then
	ln -s "$PFS_BIN/mount.pfs" /sbin/mount.pfs && made_link=1
fi
trap '[ $made_link = 1 ] && rm -f /sbin/mount.pfs; cleanup' EXIT
m2=$T/m2
mkdir -p "$m2"
check mount -t pfs "$MDS" "$m2" -o "key=$CLUSTER/keys/client.key,log=file:$T/m2.log"
mountpoint -q "$m2" || fail "mount -t pfs did not mount"
grep -q " $m2 fuse.pfs " /proc/mounts || fail "not listed as fuse.pfs in /proc/mounts"
echo via-mount > "$m2/x"
[ "$(cat "$MNT/x")" = via-mount ] || fail "second mount does not see the same file system"
check umount "$m2"
for i in $(seq 1 100); do pgrep -f "mount.pfs $MDS $m2" >/dev/null || break; sleep 0.05; done
pgrep -f "mount.pfs $MDS $m2" >/dev/null && fail "client still running after umount"
ok "mount -t pfs / umount"

# A second, independent cluster beside the first.
C2=$T/c2
m=$("$REPO/deploy/pfs-cluster" start "$C2" --oss 1) || fail "second cluster"
echo other > "$m/y"
[ -e "$MNT/y" ] && fail "clusters are not independent"
"$REPO/deploy/pfs-cluster" status "$C2" | grep -q "mount .*$C2" || fail "status of second cluster"
"$REPO/deploy/pfs-cluster" stop "$C2"
mountpoint -q "$m" && fail "second cluster still mounted after stop"
ok "two clusters side by side"
