#!/bin/bash
# Statahead (issue 11 item 3, client/statahead.h, mds/dirplus.h): mount A
# stat-walks a directory of 400 files; the walk is answered from bulk
# fetches (the MDS counts far fewer LOOKUPs than files for the walk's job,
# and some LOOKUP_BULKs: fails without statahead).  While A keeps walking,
# mount B chmods, unlinks, renames and creates names there: A sees each
# change within the attribute timeout (1 s; 4 s allowed for a loaded
# machine).  A file mount B keeps open and writes to shows its growing
# size on A (the glimpse: such entries are never served from the cache).
# A 0700 directory of uid 1000 walked by uid 1000 on A is not served to
# uid 1001 (EACCES).  Then with metadata leases (30 s) on both sides: B's
# changes are seen within 4 s, not after the lease (the MDS's revocations
# reach the statahead cache: a name fetched ahead of A's walk, which A's
# kernel never looked up, chmod'ed on B, is not served with its old mode).
# timeout: 300
. "$(dirname "$0")/lib.sh"
HW=$TOOLS/holdwrite
[ -x "$HW" ] || fail "no $HW (built by make test / the itools)"
command -v jq >/dev/null || fail "jq is needed"
U0="setpriv --reuid=1000 --regid=1000 --clear-groups"
U1="setpriv --reuid=1001 --regid=1001 --clear-groups"
WALKER=
HWPIDS=
stop_bg() {
	[ -n "$WALKER" ] && kill "$WALKER" 2>/dev/null && wait "$WALKER" 2>/dev/null
	WALKER=
	for p in $HWPIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	HWPIDS=
}
trap '_rc=$?; stop_bg; (exit $_rc); cleanup' EXIT

