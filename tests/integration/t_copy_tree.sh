#!/bin/bash
# cp -a of /usr/include into pfs, then diff -r (symlinks compared as links:
# some point outside the tree) finds no difference; also
# after dropping the kernel's caches (data comes back from the OSSes).
# timeout: 600
. "$(dirname "$0")/lib.sh"
start_cluster
check cp -a /usr/include "$MNT/include"
check diff -r --no-dereference /usr/include "$MNT/include"
ok "cp -a + diff -r"
sync; echo 3 > /proc/sys/vm/drop_caches
check diff -r --no-dereference /usr/include "$MNT/include"
n1=$(find /usr/include | wc -l); n2=$(find "$MNT/include" | wc -l)
[ "$n1" = "$n2" ] || fail "find counts differ: $n1 vs $n2"
# permissions, owners and symlinks survived cp -a
a=$(cd /usr/include && find . -printf '%p %m %u %g %y %l\n' | sort | md5sum)
b=$(cd "$MNT/include" && find . -printf '%p %m %u %g %y %l\n' | sort | md5sum)
[ "$a" = "$b" ] || fail "modes/owners/types differ after cp -a"
ok "after drop_caches, metadata too"
check rm -rf "$MNT/include"
[ -z "$(ls -A "$MNT")" ] || fail "mount not empty after rm -rf"
ok "rm -rf"
