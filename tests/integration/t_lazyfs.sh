#!/bin/bash
# The power-loss layer of the tests (tools/pfs_lazyfs.c) drops exactly what
# was not synced: data written but not fsync'ed is gone after a "crash",
# fsync'ed data is kept byte for byte, a new file fsync'ed without syncing
# its directory is gone, a rename followed by fsync of the directory (both
# directories when it crosses them) is durable and one without is not, and
# LMDB on top keeps a synced commit and loses an MDB_NOSYNC one.  Checked
# on the backing directory after the crash, and once more through a new
# layer on it (which a clean unmount then syncs completely).
# timeout: 120
. "$(dirname "$0")/lib.sh"

LZ=$TOOLS/pfs_lazyfs
PROBE=$TOOLS/lmdb_probe
[ -x "$LZ" ] && [ -x "$PROBE" ] || fail "$LZ or $PROBE missing (make the itools first)"
B=$T/back
M=$T/lz
mkdir -p "$B" "$M"

# The layer runs in the foreground (-f) as a job, so an unmount can wait
# for it to exit: a clean unmount syncs everything after umount returns.
LZ_PID=
lz_mount() {
	"$LZ" "$B" "$M" -f 2>>"$T/lazyfs.log" &
	LZ_PID=$!
	for _ in $(seq 1 200); do
		grep -q " $M fuse" /proc/mounts && return 0
		kill -0 "$LZ_PID" 2>/dev/null || fail "pfs_lazyfs did not start: $(cat "$T/lazyfs.log")"
		sleep 0.05
	done
	fail "pfs_lazyfs did not mount"
}
lz_umount() {
	if grep -q " $M fuse" /proc/mounts; then
		umount "$M" 2>/dev/null || fusermount3 -u "$M" 2>/dev/null || umount -l "$M" 2>/dev/null
	fi
	[ -n "$LZ_PID" ] || return 0
	for _ in $(seq 1 200); do
		kill -0 "$LZ_PID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$LZ_PID" 2>/dev/null && kill -KILL "$LZ_PID" 2>/dev/null
	wait "$LZ_PID" 2>/dev/null
	LZ_PID=
	# A sanitizer report of the layer (SAN=1 builds) fails the test.
	if grep -q "ERROR: AddressSanitizer\|runtime error:\|ERROR: LeakSanitizer" "$T/lazyfs.log" 2>/dev/null; then
		echo "FAIL: sanitizer report from pfs_lazyfs:" >&2
		head -n 40 "$T/lazyfs.log" >&2
		_failed=1
	fi
}
trap '_rc=$?; lz_umount; (exit $_rc); cleanup' EXIT

ctl() { echo "$1" >"$M/.lazyfs_ctl" || fail "ctl $1"; }
stat_of() { sed -n "s/^$1=//p" "$M/.lazyfs_ctl"; }
crash() { ctl crash; lz_umount; }

# --- a durable starting tree, made outside the layer ---
mkdir -p "$B/d1" "$B/d2" "$B/d5"
echo old >"$B/d1/over"
echo keepme >"$B/d1/ren"
echo cross >"$B/d1/mv"
echo stay >"$B/d5/norename"
head -c 3146962 /dev/urandom >"$T/src"   # 3 MiB + 1234: partial last page
head -c 100000 /dev/urandom >"$T/src2"

lz_mount
[ "$(cat "$M/d1/over")" = old ] || fail "the backing tree is not visible"
ok "the layer shows the backing tree"

# Written, not fsync'ed: lost.  Readers see it meanwhile (page cache).
echo new >"$M/d1/over"
echo fresh >"$M/d5/unsynced_new"
[ "$(cat "$M/d1/over")" = new ] || fail "a write is not visible through the layer"
[ "$(stat_of dirty_files)" -ge 2 ] || fail "stats: dirty_files $(stat_of dirty_files)"
[ "$(cat "$B/d1/over")" = old ] || fail "an unsynced write reached the backing directory"

# fsync'ed data of a file with a durable name: kept byte for byte, also
# after a truncate that shortened it and a write past a hole.
: >"$M/d1/big"
check sync "$M/d1"                               # its name is durable now
check dd if="$T/src" of="$M/d1/big" bs=65536 conv=notrunc,fsync status=none
cp "$T/src2" "$M/d1/cut" && check sync "$M/d1" "$M/d1/cut"
check truncate -s 5000 "$M/d1/cut"
printf 'tail' | dd of="$M/d1/cut" bs=1 seek=20000 conv=notrunc status=none
check sync "$M/d1/cut"
head -c 5000 "$T/src2" >"$T/cut.want"
head -c 15000 /dev/zero >>"$T/cut.want"
printf 'tail' >>"$T/cut.want"
cmp -s "$M/d1/cut" "$T/cut.want" || fail "truncate + write through the layer"

