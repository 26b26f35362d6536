#!/bin/bash
# POSIX semantics through the mount: hard links, symlinks, rename over
# files and directories, truncate up and down, sparse files, xattrs, and a
# non-root user refused where POSIX says so.  Then the syscall checker
# (tests/integration/posix_check.c) if it was built.
# timeout: 300
. "$(dirname "$0")/lib.sh"
start_cluster
cd "$MNT" || fail "cd"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

# hard links
echo hello > a
check ln a b
[ "$(stat -c %h a)" = 2 ] || fail "nlink after ln"
[ "$(stat -c %i a)" = "$(stat -c %i b)" ] || fail "hard link inode"
rm a
[ "$(cat b)" = hello ] || fail "data after unlinking one name"
[ "$(stat -c %h b)" = 1 ] || fail "nlink after rm"
ok "hard links"

# symlinks
check ln -s b s
[ "$(readlink s)" = b ] || fail "readlink"
[ "$(cat s)" = hello ] || fail "follow symlink"
check ln -s /nonexistent/target dangling
[ "$(readlink dangling)" = /nonexistent/target ] || fail "dangling readlink"
ok "symlinks"

# rename over an existing file, and over an empty directory
echo one > r1; echo two > r2
check mv -f r1 r2
[ "$(cat r2)" = one ] && [ ! -e r1 ] || fail "rename over file"
mkdir d1 d2; echo x > d1/f
check mv -T d1 d2
[ -f d2/f ] && [ ! -e d1 ] || fail "rename dir over empty dir"
mkdir d3; echo y > d3/g
mv -T d2 d3 2>/dev/null && fail "rename over non-empty dir succeeded"
mkdir -p p/q
mv p p/q/ 2>/dev/null && fail "moved a directory into itself"
mkdir other; check mv d2/f other/f2
[ -f other/f2 ] || fail "rename across directories"
ok "rename"

# truncate up and down, sparse files
printf 'abcdefghij' > t
check truncate -s 4 t
[ "$(cat t)" = abcd ] || fail "truncate down"
check truncate -s 3000000 t
[ "$(stat -c %s t)" = 3000000 ] || fail "truncate up size"
[ "$(tail -c +5 t | tr -d '\0' | wc -c)" = 0 ] || fail "truncate up is not zeros"
check dd if=/dev/urandom of=sparse bs=4096 count=1 seek=2000 status=none
[ "$(stat -c %s sparse)" = $((2001 * 4096)) ] || fail "sparse size"
[ "$(head -c $((2000 * 4096)) sparse | tr -d '\0' | wc -c)" = 0 ] || fail "hole not zeros"
sync; echo 3 > /proc/sys/vm/drop_caches
[ "$(head -c $((2000 * 4096)) sparse | tr -d '\0' | wc -c)" = 0 ] || fail "hole not zeros (uncached)"
ok "truncate and sparse files"

# extended attributes
check setfattr -n user.color -v blue b
[ "$(getfattr --only-values -n user.color b)" = blue ] || fail "getxattr"
getfattr -d b | grep -q 'user.color="blue"' || fail "listxattr"
check setfattr -x user.color b
getfattr -n user.color b 2>/dev/null && fail "removed xattr still there"
ok "xattrs"

# permissions as a non-root user
mkdir private; chmod 700 private; echo secret > private/f
echo mine > ro; chmod 644 ro
mkdir open; chmod 1777 open
as_nobody cat private/f 2>/dev/null && fail "nobody read a file in a 0700 dir"
as_nobody ls private >/dev/null 2>&1 && fail "nobody listed a 0700 dir"
as_nobody sh -c 'echo x >> ro' 2>/dev/null && fail "nobody wrote a 0644 root file"
as_nobody touch newfile 2>/dev/null && fail "nobody created a file in root's 0755 dir"
as_nobody chmod 777 ro 2>/dev/null && fail "nobody chmod'ed root's file"
as_nobody rm -f ro 2>/dev/null; [ -e ro ] || fail "nobody removed root's file"
check as_nobody sh -c 'echo ok > open/nb'
[ "$(stat -c %u open/nb)" = 65534 ] || fail "owner of nobody's file"
echo r > open/rootfile
as_nobody rm -f open/rootfile 2>/dev/null; [ -e open/rootfile ] || fail "sticky dir: nobody removed root's file"
check as_nobody rm open/nb
check as_nobody cat ro
ok "permissions for a non-root user"

if [ -x "$TOOLS/posix_check" ]; then
	# The default mount: the MDS alone checks (no default_permissions).
	"$TOOLS/posix_check" "$MNT" mds-only || fail "posix_check"
	ok "posix_check"
	# The same checks with the kernel's checks too (default_permissions,
	# which also covers FIFO and device node opens): a second mount,
	# $CLUSTER/mnt2 so that pfs-cluster stop unmounts it too.
	MNT2=$CLUSTER/mnt2
	mkdir -p "$MNT2"
	check "$PFS_BIN/mount.pfs" "$MDS" "$MNT2" -o "key=$CLUSTER/keys/client.key,log=file:$CLUSTER/client2.log,default_permissions=1"
	"$TOOLS/posix_check" "$MNT2" || fail "posix_check with default_permissions"
	umount "$MNT2"
	ok "posix_check with default_permissions (FIFOs and device nodes too)"
fi
cd /
