#!/bin/bash
# issue 8's power-loss check.  The MDS's database directory and every OSS's
# OST directory live on pfs_lazyfs layers (tools/pfs_lazyfs.c), which keep
# whatever was not synced in memory.  Files are written and fsync'ed through
# the pfs mount, a rename is followed by fsync of the directory, more files
# are written without fsync; then every layer "loses power" at once and
# the daemons and the client are killed.  The cluster restarts on what the
# layers had made durable and the test checks, reporting every failed check
# before exiting:
#   - every fsync'ed file is there byte for byte under its name (the one
#     after a rename + fsyncdir: mount.pfs's FSYNCDIR sends MDS_SYNC);
#   - files closed without fsync on a second mount with sync_on_close=1
#     are there byte for byte (close synced the data before the size);
#   - new files get object ids and inode numbers never handed out before
#     the crash, and a hole in a new file reads zeros (no old object bytes).
# The MDS runs db_sync=periodic with an hour between syncs, so only what
# a sync promised is durable (with the default 1 s a crash this soon after
# the workload would hide little); PL_MDS_OPTS replaces that (e.g.
# "--mds-opt db_sync=full"), PL_NOSS sets the OSS count, PL_SYNC_OSTS=1 is
# a diagnosis (below).  The client dies with the power: a mount left
# alive with its servers gone would wait out its recovery window (300 s)
# in the unmount's statfs.
# timeout: 180
. "$(dirname "$0")/lib.sh"

LZ=$TOOLS/pfs_lazyfs
[ -x "$LZ" ] || fail "$LZ missing (make the itools first)"
NOSS=${PL_NOSS:-2}
PL_MDS_OPTS=${PL_MDS_OPTS-"--mds-opt sync_interval_ms=3600000"}
BK=$T/back
LAYERS="mds"
for i in $(seq 0 $((NOSS - 1))); do LAYERS="$LAYERS oss$i"; done
declare -A LZ_PID=()

# Layer NAME mounted at $CLUSTER/NAME (where pfs-cluster puts the MDS's db
# and OSS I's OST directory) over the backing directory $BK/NAME.
lz_mount() {
	mkdir -p "$BK/$1" "$CLUSTER/$1"
	"$LZ" "$BK/$1" "$CLUSTER/$1" -f 2>>"$T/lazyfs-$1.log" &
	LZ_PID[$1]=$!
	for _ in $(seq 1 200); do
		grep -q " $CLUSTER/$1 fuse" /proc/mounts && return 0
		kill -0 "${LZ_PID[$1]}" 2>/dev/null || fail "pfs_lazyfs $1 did not start"
		sleep 0.05
	done
	fail "pfs_lazyfs $1 did not mount"
}
lz_umount() {
	local m=$CLUSTER/$1 pid=${LZ_PID[$1]:-}
	if grep -q " $m fuse" /proc/mounts; then
		umount "$m" 2>/dev/null || fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	fi
	[ -n "$pid" ] || return 0
	for _ in $(seq 1 200); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	LZ_PID[$1]=
}
lz_ctl() { echo "$2" >"$CLUSTER/$1/.lazyfs_ctl"; }
M2=$T/m2
m2_down() {
	[ -f "$T/m2.pid" ] && kill -KILL "$(cat "$T/m2.pid")" 2>/dev/null
	rm -f "$T/m2.pid"
	if grep -q " $M2 fuse" /proc/mounts; then
		umount -l "$M2" 2>/dev/null || fusermount3 -uz "$M2" 2>/dev/null
	fi
}
all_down() {
	m2_down
	"$REPO/deploy/pfs-cluster" stop "$CLUSTER" >/dev/null 2>&1
	for l in $LAYERS; do lz_umount "$l"; done
}
trap '_rc=$?; all_down; (exit $_rc); cleanup' EXIT

