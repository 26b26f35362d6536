#!/bin/bash
# Lock replay across an MDS restart (issue 8, Lustre's lock replay): mount 1
# holds a POSIX write lock and an exclusive flock on a file; the MDS is
# killed (-9) and restarted.  Mount 1 notices the new MDS instance and
# reclaims both locks in the MDS's recovery window (one lease,
# lock_lease_s=6); mount 2's F_SETLK and flock(LOCK_NB) on the file, tried
# right after the restart (in the window) and again after it, are refused
# (EAGAIN) while mount 1 holds them; once mount 1 unlocks, mount 2 gets
# both.  Without the replay the restarted MDS would have an empty lock
# table and grant mount 2's requests.
# timeout: 180
. "$(dirname "$0")/lib.sh"
LP=$TOOLS/lockprobe
[ -x "$LP" ] || fail "no $LP (built by make test / the itools)"
start_cluster --mds-opt lock_lease_s=6
if [ "${PFS_AUTH:-on}" = off ]; then MAUTH=auth=0; else MAUTH=key=$CLUSTER/keys/client.key; fi
MNT2=$CLUSTER/mnt2
mkdir -p "$MNT2"
check "$PFS_BIN/mount.pfs" "$MDS" "$MNT2" -o "$MAUTH,log=file:$CLUSTER/client2.log"
A=$MNT/lk
B=$MNT2/lk
touch "$A"
C="$REPO/deploy/pfs-cluster"

wait_for() {
	local i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt $(($3 * 10)) ] && return 1
		sleep 0.1
	done
}

# try_b: both conflicting requests of mount 2 must be refused ("busy")
try_b() {
	local rc
	"$LP" setlk "$B" w 10 10 0 >/dev/null; rc=$?
	[ $rc = 2 ] || fail "$1: F_SETLK on mount 2 exit $rc, want busy (mount 1's lock lost)"
	"$LP" flock "$B" exnb 0 >/dev/null; rc=$?
	[ $rc = 2 ] || fail "$1: flock LOCK_NB on mount 2 exit $rc, want busy (mount 1's flock lost)"
}

"$LP" hold "$A" "$T/release" >"$T/a.out" & apid=$!
wait_for "$T/a.out" locked 10 || fail "hold on mount 1"
try_b "before the restart"
ok "mount 1 holds a write lock and a flock; mount 2 refused"

echo "kill -9 the MDS, revive"
"$C" kill "$CLUSTER" mds KILL || fail "kill mds"
sleep 1
"$C" revive "$CLUSTER" >/dev/null || fail "revive mds"
t0=$(date +%s)
try_b "in the recovery window"
t1=$(date +%s)
echo "mount 2's requests in the window answered after $((t1 - t0)) s"
ok "refused in the recovery window"

# past the window (one lease) for sure
sleep 8
try_b "after the recovery window"
grep -q "recovery window" "$CLUSTER/mds.log" || fail "the MDS opened no recovery window"
grep -q "recovery over" "$CLUSTER/mds.log" || fail "the MDS did not close its recovery window"
grep -q "2 lock(s) reclaimed, 0 lost" "$CLUSTER"/client*.log "$CLUSTER"/*.log 2>/dev/null ||
	fail "mount 1 did not log its reclaim of 2 locks"
ok "refused after the window: mount 1's locks were reclaimed"

touch "$T/release"
wait_for "$T/a.out" released 20 || fail "mount 1 did not unlock"
wait $apid || fail "holder on mount 1"
check "$LP" setlk "$B" w 10 10 0 >/dev/null
check "$LP" flock "$B" exnb 0 >/dev/null
ok "after mount 1 unlocks, mount 2 gets both locks"

# no window without lock holders: a second restart with no lock held (the
# leases of mounts without locks end within a second)
sleep 3
"$C" kill "$CLUSTER" mds KILL || fail "kill mds"
sleep 1
"$C" revive "$CLUSTER" >/dev/null || fail "revive mds"
check "$LP" setlk "$B" w 0 0 0 >/dev/null
n=$(grep -c "held locks before the restart" "$CLUSTER/mds.log")
[ "$n" = 1 ] || fail "the MDS opened a recovery window with no lock holder ($n windows)"
ok "no recovery window when no mount held locks"
umount "$MNT2"
