#!/bin/bash
# bench/peers.sh — pfs against its peers, CephFS and GlusterFS, on this
# machine, with the workloads of the core benchmark (bench/run.sh).  Issue
# 11 asks pfs to be ahead of both; this is the scripted run behind its table.
#
# Targets, all on one host, loopback only (127.0.0.1; 127.0.0.2 for gluster,
# whose CLI refuses 127.0.0.1), no replication, all state under one work
# directory ($PEERS_DIR, default /var/tmp/pfs-peers):
#   passthrough  the FUSE passthrough (bench/passthrough_main.c) of a local
#                directory: the baseline every ratio is taken against
#   pfs          deploy/pfs-cluster: MDS + 4 OSS, authentication on, FUSE
#   gluster      glusterd (Debian's GlusterFS) with its state, sockets and
#                logs in the work dir, a distribute volume of 4 bricks on
#                127.0.0.2 (directories, `force`), the glusterfs FUSE client
#   ceph         Debian's Ceph, set up by hand (no cephadm, no containers):
#                1 mon (monmap on 127.0.0.1), 1 mgr, 4 BlueStore OSDs on
#                files of $CEPH_OSD_SIZE, pool size 1, a CephFS with one MDS,
#                mounted by ceph-fuse; cephx on; its ceph.conf and keyrings
#                in the work dir (every ceph command gets -c), /etc/ceph is
#                never read or written
# PEERS=gluster,ceph picks the peers (pfs and the passthrough always run).
# A peer that cannot be installed or started is skipped with a message (its
# daemon's log is shown); the others still run.
#
# Workloads, as bench/run.sh: pfs-bench seqwrite/seqread (4 streams x
# $SEQ_SIZE, one untimed write pass first), randwrite/randread ($RAND_OPS x
# 4 KiB, 4 threads, $RAND_SIZE file), md (create, stat, unlink of $MD_FILES
# files, 4 threads, cold caches); with FIO=1 also the fio matrix of run.sh.
# Every workload runs REPS times (default 3), the targets interleaved within
# a repetition, their order rotated from one repetition to the next.
#
# Output, in $RESDIR (default bench/results/):
#   peers.md            the markdown section for bench/RESULTS.md (also on
#                       stdout): medians, ratios to the passthrough, pfs
#                       against the best peer, versions, load, raw values
#   peers-medians.tsv   suite workload unit, then one column per target
#   peers-raw.tsv       suite rep target workload value (every repetition)
# Needs root (FUSE, daemons, drop_caches); installs the missing Debian
# packages with apt-get.  Everything it started is stopped and the work
# directory removed at the end, on failure and on ^C too (trap).
#   PFS_BIN=build/bin bash bench/peers.sh        (or: make bench-peers)
# Settings (environment): PEERS REPS SEQ_SIZE RAND_SIZE RAND_OPS MD_FILES
# FIO=0|1 FIO_SIZE FIO_RUNTIME PHASE_TIMEOUT START_TIMEOUT CEPH_OSD_SIZE
# CEPH_V2_PORT CEPH_V1_PORT PEERS_DIR RESDIR PAGE_REPORTING=hold|leave
# (as bench/run.sh); PEERS_KEEP=1 keeps the work
# directory (logs) after stopping everything; PFS_REV names the measured
# pfs revision when PFS_BIN is not built from this checkout's HEAD.
# Run time with REPS=3: 8.5 min (FIO=0), 19 min (FIO=1) at load 15-39 on
# the 2-vCPU development VM.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
: "${PFS_BIN:=$repo/build/bin}"
export PFS_BIN
PEERS=${PEERS:-gluster,ceph}
REPS=${REPS:-3}
SEQ_SIZE=${SEQ_SIZE:-256M}     # per stream
RAND_SIZE=${RAND_SIZE:-256M}
RAND_OPS=${RAND_OPS:-20000}
MD_FILES=${MD_FILES:-5000}
FIO=${FIO:-0}
FIO_JOBS=4
FIO_SIZE=${FIO_SIZE:-256M}     # per job
FIO_RUNTIME=${FIO_RUNTIME:-10} # seconds, upper bound of each fio phase
PHASE_TIMEOUT=${PHASE_TIMEOUT:-180} # seconds before any one phase is cut off
START_TIMEOUT=${START_TIMEOUT:-90}  # seconds for any one daemon or mount to come up
CEPH_OSD_SIZE=${CEPH_OSD_SIZE:-4G}  # each OSD's BlueStore file (sparse)
W=${PEERS_DIR:-/var/tmp/pfs-peers}
RESDIR=${RESDIR:-$here/results}