bad=0
nok() { echo "CHECK FAILED: $*" >&2; bad=$((bad + 1)); }
# obj_ids PATH...: "OST:OBJECT" of every stripe of the files, one per line.
obj_ids() {
	for p in "$@"; do
		admin --json getstripe "$p" 2>/dev/null | tr -d ' \n' |
			grep -o '"ost":[0-9]*,"object_id":"0x[0-9a-f]*"' |
			sed 's/"ost":\([0-9]*\),"object_id":"\(0x[0-9a-f]*\)"/\1:\2/'
	done
}

# --- a cluster on the layers, its starting state made durable ---
for l in $LAYERS; do lz_mount "$l"; done
# shellcheck disable=SC2086
start_cluster --oss "$NOSS" $PL_MDS_OPTS
for l in $LAYERS; do lz_ctl "$l" sync || fail "sync $l"; done
ok "cluster on $NOSS+1 lazyfs layers"
# A second client with sync_on_close=1 (data=ordered close).
mkdir -p "$M2"
m2_auth="key=$CLUSTER/keys/client.key"
[ "${PFS_AUTH:-on}" = off ] && m2_auth=auth=0
"$PFS_BIN/mount.pfs" "$MDS" "$M2" -o "$m2_auth,log=file:$T/m2.log,pid_file=$T/m2.pid,sync_on_close=1" ||
	fail "mount with sync_on_close=1"

# --- the workload ---
cd "$MNT" || fail "cd $MNT"
check mkdir d
check sync . d
for i in 1 2 3 4 5 6 7 8; do
	head -c $((300000 + i * 4099)) /dev/urandom >"$T/src$i"
	check dd if="$T/src$i" of="d/f$i" bs=65536 conv=fsync status=none
done
check sync d                                      # fsyncdir: the names
# Rewrite in place (no size change) + fsync.
head -c 4096 /dev/urandom >"$T/patch"
check dd if="$T/patch" of=d/f2 bs=4096 seek=2 conv=notrunc,fsync status=none
dd if="$T/patch" of="$T/src2" bs=4096 seek=2 conv=notrunc status=none
# Written, never synced: may be lost, but their ids must not come back.
for i in 1 2 3 4; do head -c 200000 /dev/urandom >"d/u$i"; done
# Closed without fsync on the sync_on_close mount: close syncs the data.
for i in 1 2 3 4; do
	head -c $((150000 + i * 7919)) /dev/urandom >"$T/oc$i"
	check cp "$T/oc$i" "$M2/d/c$i"
done
mv d/f1 d/r1 && check sync d                      # last: rename + fsyncdir
SYNCED_OBJ=$(obj_ids d/r1 d/f2 d/f3 d/f4 d/f5 d/f6 d/f7 d/f8 | sort -u)
PRE_OBJ=$(obj_ids d/r1 d/f2 d/f3 d/f4 d/f5 d/f6 d/f7 d/f8 d/u1 d/u2 d/u3 d/u4 \
	d/c1 d/c2 d/c3 d/c4 | sort -u)
PRE_INO=$(stat -c %i d d/r1 d/f2 d/f3 d/f4 d/f5 d/f6 d/f7 d/f8 d/u1 d/u2 d/u3 d/u4 \
	d/c1 d/c2 d/c3 d/c4 | sort -u)
[ -n "$PRE_OBJ" ] || fail "no object ids from getstripe"
ok "workload: 8 files fsync'ed, a rename + fsyncdir, 4 unsynced files, 4 closed with sync_on_close"
cd / || fail "cd /"

# --- power off: every layer at once, then the daemons and the client ---
# PL_SYNC_OSTS=1 (diagnosis only): sync the OST layers completely first, as
# if the OSSes synced everything, to see what fails because of the MDS.
if [ "${PL_SYNC_OSTS:-0}" = 1 ]; then
	for l in $LAYERS; do [ "$l" = mds ] || lz_ctl "$l" sync || fail "sync $l"; done