# Created and fsync'ed, its directory never synced: gone.
echo orphan >"$M/d5/created" && check sync "$M/d5/created"

# Rename + fsync of the directory: durable; rename without it: not.
mv "$M/d1/ren" "$M/d1/renamed" && check sync "$M/d1"
mv "$M/d5/norename" "$M/d5/renamed_unsynced"
# Across directories: durable once both were synced.
mv "$M/d1/mv" "$M/d2/mv" && check sync "$M/d1" "$M/d2"
[ "$(cat "$M/d2/mv")" = cross ] || fail "cross-directory rename through the layer"
# A new directory and a file in it, synced bottom-up: durable.
mkdir "$M/d3" && echo deep >"$M/d3/f" && check sync "$M/d3/f" "$M/d3" "$M"

# LMDB: the environment's files made durable once, then one synced
# commit and one MDB_NOSYNC commit.
mkdir "$M/db"
check "$PROBE" put "$M/db" k0 v0 sync
check sync "$M/db" "$M"
check "$PROBE" put "$M/db" k1 v1 sync
check "$PROBE" put "$M/db" k2 v2 nosync
[ "$("$PROBE" get "$M/db" k2)" = v2 ] || fail "LMDB: the nosync commit is not visible before the crash"
ok "written data visible through the layer before the crash"

crash
[ "$(cat "$B/d1/over")" = old ] || fail "data written without fsync survived the crash"
[ ! -e "$B/d5/unsynced_new" ] || fail "a file never synced survived the crash"
ok "written-not-fsynced data is lost"
cmp -s "$B/d1/big" "$T/src" || fail "fsync'ed data differs after the crash"
cmp -s "$B/d1/cut" "$T/cut.want" || fail "fsync'ed truncate + write differs after the crash"
ok "fsynced data kept byte for byte"
[ ! -e "$B/d5/created" ] || fail "a created file survived although its directory was never synced"
ok "created + fsynced file without fsyncdir is gone"
[ "$(cat "$B/d1/renamed" 2>/dev/null)" = keepme ] && [ ! -e "$B/d1/ren" ] ||
	fail "rename + fsyncdir not durable"
[ "$(cat "$B/d5/norename" 2>/dev/null)" = stay ] && [ ! -e "$B/d5/renamed_unsynced" ] ||
	fail "a rename without fsyncdir became durable"
[ "$(cat "$B/d2/mv" 2>/dev/null)" = cross ] && [ ! -e "$B/d1/mv" ] ||
	fail "cross-directory rename with both directories synced not durable"
[ "$(cat "$B/d3/f" 2>/dev/null)" = deep ] || fail "new directory synced bottom-up not durable"
ok "rename + fsyncdir durable, rename alone not"
[ "$("$PROBE" get "$B/db" k1)" = v1 ] || fail "LMDB: a synced commit is gone after the crash"
"$PROBE" get "$B/db" k2 >/dev/null
[ $? = 1 ] || fail "LMDB: the MDB_NOSYNC commit survived the crash (or the env is broken)"
ok "LMDB: synced commit kept, nosync commit lost"

# A new layer on the same directory: the durable state; EIO after a crash.
lz_mount
[ "$("$PROBE" get "$M/db" k1)" = v1 ] || fail "LMDB through a new layer"
check "$PROBE" put "$M/db" k3 v3 envsync
check "$PROBE" put "$M/db" k4 v4 nosync
echo gone >"$M/d1/later"
check sync "$M/d1/big"                           # nothing dirty: a no-op
ctl crash
cat "$M/d1/over" >/dev/null 2>&1 && fail "reads still work after the crash"
echo x 2>/dev/null >"$M/d1/x" && fail "writes still work after the crash"
[ "$(stat_of state)" = crashed ] || fail "stats after the crash"
lz_umount
[ "$("$PROBE" get "$B/db" k3)" = v3 ] || fail "LMDB: mdb_env_sync'ed commit lost"
"$PROBE" get "$B/db" k4 >/dev/null
[ $? = 1 ] || fail "LMDB: a second nosync commit survived"
[ ! -e "$B/d1/later" ] || fail "an unsynced file of the second layer survived"
ok "a new layer: EIO after the crash; mdb_env_sync durable, nosync lost"

# A clean unmount syncs everything (like a clean shutdown).
lz_mount
echo kept >"$M/d2/clean" && rm "$M/d1/big" && mkdir -p "$M/d4/e" && echo z >"$M/d4/e/z"
lz_umount
[ "$(cat "$B/d2/clean" 2>/dev/null)" = kept ] && [ ! -e "$B/d1/big" ] &&
	[ "$(cat "$B/d4/e/z" 2>/dev/null)" = z ] || fail "a clean unmount did not sync everything"
ok "a clean unmount syncs everything"
[ $_failed = 0 ] || fail "pfs_lazyfs reported errors"
