# lib.sh — shared setup for integration tests (sourced by each t_*.sh).
#
# Gives each test its own temporary directory and its own local cluster
# (ports picked at run time), and tears everything down on every exit path:
# unmount, stop daemons, fail the test if a daemon log shows a sanitizer
# report, remove the directory.
#   start_cluster [--oss N]   -> $MNT, $MDS, $T set
#   admin ARGS...             -> pfsadmin against this cluster
#   fail MSG / ok MSG / check CMD...
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
: "${PFS_BIN:=$REPO/build/bin}"
export PFS_BIN
TOOLS=${PFS_TOOLS:-$(dirname "$PFS_BIN")/tests/tools}
T=$(mktemp -d /tmp/pfs-it.XXXXXX)
CLUSTER=$T/c
MNT=
MDS=
_failed=0

cleanup() {
	local rc=$?
	if [ -f "$CLUSTER/cluster.env" ]; then
		"$REPO/deploy/pfs-cluster" stop "$CLUSTER" >/dev/null 2>&1 || true
		if grep -l "ERROR: AddressSanitizer\|runtime error:\|ERROR: LeakSanitizer" \
			"$CLUSTER"/*.log >/dev/null 2>&1; then
			echo "sanitizer report in daemon logs:" >&2
			grep -h -A15 "ERROR: AddressSanitizer\|runtime error:\|ERROR: LeakSanitizer" \
				"$CLUSTER"/*.log | head -60 >&2
			rc=1
		fi
		if [ $rc -ne 0 ] || [ $_failed -ne 0 ]; then
			for f in "$CLUSTER"/*.log; do
				echo "--- tail of $f" >&2
				tail -n 15 "$f" >&2
			done
		fi
	fi
	# A mount left by a crashed test must not survive it.
	mountpoint -q "$CLUSTER/mnt" 2>/dev/null && umount -l "$CLUSTER/mnt" 2>/dev/null
	rm -rf "$T"
	[ $_failed -ne 0 ] && rc=1
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL: $*" >&2; _failed=1; exit 1; }
ok() { echo "ok: $*"; }
check() { "$@" || fail "$*"; }

start_cluster() {
	MNT=$("$REPO/deploy/pfs-cluster" start "$CLUSTER" "$@") || fail "cluster did not start"
	# shellcheck disable=SC1091
	. "$CLUSTER/cluster.env"
	# The cluster's admin key (pfs-cluster made it): every pfsadmin and
	# probe tool of the test finds it in $PFS_KEY.
	[ -n "${PFS_KEY:-}" ] && export PFS_KEY
}

admin() {
	if [ "${PFS_AUTH:-on}" = off ]; then "$PFS_BIN/pfsadmin" --no-auth --mds "$MDS" "$@"
	else "$PFS_BIN/pfsadmin" --mds "$MDS" "$@"; fi
}