fi
for l in $LAYERS; do lz_ctl "$l" crash || fail "crash $l"; done
m2_down
"$REPO/deploy/pfs-cluster" kill "$CLUSTER" client KILL >/dev/null 2>&1
"$REPO/deploy/pfs-cluster" crash "$CLUSTER" >/dev/null 2>&1
all_down
ok "power lost"
# What the disks hold now: the objects of the fsync'ed files (to tell an
# OSS durability hole from an MDS one in the checks below).
have=0 want=0 empty=0
for o in $SYNCED_OBJ; do
	want=$((want + 1))
	f=$(find "$BK"/oss*/ost0/O -name "${o#*:0x}" 2>/dev/null | head -n 1)
	[ -n "$f" ] && have=$((have + 1)) && [ ! -s "$f" ] && empty=$((empty + 1))
done
echo "info: the OST directories hold $have of the $want objects of fsync'ed files ($empty empty)"

# --- restart on what was durable ---
for l in $LAYERS; do lz_mount "$l"; done
# shellcheck disable=SC2086
MNT=$("$REPO/deploy/pfs-cluster" start "$CLUSTER" --oss "$NOSS" $PL_MDS_OPTS) ||
	fail "the cluster does not restart after the power loss: $(tail -n 3 "$CLUSTER/mds.log")"
. "$CLUSTER/cluster.env"
cd "$MNT" || fail "cd $MNT"
ok "cluster restarted"

# Everything fsync'ed (and fsyncdir'ed) is there byte for byte.
for i in 1 2 3 4 5 6 7 8; do
	n=d/f$i
	[ $i = 1 ] && n=d/r1
	if [ ! -e "$n" ]; then
		nok "$n (fsync'ed, directory fsync'ed) is gone"
	elif ! cmp -s "$n" "$T/src$i"; then
		nok "$n differs: size $(stat -c %s "$n"), want $(stat -c %s "$T/src$i")$(
			cmp "$n" "$T/src$i" 2>&1 | sed 's/^/; /')"
	fi
done
[ -e d/f1 ] && nok "d/f1 is back although the rename was fsyncdir'ed"
[ $bad = 0 ] && ok "every fsync'ed file is there byte for byte"
before=$bad
for i in 1 2 3 4; do
	if [ ! -e "d/c$i" ]; then
		nok "d/c$i (closed on the sync_on_close mount) is gone"
	elif ! cmp -s "d/c$i" "$T/oc$i"; then
		nok "d/c$i (closed on the sync_on_close mount) differs: size $(stat -c %s "d/c$i"), want $(
			stat -c %s "$T/oc$i")$(cmp "d/c$i" "$T/oc$i" 2>&1 | sed 's/^/; /')"
	fi
done
[ $bad = "$before" ] && ok "files closed with sync_on_close are there byte for byte"

# No id comes back: new files, each with a hole before its data.
before=$bad
head -c 4096 /dev/urandom >"$T/small"
for i in 1 2 3 4 5 6 7 8; do
	dd if="$T/small" of="d/n$i" bs=4096 seek=256 conv=fsync status=none ||
		nok "writing d/n$i after the restart failed"
done
POST_OBJ=$(obj_ids d/n1 d/n2 d/n3 d/n4 d/n5 d/n6 d/n7 d/n8 | sort -u)
POST_INO=$(stat -c %i d/n1 d/n2 d/n3 d/n4 d/n5 d/n6 d/n7 d/n8 | sort -u)
reused=$(comm -12 <(echo "$PRE_OBJ") <(echo "$POST_OBJ") | tr '\n' ' ')
[ -z "$reused" ] || nok "object ids reused after the power loss: $reused"
reused=$(comm -12 <(echo "$PRE_INO") <(echo "$POST_INO") | tr '\n' ' ')
[ -z "$reused" ] || nok "inode numbers reused after the power loss: $reused"
for i in 1 2 3 4 5 6 7 8; do
	cmp -s -n 1048576 "d/n$i" /dev/zero || nok "the hole of new file d/n$i holds old bytes"
	cmp -s -i 1048576:0 "d/n$i" "$T/small" || nok "new file d/n$i: data differs"
done
[ $bad = "$before" ] && ok "no object id or inode reused, holes read zeros"
cd / || true

[ $bad = 0 ] || fail "$bad power-loss checks failed"
ok "power loss: nothing fsync'ed is gone, no id reused"
