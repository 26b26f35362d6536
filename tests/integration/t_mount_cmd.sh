#!/bin/bash
# mount(8) integration: `mount -t pfs HOST:PORT DIR` finds /sbin/mount.pfs,
# `umount DIR` ends the client process cleanly; two clusters run side by
# side in two directories, and stopping one leaves the other running: every
# process is signalled by its recorded pid (mount.pfs -o pid_file), so a
# cluster in $T/c+ (a name whose old `pkill -f "mount.pfs .* $T/c+/mnt"`
# pattern also matched $T/c/mnt) does not take $T/c's client with it.
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
C2=$T/c+
m=$("$REPO/deploy/pfs-cluster" start "$C2" --oss 1) || fail "second cluster"
echo other > "$m/y"
[ -e "$MNT/y" ] && fail "clusters are not independent"
p1=$(cat "$CLUSTER/client.pid") && p2=$(cat "$C2/client.pid") || fail "no mount.pfs pid files"
for p in "$p1" "$p2"; do
	tr '\0' ' ' <"/proc/$p/cmdline" | grep -q "mount.pfs " || fail "pid $p is not a mount.pfs"
done
"$REPO/deploy/pfs-cluster" status "$C2" | grep -q "mount .*$C2/mnt  pid $p2\$" ||
	fail "status of second cluster: $("$REPO/deploy/pfs-cluster" status "$C2")"
"$REPO/deploy/pfs-cluster" stop "$C2" 2>"$T/stop.err" || fail "stop: $(cat "$T/stop.err")"
[ -s "$T/stop.err" ] && fail "stop complained: $(cat "$T/stop.err")"
mountpoint -q "$m" && fail "second cluster still mounted after stop"
[ -e "$C2/client.pid" ] && fail "pid file of the second cluster's client left behind"
for i in $(seq 1 40); do kill -0 "$p2" 2>/dev/null || break; sleep 0.05; done
kill -0 "$p2" 2>/dev/null && fail "second cluster's mount.pfs $p2 still running"
# the first cluster: its client, its pid file and its file system untouched
kill -0 "$p1" 2>/dev/null || fail "stopping $C2 killed $CLUSTER's mount.pfs $p1"
[ "$(cat "$CLUSTER/client.pid")" = "$p1" ] || fail "first cluster's pid file changed"
mountpoint -q "$MNT" || fail "first cluster unmounted"
echo still >"$MNT/z" && [ "$(cat "$MNT/z")" = still ] || fail "first cluster's mount unusable"
"$REPO/deploy/pfs-cluster" status "$CLUSTER" | grep -q "stopped" &&
	fail "first cluster: $("$REPO/deploy/pfs-cluster" status "$CLUSTER")"
# a mount without a pid file (not made by pfs-cluster) is said, not hunted
mkdir -p "$C2/mnt"
check "$PFS_BIN/mount.pfs" "$MDS" "$C2/mnt" -o "key=$CLUSTER/keys/client.key,log=file:$T/m3.log"
"$REPO/deploy/pfs-cluster" stop "$C2" 2>"$T/stop.err"
grep -q "$C2/mnt: no pid file" "$T/stop.err" || fail "missing pid file not said: $(cat "$T/stop.err")"
mountpoint -q "$C2/mnt" && fail "$C2/mnt still mounted"
kill -0 "$p1" 2>/dev/null || fail "second stop killed $CLUSTER's mount.pfs"
ok "two clusters side by side; stop of one leaves the other's client (pid $p1) running"
