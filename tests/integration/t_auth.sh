#!/bin/bash
# Authentication end to end (common/auth.h): a cluster started by
# pfs-cluster with its keys (OSS frames MACed in full, the MDS in header
# mode) serves a mount and pfsadmin; a key file readable by others, a key
# of another cluster and a client without a key are refused with a clear
# message, and the daemons go on serving; forged bytes on the MDS port
# (no handshake) are dropped; `pfsadmin key gen` refuses to overwrite and
# to derive without a server key.
# timeout: 180
. "$(dirname "$0")/lib.sh"
start_cluster --oss 2 --oss-opt integrity=full
K=$CLUSTER/keys
for r in mds oss client admin; do
	[ "$(stat -c %a "$K/$r.key")" = 600 ] || fail "$K/$r.key is not 0600"
done
grep -q '^role = admin' "$K/admin.key" || fail "admin.key has no role line"

# Data through authenticated, fully MACed OSS connections.
head -c 8M /dev/urandom >"$T/src"
check dd if="$T/src" of="$MNT/f" bs=1M conv=fsync status=none
sync; echo 3 >/proc/sys/vm/drop_caches
cmp -s "$T/src" "$MNT/f" || fail "8 MiB read back differs"
check admin ping -c 1 >/dev/null
ok "mount and pfsadmin with keys; data with integrity=full"

# A world-readable key file: refused, naming the file and the reason.
cp "$K/client.key" "$T/open.key"; chmod 644 "$T/open.key"
mkdir -p "$T/m2"
if "$PFS_BIN/mount.pfs" "$MDS" "$T/m2" -o "key=$T/open.key" 2>"$T/err"; then
	umount "$T/m2"; fail "mount.pfs took a 0644 key file"
fi
grep -q "$T/open.key" "$T/err" && grep -qi "permission" "$T/err" ||
	fail "mount.pfs message: $(cat "$T/err")"
if "$PFS_BIN/pfsadmin" --key "$T/open.key" --mds "$MDS" ping -c 1 >/dev/null 2>"$T/err"; then
	fail "pfsadmin took a 0644 key file"
fi
grep -q "$T/open.key" "$T/err" || fail "pfsadmin message: $(cat "$T/err")"
ok "0644 key file refused: $(head -1 "$T/err")"

# A key of another cluster: the handshake fails, the MDS serves on.
check "$PFS_BIN/pfsadmin" key gen --role mds "$T/other-mds.key"
check "$PFS_BIN/pfsadmin" key gen --role admin --master "$T/other-mds.key" "$T/other-admin.key"
if "$PFS_BIN/pfsadmin" --key "$T/other-admin.key" --mds "$MDS" --timeout 3 ping -c 1 \
	>/dev/null 2>"$T/err"; then
	fail "a key of another cluster was accepted"
fi
if "$PFS_BIN/pfsadmin" --no-auth --mds "$MDS" --timeout 3 ping -c 1 >/dev/null 2>&1; then
	fail "a client without a key was accepted"
fi
mkdir -p "$T/m3"
if "$PFS_BIN/mount.pfs" "$MDS" "$T/m3" -o "key=$T/other-admin.key,retry_ms=0" 2>"$T/err"; then
	umount "$T/m3"; fail "mount.pfs with another cluster's key mounted"
fi
check admin ping -c 1 >/dev/null
cmp -s "$T/src" "$MNT/f" || fail "data after refused peers"
ok "wrong key and no key refused; the cluster still serves"

# Forged bytes without a handshake: a v3 header with a zero MAC.
port=${MDS##*:}
printf 'PFS1\003\000\001\000%088d' 0 >"$T/forged"
timeout 5 bash -c "cat '$T/forged' >/dev/tcp/127.0.0.1/$port" 2>/dev/null || true
check admin ping -c 1 >/dev/null
ls "$MNT" >/dev/null || fail "ls after a forged frame"
ok "forged frame without handshake dropped; MDS still serves"

# key gen: no overwrite, no derivation from a node key.
"$PFS_BIN/pfsadmin" key gen --role mds "$T/other-mds.key" 2>/dev/null &&
	fail "key gen overwrote a key"
"$PFS_BIN/pfsadmin" key gen --role admin --master "$K/client.key" "$T/x.key" 2>/dev/null &&
	fail "key gen derived from a client key"
[ -e "$T/x.key" ] && fail "key gen left a file"
ok "key gen refuses overwrite and a non-server master"
