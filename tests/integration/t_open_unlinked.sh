#!/bin/bash
# Open-unlinked files (issue 8 item 1): a descriptor whose file another
# mount unlinks or renames over keeps reading the old bytes, writing and
# fstat-ing (nlink 0); after the last close no object of it remains on the
# OSTs; a file closed before its unlink loses its objects as before.
# lfsck: `pfsadmin lfsck --dry-run` counts objects planted straight into OST
# directories and destroys nothing, `pfsadmin lfsck` destroys them and
# nothing else (a live file and an open-unlinked one keep their objects and
# bytes).  A stale client's WRITE/READ of a destroyed object (tools/sec_probe
# with a valid capability) is refused with ESTALE and creates nothing.
# timeout: 240
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
# The other mount's change reaches this one as a lease revocation, which
# the MDS sends before its reply to the changer but does not wait for
# (mds/README.md "Metadata leases"): the kernel may answer from its cache
# until it arrives, milliseconds on a loaded machine.
import time
deadline = time.monotonic() + 2
st = os.fstat(fd)
while st.st_nlink != 0 and time.monotonic() < deadline:
    time.sleep(0.01)
    st = os.fstat(fd)
assert st.st_nlink == 0, "nlink %d 2 s after the other mount's %s" % (st.st_nlink, how)
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

# --- lfsck ------------------------------------------------------------------------
command -v jq >/dev/null || { echo "skip: lfsck and stale writes (no jq)"; exit 0; }
# the directory of OST $1 (its ost.uuid is the one the OST list gives)
ost_dir() {
	local u d
	u=$(admin --json ost list | jq -r ".osts[] | select(.index == $1) | .uuid")
	for d in "$CLUSTER"/oss*/ost*; do
		[ "$(cat "$d/ost.uuid" 2>/dev/null)" = "$u" ] && { echo "$d"; return 0; }
	done
	return 1
}
# the file of object $2 on OST $1 (oss/store.h: O/<id % 256>/<hex id>)
obj_file() { echo "$(ost_dir "$1")/O/$(printf %02x $(($2 & 255)))/$(printf %x "$2")"; }
# lfsck_counts ARGS...: "orphaned destroyed" of pfsadmin --json lfsck ARGS
lfsck_counts() { admin --json lfsck "$@" | jq -r '"\(.orphaned) \(.destroyed)"'; }

cp "$T/ref" "$MNT/live"
sync
c1=$(objects)
cp "$T/ref" "$MNT/held"
sync
exec 7<"$MNT/held"
rm "$MNT2/held"
c2=$(objects)
[ "$c2" -gt "$c1" ] || fail "held has no objects ($c1 -> $c2)"
# two orphans, on OSTs 0 and 1, with ids no MDS has handed out
P0=$(obj_file 0 $((0x7ffff0a1))) && P1=$(obj_file 1 $((0x7ffff0a2))) ||
	fail "no OST directory for OST 0 or 1"
echo planted > "$P0" && echo planted > "$P1" || fail "planting orphans"
[ "$(objects)" = $((c2 + 2)) ] || fail "planted objects not counted"
out=$(lfsck_counts --dry-run) || fail "pfsadmin lfsck --dry-run failed"
[ "$out" = "2 0" ] || fail "lfsck --dry-run: orphaned/destroyed '$out', want '2 0'"
admin lfsck --dry-run | grep -q "dry run: 2 orphan" || fail "lfsck --dry-run table"
[ -f "$P0" ] && [ -f "$P1" ] || fail "lfsck --dry-run removed something"
ok "lfsck --dry-run: the two planted objects counted, nothing removed"
out=$(lfsck_counts) || fail "pfsadmin lfsck failed"
[ "$out" = "2 2" ] || fail "lfsck: orphaned/destroyed '$out', want '2 2'"
wait_objects "$c2"
[ ! -e "$P0" ] && [ ! -e "$P1" ] || fail "planted objects still there"
cmp -s "$T/ref" "$MNT/live" || fail "lfsck: the live file changed"
cmp -s "$T/ref" - <&7 || fail "lfsck: the open-unlinked file changed"
out=$(lfsck_counts --dry-run) || fail "second pfsadmin lfsck --dry-run failed"
[ "$out" = "0 0" ] || fail "lfsck after the cleanup: '$out', want '0 0'"
ok "lfsck: planted objects destroyed; live and open-unlinked files intact"
exec 7<&-
wait_objects "$c1"
ok "lfsck: the open-unlinked file's objects go at its last close"

# --- a stale write to a destroyed object ------------------------------------------
P=$TOOLS/sec_probe
if [ "${PFS_AUTH:-on}" = off ] || [ ! -x "$P" ]; then
	echo "skip: stale write (needs keys and $P)"
else
	cp "$T/ref" "$MNT/s"
	sync
	read -r OST OBJ < <(admin --json getstripe "$MNT/s" |
		jq -r '.stripes[0] | "\(.ost) \(.object)"')
	D=127.0.0.1:$(admin --json ost list | jq -r ".osts[] | select(.index == $OST) | .data_port")
	F=$(obj_file "$OST" "$OBJ")
	[ -f "$F" ] || fail "object $OBJ of s not at $F"
	probe() {
		"$P" --key "$CLUSTER/keys/client.key" --mint "$CLUSTER/keys/mds.key:7:600" "$D" "$@" 2>&1
	}
	out=$(probe read "$OST" "$OBJ" 0 4096)
	case $out in ok*) ;; *) fail "a read with a minted capability: '$out'" ;; esac
	rm "$MNT/s"
	for i in $(seq 1 100); do [ -e "$F" ] || break; sleep 0.1; done
	[ ! -e "$F" ] || fail "object $OBJ not destroyed"
	out=$(probe write "$OST" "$OBJ" 0 4096)
	case $out in "status ESTALE"*) ;; *) fail "write to destroyed object $OBJ: '$out'" ;; esac
	[ ! -e "$F" ] || fail "the write re-created destroyed object $OBJ"
	out=$(probe read "$OST" "$OBJ" 0 4096)
	case $out in "status ESTALE"*) ;; *) fail "read of destroyed object $OBJ: '$out'" ;; esac
	out=$(probe truncate "$OST" "$OBJ" 8192)
	case $out in "status ESTALE"*) ;; *) fail "truncate of destroyed object $OBJ: '$out'" ;; esac
	[ ! -e "$F" ] || fail "destroyed object $OBJ came back"
	ok "a stale WRITE/READ/TRUNCATE of a destroyed object: ESTALE, nothing created"
fi
rm -f "$MNT/live"
umount "$MNT2" || { sleep 1; umount "$MNT2"; } || fail "umount of the second mount"
