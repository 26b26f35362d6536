#!/bin/bash
# A 1 GiB file with stripe count 4 lands as 4 objects of 256 MiB on 4
# different OSTs and reads back with the same sha256.
# timeout: 900
. "$(dirname "$0")/lib.sh"
start_cluster --oss 4
check "$PFS_BIN/pfsadmin" setstripe -c 4 -S 1M "$MNT/big"
src=$T/src.bin
dd if=/dev/urandom of="$src" bs=1M count=1024 status=none
want=$(sha256sum < "$src" | cut -d' ' -f1)
check dd if="$src" of="$MNT/big" bs=1M conv=fsync status=none
rm -f "$src"
[ "$(stat -c %s "$MNT/big")" = 1073741824 ] || fail "size is $(stat -c %s "$MNT/big")"
js=$("$PFS_BIN/pfsadmin" --json getstripe "$MNT/big") || fail "getstripe"
echo "$js"
osts=$(echo "$js" | grep -o '"ost": *[0-9]*' | grep -o '[0-9]*$' | sort -u | wc -l)
[ "$osts" = 4 ] || fail "expected 4 distinct OSTs, got $osts"
# Each OST directory holds exactly one object of 256 MiB.
for i in 0 1 2 3; do
	objs=$(find "$CLUSTER/oss$i/ost0/O" -type f)
	[ "$(echo "$objs" | grep -c .)" = 1 ] || fail "oss$i holds: $objs"
	sz=$(stat -c %s $objs)
	[ "$sz" = 268435456 ] || fail "oss$i object is $sz bytes"
done
ok "4 objects x 256 MiB on 4 OSTs"
sync; echo 3 > /proc/sys/vm/drop_caches
got=$(sha256sum < "$MNT/big" | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "sha256 differs: $got vs $want"
ok "sha256 matches"