case $REPS in '' | *[!0-9]* | 0) echo "peers: REPS must be a positive number" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "peers: needs root (FUSE mounts, daemons, drop_caches)" >&2; exit 1; }
for b in pfs-bench pfs-passthrough pfs-mds pfs-oss mount.pfs; do
	[ -x "$PFS_BIN/$b" ] || { echo "peers: $PFS_BIN/$b missing (make first, or set PFS_BIN)" >&2; exit 1; }
done
t_begin=$(date +%s)
uptime_begin=$(uptime)
mkdir -p "$RESDIR"
RESDIR=$(cd "$RESDIR" && pwd)

# --- packages ---------------------------------------------------------------------
BENCH_NAME=peers
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
need() { # need PKG...: install those of PKG not installed yet
	local p miss=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || miss+=("$p")
	done
	[ ${#miss[@]} -eq 0 ] && return 0
	echo "peers: installing ${miss[*]} (Debian)" >&2
	apt_install "${miss[@]}"
}
need jq uuid-runtime || { echo "peers: jq and uuidgen are needed" >&2; exit 1; }
[ "$FIO" = 1 ] && { need fio || { echo "peers: fio could not be installed: FIO=0" >&2; FIO=0; }; }

declare -A skipped=()   # target -> why it did not run
peers=()
for p in ${PEERS//,/ }; do
	case $p in
	gluster) need glusterfs-server glusterfs-client || skipped[gluster]="apt-get could not install glusterfs-server, glusterfs-client" ;;
	ceph) need ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse ceph-common ||
		skipped[ceph]="apt-get could not install ceph-mon, ceph-mgr, ceph-osd, ceph-mds, ceph-fuse" ;;
	*) echo "peers: unknown peer '$p' (PEERS=gluster,ceph)" >&2; exit 2 ;;
	esac
	[ -n "${skipped[$p]:-}" ] || peers+=("$p")
done

