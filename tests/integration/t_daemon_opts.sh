#!/bin/bash
# What an administrator meets first, daemon by daemon:
#  - --version of pfs-mds, pfs-oss, mount.pfs and pfsadmin: one version,
#    common/version.h's;
#  - log=file:PATH: dated lines (ISO 8601, UTC, milliseconds, program[pid])
#    in the file and none on stderr; after the file is moved, SIGHUP makes
#    a new one and the daemon keeps running (MDS, OSS, and a mount.pfs that
#    stays mounted); the default stderr destination is dated too;
#  - options checked: out of range, empty values (-o jobid_var=, -o
#    jobid_var), unknown keys on the command line and in a file; old keys
#    (heartbeat_timeout in seconds, log_file) still work with a warning;
#  - mount.pfs exit codes as mount(8) wants: 1 for a bad invocation, 32 for
#    a mount that fails;
#  - pfs-oss without advertise_host registers with the address it reaches
#    the MDS on: 127.0.0.1 for an MDS on loopback, and inside a network
#    namespace this test makes (a dummy interface; no traffic leaves it) the
#    namespace's own address; an explicit advertise_host still wins.
# timeout: 90
. "$(dirname "$0")/lib.sh"

PIDS=""
MOUNTED=""
stop_all() {
	local p
	for m in $MOUNTED; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	PIDS=""
	# Daemons stopped: a sanitizer build has written its reports by now.
	if grep -l "ERROR: AddressSanitizer\|runtime error:\|ERROR: LeakSanitizer" \
		"$T"/*.err "$T"/*.log* >/dev/null 2>&1; then
		grep -h -A15 "ERROR: AddressSanitizer\|runtime error:\|ERROR: LeakSanitizer" \
			"$T"/*.err "$T"/*.log* | head -60 >&2
		return 1
	fi
}
NS=""; NSPIDS=""
trap 'rc=$?; for p in $NSPIDS; do kill $p 2>/dev/null; done; [ -n "$NS" ] && ip netns del "$NS" 2>/dev/null; stop_all || rc=1; (exit $rc); cleanup' EXIT

B=$PFS_BIN
# Keys, as a real cluster has them (auth=on is the default): a master key
# and keys derived from it, 0600 in a 0700 directory; pfsadmin finds the
# admin key in $PFS_KEY.
K=$T/keys
mkdir -m 700 "$K" || fail "mkdir $K"
"$B/pfsadmin" key gen --role mds "$K/mds.key" >/dev/null || fail "pfsadmin key gen --role mds"
for r in oss client admin; do
	"$B/pfsadmin" key gen --role $r --master "$K/mds.key" "$K/$r.key" >/dev/null ||
		fail "pfsadmin key gen --role $r"
done
export PFS_KEY=$K/admin.key
MK=key=$K/client.key
# (The MDS the mount uses runs with root_squash=off, as deploy/pfs-cluster's
# does: one machine is one trust domain, and root writes to the mount.)
# A dated line of PROG: 2026-11-26T03:05:22.123Z pfs-mds[123] notice: ...
dated() { echo "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z $1\[$2\] [a-z]+: "; }
wait_for() { # wait_for SECONDS CMD...: until CMD succeeds
	local n=$(($1 * 10))
	shift
	while ! "$@" 2>/dev/null; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.1
	done
}

# --- --version ---------------------------------------------------------------
V=$(sed -n 's/^#define PFS_VERSION "\(.*\)"/\1/p' "$REPO/common/version.h")
[ -n "$V" ] || fail "no PFS_VERSION in common/version.h"
for p in pfs-mds pfs-oss mount.pfs pfsadmin; do
	out=$("$B/$p" --version 2>&1) || fail "$p --version exits $?: $out"
	[ "$out" = "$p (pfs) $V" ] || fail "$p --version says '$out', want '$p (pfs) $V'"
done
out=$("$B/pfs-mds" --config=/nonexistent --version) || fail "--version with a bad config"
ok "--version: pfs-mds, pfs-oss, mount.pfs, pfsadmin all say $V"

# --- options refused --------------------------------------------------------------
refused() { # refused STATUS MESSAGE CMD...: CMD exits STATUS saying MESSAGE
	local want=$1 msg=$2 out rc
	shift 2
	# (a daemon that accepts what it should refuse runs: 124 after 10 s)
	out=$(timeout 10 "$@" 2>&1 </dev/null)
	rc=$?
	[ $rc -eq "$want" ] || fail "$* exits $rc, want $want: $out"
	echo "$out" | grep -qF -- "$msg" || fail "$*: no '$msg' in: $out"
}
refused 2 "heartbeat_timeout_ms: 4294968000 is out of range (100..86400000)" \
	"$B/pfs-mds" --db="$T/x" --heartbeat_timeout=4294968
refused 2 "qos_quorum: 0 is out of range (1..100)" "$B/pfs-mds" --db="$T/x" --qos_quorum=0
refused 2 "listen: needs a value" "$B/pfs-mds" --db="$T/x" --listen=
refused 2 "log: unknown destination 'journal'" "$B/pfs-mds" --db="$T/x" --log=journal
refused 2 "want file:PATH with an absolute PATH" "$B/pfs-mds" --db="$T/x" --log=file:rel.log
printf '[mds]\nbogus = 1\n' >"$T/bad.conf"
refused 2 "unknown option 'bogus'" "$B/pfs-mds" --config "$T/bad.conf" --db="$T/x"
refused 2 "io_threads: 0 is out of range (1..1024)" \
	"$B/pfs-oss" --mds=127.0.0.1:1 --osts="$T/o" --io_threads=0
refused 2 "nrs: needs a value" "$B/pfs-oss" --mds=127.0.0.1:1 --osts="$T/o" --nrs=
[ ! -e "$T/x" ] && [ ! -e "$T/o" ] || fail "a refused daemon created its directories"
ok "daemons refuse out-of-range numbers, empty values, bad log destinations, unknown keys (exit 2)"

# --- MDS on every interface, logging to a file --------------------------------
"$B/pfs-mds" --auth_key="$K/mds.key" --root_squash=off --db="$T/db" --listen=0.0.0.0:0 --port_file="$T/mds.port" \
	--log=file:"$T/mds.log" --heartbeat_timeout=5 </dev/null >"$T/mds.out" 2>"$T/mds.err" &
MPID=$!
PIDS="$PIDS $MPID"
wait_for 10 test -s "$T/mds.port" || fail "pfs-mds did not start: $(cat "$T/mds.err")"
MPORT=$(sed -n 's/^port=//p' "$T/mds.port")
MDSA=127.0.0.1:$MPORT
grep -qE "$(dated pfs-mds "$MPID")option 'heartbeat_timeout' is deprecated \(in seconds\): use heartbeat_timeout_ms=5000" \
	"$T/mds.err" || fail "no dated deprecation warning on stderr: $(cat "$T/mds.err")"
grep -qE "$(dated pfs-mds "$MPID")pfs $V serving $T/db" "$T/mds.log" ||
	fail "no dated start line in the log file: $(cat "$T/mds.log")"
grep -q "serving" "$T/mds.err" && fail "log=file: lines also went to stderr"
today=$(date -u +%F)
grep -q "^$today\|^$(date -u -d '1 minute ago' +%F)" "$T/mds.log" || fail "log date is not today (UTC): $(head -1 "$T/mds.log")"
mv "$T/mds.log" "$T/mds.log.1"
kill -HUP "$MPID"
wait_for 10 grep -q "SIGHUP: log file $T/mds.log reopened" "$T/mds.log" ||
	fail "no new log file after SIGHUP: $(ls "$T")"
kill -0 "$MPID" || fail "pfs-mds died on SIGHUP"
grep -q reopened "$T/mds.log.1" && fail "the moved file got the line after SIGHUP"
ok "pfs-mds log=file: dated lines ($(head -1 "$T/mds.log.1" | cut -c1-40)...), reopened on SIGHUP"

# --- OSS without advertise_host ------------------------------------------------------
"$B/pfs-oss" --auth_key="$K/oss.key" --name=auto --osts="$T/ost-auto" --mds="$MDSA" --port_file="$T/auto.ports" \
	--log=file:"$T/oss.log" --heartbeat_ms=200 </dev/null >"$T/oss.out" 2>"$T/oss.err" &
APID=$!
PIDS="$PIDS $APID"
"$B/pfs-oss" --auth_key="$K/oss.key" --name=fixed --osts="$T/ost-fixed" --mds="$MDSA" --advertise_host=127.0.0.1 \
	--heartbeat_ms=200 </dev/null >"$T/fixed.out" 2>"$T/fixed.err" &
FPID=$!
PIDS="$PIDS $FPID"
hosts() { "$B/pfsadmin" --mds "$MDSA" --json ost list | jq -r '.osts[] | select(.state == "up") | "\(.oss) \(.host)"' | sort; }
two_up() { [ "$(hosts | wc -l)" -eq 2 ]; }
wait_for 20 two_up || fail "OSTs did not come up: $(hosts) / $(cat "$T/oss.err" "$T/fixed.err")"
[ "$(hosts)" = "auto 127.0.0.1
fixed 127.0.0.1" ] || [ "$(hosts)" = "fixed 127.0.0.1
auto 127.0.0.1" ] || fail "registered hosts: $(hosts | tr '\n' ' '), want auto and fixed on 127.0.0.1"
grep -qE "$(dated pfs-oss "$APID")advertise_host not set: advertising 127.0.0.1, the local address of a connection to the MDS" \
	"$T/oss.log" || fail "the OSS did not log its choice: $(cat "$T/oss.log")"
grep -qE "$(dated pfs-oss "$FPID")pfs $V oss fixed: .*advertised as 127.0.0.1" "$T/fixed.err" ||
	fail "stderr lines are not dated: $(cat "$T/fixed.err")"
grep -q "advertise_host not set" "$T/fixed.err" && fail "an explicit advertise_host was replaced"
mv "$T/oss.log" "$T/oss.log.1"
kill -HUP "$APID" "$FPID"
wait_for 10 grep -q "SIGHUP: log file $T/oss.log reopened" "$T/oss.log" || fail "OSS did not reopen its log"
kill -0 "$APID" && kill -0 "$FPID" || fail "an OSS died on SIGHUP"
ok "pfs-oss without advertise_host registered as 127.0.0.1 (the address it reaches the MDS on); explicit 127.0.0.1 kept; OSS log reopened"

# --- advertise_host derived from a non-loopback address --------------------------------
# A private network namespace with a veth pair (both ends inside): the MDS
# listens on its
# address, the OSS (no advertise_host, listening everywhere) must advertise
# that address.  All traffic stays inside the namespace.
NS=pfsopts$$
NSIP=10.254.77.1
NSPIDS=""
ns_cleanup() {
	local p
	for p in $NSPIDS; do kill "$p" 2>/dev/null; done
	for p in $NSPIDS; do wait "$p" 2>/dev/null; done
	NSPIDS=""
	ip netns del "$NS" 2>/dev/null
}
ip netns add "$NS" || fail "ip netns add"
ip -n "$NS" link set lo up
ip -n "$NS" link add d0 type veth peer name d1 || { ns_cleanup; fail "no veth pair"; }
ip -n "$NS" addr add "$NSIP/24" dev d0
ip -n "$NS" link set d0 up
ip -n "$NS" link set d1 up
ip netns exec "$NS" "$B/pfs-mds" --auth_key="$K/mds.key" --db="$T/nsdb" --listen="$NSIP:0" --port_file="$T/nsmds.port" \
	</dev/null >"$T/nsmds.out" 2>"$T/nsmds.err" &
NSPIDS="$NSPIDS $!"
wait_for 10 test -s "$T/nsmds.port" || { ns_cleanup; fail "pfs-mds in $NS: $(cat "$T/nsmds.err")"; }
NSMDS=$NSIP:$(sed -n 's/^port=//p' "$T/nsmds.port")
ip netns exec "$NS" "$B/pfs-oss" --auth_key="$K/oss.key" --name=nsauto --osts="$T/ost-ns" --mds="$NSMDS" \
	--heartbeat_ms=200 </dev/null >"$T/nsoss.out" 2>"$T/nsoss.err" &
NSPIDS="$NSPIDS $!"
nshost() { ip netns exec "$NS" "$B/pfsadmin" --mds "$NSMDS" --json ost list 2>/dev/null |
	jq -r '.osts[] | select(.state == "up") | .host'; }
ns_up() { [ -n "$(nshost)" ]; }
wait_for 20 ns_up
h=$(nshost)
ns_cleanup
[ "$h" = "$NSIP" ] || fail "OSS in $NS advertised '$h', want $NSIP: $(cat "$T/nsoss.err")"
ok "pfs-oss without advertise_host, MDS at $NSIP in a private namespace: advertised $NSIP"

# --- mount.pfs -----------------------------------------------------------------------------
mkdir -p "$T/mnt"
refused 1 "unknown option 'nosuch'" "$B/mount.pfs" "$MDSA" "$T/mnt" -o nosuch=1
refused 1 "jobid_var: needs a value" "$B/mount.pfs" "$MDSA" "$T/mnt" -o jobid_var=
refused 1 "jobid_var: needs a value (jobid_var=...)" "$B/mount.pfs" "$MDSA" "$T/mnt" -o jobid_var
refused 1 "max_conns: 0 is out of range" "$B/mount.pfs" "$MDSA" "$T/mnt" -o max_conns=0
refused 1 "need HOST:PORT and MOUNTPOINT" "$B/mount.pfs" "$MDSA"
refused 1 "bad server address" "$B/mount.pfs" nohost "$T/mnt"
refused 1 "log=file:" "$B/mount.pfs" "$MDSA" "$T/mnt" -o log=file:/nonexistent/dir/c.log
refused 32 "Connection refused" "$B/mount.pfs" 127.0.0.1:1 "$T/mnt" -o "$MK,retry_ms=0,timeout_ms=2000"
refused 32 "cannot mount on $T/nodir" "$B/mount.pfs" "$MDSA" "$T/nodir" -o "$MK"
mountpoint -q "$T/mnt" && fail "a refused mount.pfs mounted"
ok "mount.pfs: bad invocations exit 1 (-o jobid_var= refused), failing mounts exit 32"

# The old log_file= and attr_timeout= still work (with warnings); the log
# is dated and reopened on SIGHUP while the mount keeps serving.
out=$("$B/mount.pfs" "$MDSA" "$T/mnt" -o "$MK,log_file=$T/client.log,attr_timeout=2" 2>&1) ||
	fail "mount.pfs failed: $out"
MOUNTED="$T/mnt"
mountpoint -q "$T/mnt" || fail "not mounted"
echo "$out" | grep -q "option 'log_file' is deprecated.*use log=file:$T/client.log" ||
	fail "no warning for log_file: $out"
echo "$out" | grep -q "use attr_timeout_s=2" || fail "no warning for attr_timeout: $out"
CPID=$(pgrep -f -- "mount.pfs $MDSA $T/mnt") || fail "no mount.pfs process"
# (logged before it went to the background: the parent's pid)
grep -qE "$(dated mount.pfs '[0-9]+')pfs $V: mounted $MDSA on $T/mnt" "$T/client.log" ||
	fail "client log: $(cat "$T/client.log")"
mv "$T/client.log" "$T/client.log.1"
kill -HUP "$CPID"
wait_for 10 grep -qE "$(dated mount.pfs "$CPID")SIGHUP: log file reopened" "$T/client.log" ||
	fail "mount.pfs did not reopen its log"
echo hello >"$T/mnt/f" || fail "write after SIGHUP"
[ "$(cat "$T/mnt/f")" = hello ] || fail "read after SIGHUP"
mountpoint -q "$T/mnt" || fail "SIGHUP unmounted"
umount "$T/mnt" || fail "umount"
MOUNTED=""
wait_for 10 sh -c "! kill -0 $CPID" || fail "mount.pfs still runs after umount"
grep -qE "$(dated mount.pfs "$CPID")unmounting $T/mnt" "$T/client.log" || fail "no unmount line in the new log"
ok "mount.pfs log_file= (deprecated) logs dated lines, reopens on SIGHUP and stays mounted"
