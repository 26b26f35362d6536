#!/bin/bash
# mount.pfs answers the kernel's security.capability lookup (asked before
# every write(2), file_remove_privs) from its own note that the MDS said
# "absent", for attr_timeout_s (client/README.md "Write path"):
# - a write still kills file capabilities set through this mount after
#   the note was taken (its setxattr forgets the note);
# - capabilities set through another mount are seen (and killed by a
#   write here) once attr_timeout_s has passed;
# - writes after the note do not ask the MDS (the MDS's GETXATTR count).
# With killpriv_v2 (the default, client/README.md "Privileges at a
# write") the kernel stops asking after its first look and mount.pfs
# drops the capability itself: case 2 is then mount.pfs's own check.
# The last case runs the first two with killpriv_v2=0 (the kernel's way).
# timeout: 120
. "$(dirname "$0")/lib.sh"
start_cluster --metrics --mount-opt attr_timeout_s=1
if [ "${PFS_AUTH:-on}" = off ]; then MAUTH=auth=0; else MAUTH=key=$CLUSTER/keys/client.key; fi
MNT2=$CLUSTER/mnt2
mkdir -p "$MNT2"
check "$PFS_BIN/mount.pfs" "$MDS" "$MNT2" -o "$MAUTH,log=file:$CLUSTER/client2.log"
trap '_rc=$?; umount "$MNT2" 2>/dev/null; (exit $_rc); cleanup' EXIT
command -v setcap >/dev/null && command -v getcap >/dev/null || { echo "skip: no setcap/getcap"; exit 0; }

caps() { getcap "$1" 2>/dev/null | grep -c cap_net_raw; }

# 1. note taken by a write, then setcap here, then a write: caps gone
check dd if=/dev/zero of="$MNT/f" bs=4096 count=4 status=none
exec 3<>"$MNT/f"
printf a >&3 # the kernel asks for security.capability: absent, noted
check setcap cap_net_raw+ep "$MNT/f"
[ "$(caps "$MNT/f")" = 1 ] || fail "setcap did not take"
printf b >&3
exec 3>&-
[ "$(caps "$MNT/f")" = 0 ] || fail "a write after setcap through this mount kept the capability"
[ "$(caps "$MNT2/f")" = 0 ] || fail "the other mount still sees the capability"
ok "setcap here, then a write here: capability removed"

# 2. setcap through the other mount: seen here after attr_timeout_s
exec 3<>"$MNT/f"
printf c >&3 # noted absent again
check setcap cap_net_raw+ep "$MNT2/f"
sleep 1.5
printf d >&3
exec 3>&-
[ "$(caps "$MNT2/f")" = 0 ] || fail "a write 1.5 s after another mount's setcap kept the capability"
ok "setcap on another mount, a write here after attr_timeout_s: capability removed"

# 3. 200 writes through one descriptor: the MDS is asked for
# security.capability at most once per attr_timeout_s, not per write
getx() {
	curl -s "http://127.0.0.1:$MDS_METRICS/metrics" |
		awk '/^pfs_mds_job_ops_total/ && /op="MDS_GETXATTR"/ {s += $NF} END {print s + 0}'
}
sleep 1.1 # the note of step 2 is old
g0=$(getx)
python3 - "$MNT/f" <<'PY' || fail "writes"
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
t0 = time.monotonic()
for i in range(200):
    os.pwrite(fd, b"x" * 512, (i % 8) * 4096)
print("200 writes in %.2f s" % (time.monotonic() - t0))
os.close(fd)
PY
sleep 1.2 # the exporter's counts
g1=$(getx)
echo "MDS GETXATTRs: $g0 -> $g1"
[ $((g1 - g0)) -ge 1 ] || fail "no GETXATTR reached the MDS at all (the metric moved from $g0 to $g1)"
[ $((g1 - g0)) -le 10 ] || fail "$((g1 - g0)) GETXATTRs reached the MDS for 200 writes"
ok "200 writes: $((g1 - g0)) GETXATTR(s) on the MDS"

grep -q "handle_killpriv_v2 on" "$CLUSTER/client.log" || fail "the mount did not announce handle_killpriv_v2"
ok "mount: handle_killpriv_v2 on"

# 4. the kernel's way (killpriv_v2=0) on the second mount keeps both rules
umount "$MNT2"
check "$PFS_BIN/mount.pfs" "$MDS" "$MNT2" -o "$MAUTH,killpriv_v2=0,attr_timeout_s=1,log=file:$CLUSTER/client3.log"
grep -q "handle_killpriv_v2 on" "$CLUSTER/client3.log" && fail "killpriv_v2=0 announced it"
exec 3<>"$MNT2/f"
printf e >&3
check setcap cap_net_raw+ep "$MNT2/f"
printf f >&3
[ "$(caps "$MNT2/f")" = 0 ] || fail "killpriv_v2=0: a write after setcap kept the capability"
check setcap cap_net_raw+ep "$MNT/f"
sleep 1.5
printf g >&3
exec 3>&-
[ "$(caps "$MNT/f")" = 0 ] || fail "killpriv_v2=0: a write after another mount's setcap kept the capability"
ok "killpriv_v2=0: capabilities dropped at writes by the kernel"