# --- processes and mounts -----------------------------------------------------------
# Every daemon this script starts is recorded by pid and stopped by that pid
# (never by a name pattern: other clusters on the machine are left alone).
PIDS=()
started() { PIDS+=("$1"); }
stop_pid() { # stop_pid PID: TERM, up to 10 s, then KILL
	local pid=$1 i
	kill "$pid" 2>/dev/null || return 0
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
# unmount_under DIR: every mount under DIR (also a dead FUSE mount), deepest first.
unmount_under() {
	local m
	for m in $(awk -v w="$1/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}
mounted() { grep -q " $1 " /proc/mounts; }
# wait_until LIMIT WHAT LOG PID CMD...: poll CMD until it succeeds; fails
# (showing the end of LOG) after LIMIT seconds or as soon as PID (if not
# "-") has died.
wait_until() {
	local limit=$1 what=$2 log=$3 pid=$4 end
	shift 4
	end=$(( $(date +%s) + limit ))
	while ! "$@" >/dev/null 2>&1; do
		if [ "$pid" != - ] && ! kill -0 "$pid" 2>/dev/null; then
			echo "peers: $what exited during start; the end of $log:" >&2
			tail -n 25 "$log" >&2 2>/dev/null || true
			return 1
		fi
		if [ "$(date +%s)" -ge "$end" ]; then
			echo "peers: $what not up after ${limit}s; the end of $log:" >&2
			tail -n 25 "$log" >&2 2>/dev/null || true
			return 1
		fi
		sleep 0.5
	done
}

# --- GlusterFS ----------------------------------------------------------------------
G=$W/gluster
gl() { timeout 60 gluster --mode=script --glusterd-sock="$G/run/glusterd.socket" --log-file="$G/log/cli.log" "$@"; }
gluster_up() {
	local i bricks=()
	if ss -ltn | awk '{print $4}' | grep -q ':24007$'; then
		echo "peers: gluster: port 24007 is taken (another glusterd?)" >&2
		return 1
	fi
	mkdir -p "$G/lib" "$G/run" "$G/log" "$G/mnt"
	# glusterd's own state, pid files and CLI socket in the work dir, its
	# management port on loopback only.  127.0.0.2, not 127.0.0.1: gluster's
	# CLI refuses "127.0.0.1" and "localhost" as a brick's host, and the
	# bricks reach glusterd at their own host's address.  Both are on lo.
	cat >"$G/glusterd.vol" <<-EOF
	volume management
	    type mgmt/glusterd
	    option working-directory $G/lib
	    option run-directory $G/run
	    option glusterd-sockfile $G/run/glusterd.socket
	    option transport-type socket
	    option transport.socket.bind-address 127.0.0.2
	    option transport.socket.listen-port 24007
	    option transport.socket.keepalive-time 10
	    option transport.socket.keepalive-interval 2
	    option transport.socket.read-fail-log off
	    option ping-timeout 0
	    option event-threads 1
	    option max-port 60999
	end-volume
	EOF
	glusterd -N -f "$G/glusterd.vol" -l "$G/log/glusterd.log" -p "$G/run/glusterd.pid" \
		>>"$G/log/glusterd.out" 2>&1 &
	GD_PID=$!
	started "$GD_PID"
	wait_until "$START_TIMEOUT" glusterd "$G/log/glusterd.log" "$GD_PID" gl volume list || return 1
	for i in 0 1 2 3; do
		mkdir -p "$G/brick$i"
		bricks+=("127.0.0.2:$G/brick$i")
	done
	gl volume create pfsbench transport tcp "${bricks[@]}" force >>"$G/log/setup.log" 2>&1 ||
		{ echo "peers: gluster volume create failed:" >&2; tail -n 5 "$G/log/setup.log" >&2; return 1; }
	gl volume start pfsbench >>"$G/log/setup.log" 2>&1 ||
		{ echo "peers: gluster volume start failed:" >&2; tail -n 5 "$G/log/setup.log" "$G/log/glusterd.log" >&2; return 1; }
	gluster_mount
}
gluster_mount() { # the FUSE client; it daemonises, its pid file is how it is stopped
	glusterfs --volfile-server=127.0.0.2 --volfile-id=pfsbench --log-file="$G/log/mnt.log" \
		--pid-file="$G/run/mnt.pid" "$G/mnt" >>"$G/log/setup.log" 2>&1 ||
		{ echo "peers: glusterfs mount failed:" >&2; tail -n 20 "$G/log/mnt.log" >&2; return 1; }
	wait_until "$START_TIMEOUT" "glusterfs mount" "$G/log/mnt.log" - \
		sh -c "grep -q ' $G/mnt fuse.glusterfs ' /proc/mounts && stat -f '$G/mnt'" || return 1
	touch "$G/mnt/.probe" && rm -f "$G/mnt/.probe" ||
		{ echo "peers: the gluster mount does not take writes" >&2; tail -n 20 "$G/log/mnt.log" >&2; return 1; }
}
gluster_cold() { # a new client: nothing cached in the old one's memory
	local pid
	pid=$(cat "$G/run/mnt.pid" 2>/dev/null) || pid=
	umount "$G/mnt" 2>/dev/null || umount -l "$G/mnt"
	[ -n "$pid" ] && stop_pid "$pid"
	gluster_mount
}
gluster_down() {
	local f pid
	[ -d "$G" ] || return 0
	unmount_under "$G"
	# A brick's unix socket is in /var/run/gluster whatever the run
	# directory (-S on its command line): noted while the bricks run,
	# removed once they are gone.
	local socks=() sock
	for f in $(find "$G" -name '*.pid' 2>/dev/null); do
		pid=$(cat "$f" 2>/dev/null) || continue
		case $pid in '' | *[!0-9]*) continue ;; esac
		tr "\0" "\n" 2>/dev/null <"/proc/$pid/cmdline" | grep -q -- "$G" || continue
		sock=$(tr "\0" "\n" 2>/dev/null <"/proc/$pid/cmdline" | awk 'p {print; exit} $0 == "-S" {p = 1}')
		case $sock in /var/run/gluster/*.socket | /run/gluster/*.socket) socks+=("$sock") ;; esac
	done
	[ -S "$G/run/glusterd.socket" ] && gl volume stop pfsbench >/dev/null 2>&1 || true
	# glusterd's children (brick servers, the mount client): by the pid files
	# they wrote under $G, and only if that pid still runs a gluster process
	# that names $G.
	for f in $(find "$G" -name '*.pid' 2>/dev/null); do
		pid=$(cat "$f" 2>/dev/null) || continue
		case $pid in '' | *[!0-9]*) continue ;; esac
		tr "\0" "\n" 2>/dev/null <"/proc/$pid/cmdline" | grep -q -- "$G" || continue
		stop_pid "$pid"
	done
	[ -n "${GD_PID:-}" ] && stop_pid "$GD_PID"
	[ ${#socks[@]} -eq 0 ] || rm -f "${socks[@]}"
	# the brick servers log where glusterd tells them, outside the work dir
	rm -f /var/log/glusterfs/bricks/"$(echo "${G#/}" | tr / -)"-brick[0-3].log
	return 0
}

# --- CephFS -------------------------------------------------------------------------
C=$W/ceph
CEPH_V2=${CEPH_V2_PORT:-3300}
CEPH_V1=${CEPH_V1_PORT:-6789}
cph() { timeout 60 ceph -c "$C/ceph.conf" "$@"; }
ceph_up() {
	local i id uuid p pid
	for p in $CEPH_V2 $CEPH_V1; do
		if ss -ltn | awk '{print $4}' | grep -q ":$p\$"; then
			echo "peers: ceph: port $p is taken (another ceph-mon?)" >&2
			return 1
		fi
	done
	mkdir -p "$C/run" "$C/log" "$C/crash" "$C/data" "$C/mnt"
	# One private configuration: every daemon and command gets -c (and
	# CEPH_CONF), so /etc/ceph is never used.  All addresses on loopback.
	cat >"$C/ceph.conf" <<-EOF
	[global]
	fsid = $(uuidgen)
	mon initial members = a
	mon host = [v2:127.0.0.1:$CEPH_V2,v1:127.0.0.1:$CEPH_V1]
	public addr = 127.0.0.1
	public network = 127.0.0.0/8
	cluster network = 127.0.0.0/8
	ms bind ipv6 = false
	auth cluster required = cephx
	auth service required = cephx
	auth client required = cephx
	run dir = $C/run
	crash dir = $C/crash
	admin socket = $C/run/\$name.asok
	log file = $C/log/\$name.log
	pid file = $C/run/\$name.pid
	mon data = $C/data/mon-\$id
	mgr data = $C/data/mgr-\$id
	osd data = $C/data/osd-\$id
	mds data = $C/data/mds-\$id
	keyring = $C/data/\$type-\$id/keyring
	# one host, no replication (as pfs: one copy of each stripe)
	osd pool default size = 1
	osd pool default min size = 1
	osd pool default pg autoscale mode = off
	osd crush chooseleaf type = 0
	mon allow pool size one = true
	mon allow pool delete = true
	mon warn on pool no redundancy = false
	mon data avail warn = 5
	# BlueStore on a (sparse) file per OSD, in the OSD's data directory
	osd objectstore = bluestore
	bluestore block create = true
	bluestore block size = $(numfmt --from=iec "$CEPH_OSD_SIZE")
	osd memory target = 1073741824
	[client]
	keyring = $C/admin.keyring
	admin socket = $C/run/\$name.\$pid.asok
	EOF
	export CEPH_CONF=$C/ceph.conf
	ceph-authtool --create-keyring "$C/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null &&
	ceph-authtool --create-keyring "$C/admin.keyring" --gen-key -n client.admin --cap mon 'allow *' \
		--cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null &&
	ceph-authtool "$C/mon.keyring" --import-keyring "$C/admin.keyring" >/dev/null &&
	monmaptool --create --addv a "[v2:127.0.0.1:$CEPH_V2,v1:127.0.0.1:$CEPH_V1]" \
		--fsid "$(awk '$1 == "fsid" {print $3}' "$C/ceph.conf")" "$C/monmap" >/dev/null &&
	mkdir -p "$C/data/mon-a" &&
	ceph-mon -c "$C/ceph.conf" --mkfs -i a --monmap "$C/monmap" --keyring "$C/mon.keyring" \
		>>"$C/log/setup.log" 2>&1 ||
		{ echo "peers: ceph-mon --mkfs failed:" >&2; tail -n 20 "$C/log/setup.log" >&2; return 1; }
	ceph-mon -c "$C/ceph.conf" -i a -f >>"$C/log/mon.a.out" 2>&1 &
	pid=$!
	started "$pid"
	wait_until "$START_TIMEOUT" ceph-mon "$C/log/mon.a.log" "$pid" cph -s || return 1

	mkdir -p "$C/data/mgr-x"
	cph auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' \
		-o "$C/data/mgr-x/keyring" >>"$C/log/setup.log" 2>&1 || { echo "peers: ceph auth (mgr) failed" >&2; return 1; }
	ceph-mgr -c "$C/ceph.conf" -i x -f >>"$C/log/mgr.x.out" 2>&1 &
	pid=$!
	started "$pid"
	wait_until "$START_TIMEOUT" ceph-mgr "$C/log/mgr.x.log" "$pid" \
		sh -c "ceph -c '$C/ceph.conf' mgr stat -f json | jq -e .available" || return 1

	for i in 0 1 2 3; do
		uuid=$(uuidgen)
		id=$(cph osd new "$uuid" 2>>"$C/log/setup.log") || { echo "peers: ceph osd new failed" >&2; return 1; }
		mkdir -p "$C/data/osd-$id"
		ceph-osd -c "$C/ceph.conf" -i "$id" --mkfs --mkkey --no-mon-config --osd-uuid "$uuid" >>"$C/log/setup.log" 2>&1 ||
			{ echo "peers: ceph-osd --mkfs (osd.$id) failed:" >&2; tail -n 20 "$C/log/setup.log" "$C/log/osd.$id.log" >&2; return 1; }
		cph auth add "osd.$id" osd 'allow *' mon 'allow profile osd' mgr 'allow profile osd' \
			-i "$C/data/osd-$id/keyring" >>"$C/log/setup.log" 2>&1 || { echo "peers: ceph auth (osd.$id) failed" >&2; return 1; }
		ceph-osd -c "$C/ceph.conf" -i "$id" -f >>"$C/log/osd.$id.out" 2>&1 &
		started $!
	done
	wait_until "$START_TIMEOUT" "4 ceph-osd up" "$C/log/osd.0.log" - \
		sh -c "ceph -c '$C/ceph.conf' osd stat -f json | jq -e '.num_up_osds == 4'" || return 1

	mkdir -p "$C/data/mds-a"
	cph auth get-or-create mds.a mon 'allow profile mds' osd 'allow rwx' mds 'allow *' mgr 'allow profile mds' \
		-o "$C/data/mds-a/keyring" >>"$C/log/setup.log" 2>&1 || { echo "peers: ceph auth (mds) failed" >&2; return 1; }
	ceph-mds -c "$C/ceph.conf" -i a -f >>"$C/log/mds.a.out" 2>&1 &
	pid=$!
	started "$pid"
	{ cph osd pool create cephfs_metadata 32 && cph osd pool create cephfs_data 128 &&
		cph fs new cephfs cephfs_metadata cephfs_data; } >>"$C/log/setup.log" 2>&1 ||
		{ echo "peers: ceph fs new failed:" >&2; tail -n 5 "$C/log/setup.log" >&2; return 1; }
	wait_until "$START_TIMEOUT" "ceph-mds active" "$C/log/mds.a.log" "$pid" \
		sh -c "ceph -c '$C/ceph.conf' mds stat | grep -q 'up:active'" || return 1
	wait_until "$START_TIMEOUT" "ceph PGs active" "$C/log/mon.a.log" - \
		sh -c "ceph -c '$C/ceph.conf' pg stat -f json | jq -e '[.pg_summary.num_pg_by_state[] | select(.name != \"active+clean\")] | length == 0'" ||
		return 1
	ceph_mount
}
CF_PID=
ceph_mount() { # ceph-fuse in the foreground of a background job: its pid is ours
	ceph-fuse -c "$C/ceph.conf" --id admin -f "$C/mnt" >>"$C/log/fuse.out" 2>&1 &
	CF_PID=$!
	started "$CF_PID"
	wait_until "$START_TIMEOUT" ceph-fuse "$C/log/client.admin.log" "$CF_PID" \
		sh -c "grep -q ' $C/mnt fuse.ceph-fuse ' /proc/mounts && stat -f '$C/mnt'" || return 1
	touch "$C/mnt/.probe" && rm -f "$C/mnt/.probe" ||
		{ echo "peers: the ceph-fuse mount does not take writes" >&2; tail -n 20 "$C/log/client.admin.log" >&2; return 1; }
}
ceph_cold() { # a new client: nothing cached in the old one's memory
	umount "$C/mnt" 2>/dev/null || umount -l "$C/mnt"
	[ -n "$CF_PID" ] && stop_pid "$CF_PID"
	ceph_mount
}
ceph_down() {
	[ -d "$C" ] || return 0
	unmount_under "$C"
	return 0    # the daemons are in PIDS, stopped by cleanup
}

# --- setup and teardown ----------------------------------------------------------------
PT_PID=
GD_PID=
cleanup() {
	local i
	page_reporting_restore
	unmount_under "$W"
	[ -f "$W/pfs/cluster.env" ] && "$repo/deploy/pfs-cluster" stop "$W/pfs" >/dev/null 2>&1
	gluster_down
	ceph_down
	# the mounts' clients first, then the servers: newest first
	for (( i = ${#PIDS[@]} - 1; i >= 0; i-- )); do stop_pid "${PIDS[$i]}"; done
	unmount_under "$W"
	[ "${PEERS_KEEP:-0}" = 1 ] || rm -rf "$W"
}
# What an interrupted run left behind (its daemons are gone with their pids;
# only mounts can stay).
[ -f "$W/pfs/cluster.env" ] && "$repo/deploy/pfs-cluster" stop "$W/pfs" >/dev/null 2>&1
unmount_under "$W"
rm -rf "$W"; mkdir -p "$W/ptsrc" "$W/ptmnt"
: >"$W/raw.log"
: >"$W/problems.log"
trap cleanup EXIT
trap 'exit 130' INT TERM
page_reporting_hold

"$PFS_BIN/pfs-passthrough" "$W/ptsrc" "$W/ptmnt" -f &
PT_PID=$!
started "$PT_PID"
wait_until 10 pfs-passthrough /dev/null "$PT_PID" mounted "$W/ptmnt" || exit 1
pfsmnt=$("$repo/deploy/pfs-cluster" start "$W/pfs" --oss 4) || { echo "peers: pfs did not start" >&2; exit 1; }
declare -A dirs=([passthrough]=$W/ptmnt [pfs]=$pfsmnt [gluster]=$G/mnt [ceph]=$C/mnt)
targets="passthrough pfs"
for p in "${peers[@]}"; do
	echo "peers: starting $p" >&2
	if "${p}_up"; then
		targets="$targets $p"
		echo "peers: $p is up at ${dirs[$p]}" >&2
	else
		skipped[$p]="it did not start (the messages above name the step; its logs were under $W/$p)"
		echo "peers: skipping $p" >&2
		"${p}_down"
	fi
done

# --- the workloads (bench/lib.sh, as bench/run.sh) ------------------------------------------------
core_phases="seqwrite seqread randwrite randread create stat unlink"
fio_phases="seqwrite seqread randwrite randread"
declare -A res
# drop: the kernel's caches, and for a peer whose FUSE client keeps data in
# its own memory (ceph-fuse's object cacher, glusterfs's performance
# translators), which drop_caches cannot reach, a fresh client (remount):
# every target reads from its servers.  (pfs's and the passthrough's
# caches are the kernel's.)
drop() {
	settle
	echo 3 > /proc/sys/vm/drop_caches
	case $t in
	gluster | ceph)
		if ! "${t}_cold" 2>>"$W/cold.err"; then
			echo "peers: rep $rep $t: remounting its client failed" >&2
			echo "rep $rep $t: remounting its client (cold caches) failed: $(tail -n 2 "$W/cold.err" | tr '\n' ' ')" >>"$W/problems.log"
		fi
		;;
	esac
}
for rep in $(seq 1 "$REPS"); do
	set -- $targets
	for _ in $(seq 2 "$rep"); do set -- "${@:2}" "$1"; done
	for t in "$@"; do
		workloads "${dirs[$t]}"
		echo "$line" >&2
		echo "$line" >>"$W/raw.log"
	done
done

# --- tables -----------------------------------------------------------------------
declare -A label=([passthrough]="FUSE passthrough" [pfs]="pfs (4 OSS)" [gluster]="GlusterFS (4 bricks)" [ceph]="CephFS (4 OSDs)")
ptargets=${targets#passthrough pfs}   # the peers that ran

printf 'suite\tworkload\tunit' >"$RESDIR/peers-medians.tsv"
for t in $targets; do printf '\t%s' "$t" >>"$RESDIR/peers-medians.tsv"; done
echo >>"$RESDIR/peers-medians.tsv"
printf 'suite\trep\ttarget\tworkload\tvalue\n' >"$RESDIR/peers-raw.tsv"
table() { # table SUITE PREFIX PHASES UNIT-FUNCTION
	local suite=$1 prefix=$2 phases=$3 unitfn=$4 p unit t rep vals best bt
	local -A med
	printf '| workload | unit |'
	for t in $targets; do printf ' %s |' "${label[$t]}"; done
	for t in ${targets#passthrough}; do printf ' %s / passthrough |' "$t"; done
	[ -n "$ptargets" ] && printf ' pfs / best peer |'
	echo
	printf '|---|---|'
	for t in $targets ${targets#passthrough}; do printf -- '---:|'; done
	[ -n "$ptargets" ] && printf -- '---:|'
	echo
	for p in $phases; do
		unit=$($unitfn "$p")
		printf '%s\t%s\t%s' "$suite" "$p" "$unit" >>"$RESDIR/peers-medians.tsv"
		printf '| %s | %s |' "$p" "$unit"
		for t in $targets; do
			vals=""
			for rep in $(seq 1 "$REPS"); do
				vals="$vals ${res[$t,$prefix$p,$rep]:--}"
				printf '%s\t%s\t%s\t%s\t%s\n' "$suite" "$rep" "$t" "$p" "${res[$t,$prefix$p,$rep]:--}" >>"$RESDIR/peers-raw.tsv"
			done
			med[$t]=$(median $vals)
			printf '\t%s' "${med[$t]}" >>"$RESDIR/peers-medians.tsv"
			printf ' %s |' "${med[$t]}"
		done
		echo >>"$RESDIR/peers-medians.tsv"
		for t in ${targets#passthrough}; do printf ' %s |' "$(ratio "${med[$t]}" "${med[passthrough]}")"; done
		if [ -n "$ptargets" ]; then
			best=-; bt=
			for t in $ptargets; do
				[ "${med[$t]}" = - ] && continue
				if [ "$best" = - ] || awk -v a="${med[$t]}" -v b="$best" 'BEGIN {exit !(a > b)}'; then
					best=${med[$t]}; bt=$t
				fi
			done
			printf ' %s |' "$(ratio "${med[pfs]}" "$best")${bt:+ ($bt)}"
		fi
		echo
	done
}

t_end=$(date +%s)
uptime_end=$(uptime)
{
echo "## pfs against CephFS and GlusterFS (issue 11) — $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"\
" $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, kernel $(uname -r), Debian $(cat /etc/debian_version),"\
" one disk under $W: $(df -h "$W" | awk 'NR==2 {print $1}') ($(findmnt -no FSTYPE -T "$W"))."
echo "Versions: pfs ${PFS_REV:-$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo "?")}"\
"$( [[ " $targets " == *" gluster "* ]] && echo ", GlusterFS $(glusterfs --version | awk 'NR==1 {print $2}')")"\
"$( [[ " $targets " == *" ceph "* ]] && echo ", Ceph $(ceph --version | awk '{print $3}')")"\
"$( [ "$FIO" = 1 ] && echo ", $(fio --version)")."
echo "Load: \`uptime\` at the start: \`${uptime_begin# }\`; at the end: \`${uptime_end# }\`."
echo "Host memory: $PR_NOTE; $(page_reporting_mib) MiB handed back to the host during the run."
echo "Command: \`make bench-peers\` (bench/peers.sh; PEERS=$PEERS REPS=$REPS FIO=$FIO). Run time $(( (t_end - t_begin) / 60 )) min $(( (t_end - t_begin) % 60 )) s, set-up included."
echo "Medians of $REPS runs, the targets interleaved (order rotated per repetition); ratios to the FUSE passthrough; \"pfs / best peer\" > 1 means pfs is ahead of every peer."
for t in "${!skipped[@]}"; do echo; echo "**$t was not measured**: ${skipped[$t]}."; done
echo
echo "### pfs-bench"
echo
echo "4 streams x $SEQ_SIZE sequential (1 MiB, fsync at the end), $RAND_OPS random 4 KiB ops"\
" on a $RAND_SIZE file with 4 threads, $MD_FILES files x 4 threads (cold caches for stat and unlink)."
echo
table core "" "$core_phases" core_unit
if [ "$FIO" = 1 ]; then
	echo
	echo "### fio"
	echo
	echo "numjobs=$FIO_JOBS (one file each), ioengine=psync, iodepth=1, direct=0, $FIO_SIZE per job,"\
" runtime bound ${FIO_RUNTIME} s per phase, end_fsync=1 on writes; seq = 1 MiB, rand = 4 KiB; caches dropped before the reads."
	echo
	table fio fio- "$fio_phases" fio_unit
fi
echo
if [ -s "$W/problems.log" ]; then
	echo "Problems during the run (their values are missing, \"-\"; medians of the rest):"
	echo
	sed 's/^/- /' "$W/problems.log"
	echo
fi
echo "Raw values of each repetition:"
echo
echo '```'
cat "$W/raw.log"
echo '```'
} >"$RESDIR/peers.md"
cat "$RESDIR/peers.md"
echo "peers: done in $(( $(date +%s) - t_begin )) s; results in $RESDIR" >&2
