#!/bin/bash
# The multi-host form: MDS, 4 OSS and a client each in their own network
# namespace on a bridge (deploy/pfs-netns).  The client mounts over the
# "network", writes a striped file, reads it back; OSTs register with their
# own addresses.
# timeout: 300
. "$(dirname "$0")/lib.sh"
N=$T/netns
trap '"$REPO/deploy/pfs-netns" stop "$N" >/dev/null 2>&1; cleanup' EXIT
"$REPO/deploy/pfs-netns" start "$N" --oss 4 || fail "netns cluster"
. "$N/netns.env"
export PFS_KEY   # the admin key pfs-netns made; mounts use CLIENT_KEY
ip netns exec "$NS_CLIENT" "$PFS_BIN/pfsadmin" --mds "$MDS" ost list | tee "$T/osts"
[ "$(grep -c ' up ' "$T/osts")" = 4 ] || [ "$(grep -ci 'up' "$T/osts")" -ge 4 ] || fail "4 OSTs up"
grep -q "10.99." "$T/osts" || fail "OSTs registered without their own addresses"
head -c 20000000 /dev/urandom > "$T/data"
mkdir -p "$T/m"
"$REPO/deploy/pfs-netns" exec "$N" bash -c "
	set -e
	'$PFS_BIN/mount.pfs' '$MDS' '$T/m' -o key='$CLIENT_KEY',log=file:'$T/client.log',timeout_ms=3000
	'$PFS_BIN/pfsadmin' setstripe -c 4 -S 1M '$T/m/f'
	cp '$T/data' '$T/m/f'
	sync; echo 3 > /proc/sys/vm/drop_caches
	cmp '$T/data' '$T/m/f'
	umount '$T/m'
" || fail "striped file over the namespaces"
ok "striped I/O across network namespaces"