# MDS requests of opcode $2 counted for job $1 (pfsadmin jobstats)
mds_op() {
	admin --json jobstats | jq "[.jobs[] | select(.job == \"$1\") | .mds_ops[] |
		select(.op == \"$2\") | .count] | add // 0"
}

# seen DESC CMD...: CMD succeeds on A within 4 s
seen() {
	local d=$1 t0
	shift
	t0=$(date +%s%N)
	for _ in $(seq 40); do
		if "$@" >/dev/null 2>&1; then
			echo "  $d: seen after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
			return 0
		fi
		sleep 0.1
	done
	fail "not seen on A within 4 s: $d"
}

# walk DIR: stat every name in DIR, in name order, in a loop (background)
walk() {
	( while :; do (cd "$1" && stat -- * >/dev/null 2>&1); sleep 0.05; done ) &
	WALKER=$!
}

phase() {
	local lease=$1
	start_cluster --mounts 2 --mds-opt md_lease_s="$lease" --mount-opt md_lease_s="$lease"
	MNTB=$CLUSTER/mnt1
	check mkdir -m 0755 "$MNTB/w"
	(cd "$MNTB/w" && for i in $(seq -w 0 399); do : > "f0$i"; done) || fail "create on B"
	sync

	# 1. the walk is served from bulk fetches
	(cd "$MNT/w" && PFS_JOBID=walk$lease stat -- * > "$T/walk.out") || fail "walk on A"
	[ "$(wc -l < "$T/walk.out")" -ge 400 ] || fail "walk: $(wc -l < "$T/walk.out") lines"
	lk=$(mds_op walk$lease MDS_LOOKUP)
	bulk=$(mds_op walk$lease MDS_LOOKUP_BULK)
	[ "$bulk" -ge 1 ] || fail "no LOOKUP_BULK for the walk (lookups $lk)"
	[ "$lk" -lt 100 ] || fail "walk of 400 files: $lk LOOKUPs ($bulk bulk): statahead did not serve"
	ok "md_lease_s=$lease: a walk of 400 files made $lk LOOKUPs and $bulk LOOKUP_BULKs"

	# 2. B changes names while A walks
	walk "$MNT/w"
	sleep 0.5
	check chmod 600 "$MNTB/w/f0100"
	seen "chmod on B" sh -c "[ \$(stat -c %a '$MNT/w/f0100') = 600 ]"
	check rm "$MNTB/w/f0101"
	seen "unlink on B" sh -c "! stat '$MNT/w/f0101'"
	check mv "$MNTB/w/f0102" "$MNTB/w/g0102"
	seen "rename on B (old name)" sh -c "! stat '$MNT/w/f0102'"
	check stat "$MNT/w/g0102" > /dev/null
	check sh -c "echo hello > '$MNTB/w/f0150x'"
	seen "create on B" sh -c "[ \$(stat -c %s '$MNT/w/f0150x') = 6 ]"
	check mv "$MNTB/w/f0103" "$MNTB/w/f0104"
	seen "rename over a name on B" sh -c "[ \$(stat -c %i '$MNT/w/f0104') = \$(stat -c %i '$MNTB/w/f0104') ]"
	ok "md_lease_s=$lease: B's chmod, unlink, renames and create seen on A while it walks"

	# 2b. B chmods a name A's statahead fetched ahead of A's walk and A's
	# kernel never looked up: with leases the MDS's revocation drops it
	# from the cache (else A's first LOOKUP of it is served the old mode,
	# which the kernel then keeps for the lease: fails without
	# cli_sa_revoke); without leases the attribute timeout bounds it
	check mkdir -m 0755 "$MNTB/v"
	(cd "$MNTB/v" && for i in $(seq 0 99); do : > "$(printf f%03d "$i")"; done) ||
		fail "create v on B"
	(cd "$MNT/v" && for i in $(seq 0 9); do stat "$(printf f%03d "$i")" > /dev/null || exit 1; done) ||
		fail "walk of v on A"
	sleep 0.2
	check chmod 600 "$MNTB/v/f050"
	sleep 0.3 # the revocation reaches A before A looks the name up
	seen "chmod on B of a name fetched ahead of A's walk" \
		sh -c "[ \$(stat -c %a '$MNT/v/f050') = 600 ]"
	ok "md_lease_s=$lease: a name fetched ahead of A's walk and changed on B is seen on A"

	# 3. a file B keeps writing: its growing size, not the MDS's
	"$HW" "$MNTB/w/f0200" 1048576 "$T/go1" > "$T/hw1.out" 2>&1 & HWPIDS="$HWPIDS $!"
	for _ in $(seq 100); do grep -q written "$T/hw1.out" && break; sleep 0.1; done
	grep -q written "$T/hw1.out" || fail "holdwrite: $(cat "$T/hw1.out")"
	seen "1 MiB written on B, not closed" sh -c "[ \$(stat -c %s '$MNT/w/f0200') = 1048576 ]"
	"$HW" "$MNTB/w/f0200" 3145728 "$T/go2" > "$T/hw2.out" 2>&1 & HWPIDS="$HWPIDS $!"
	for _ in $(seq 100); do grep -q written "$T/hw2.out" && break; sleep 0.1; done
	grep -q written "$T/hw2.out" || fail "holdwrite: $(cat "$T/hw2.out")"
	seen "3 MiB written on B, not closed" sh -c "[ \$(stat -c %s '$MNT/w/f0200') = 3145728 ]"
	touch "$T/go1" "$T/go2"
	stop_bg
	ok "md_lease_s=$lease: a file B is writing shows its growing size on A"

	# 4. a 0700 directory of uid 1000: its walk by uid 1000 is not served
	# to uid 1001 (from the mount's root: the test's directory is 0700)
	check mkdir -m 0700 "$MNTB/s"
	(cd "$MNTB/s" && for i in $(seq -w 0 99); do : > "f$i"; done) || fail "create s"
	check chown -R 1000:1000 "$MNTB/s"
	cd "$MNT" || fail "cd $MNT"
	$U0 sh -c 'stat -- s/* > /dev/null' || fail "uid 1000's walk of s"
	for f in f10 f50 f99; do
		out=$($U1 stat "s/$f" 2>&1) && fail "uid 1001 stat s/$f: $out"
		echo "$out" | grep -q "Permission denied" || fail "uid 1001 stat s/$f: $out"
	done
	$U0 stat s/f99 > /dev/null || fail "uid 1000 stat s/f99"
	cd /
	ok "md_lease_s=$lease: a 0700 directory walked by its owner is not served to another uid"

	"$REPO/deploy/pfs-cluster" stop "$CLUSTER" > /dev/null 2>&1
	rm -rf "$CLUSTER"
}

phase 0
phase 30
