#!/bin/bash
# deploy/slurm/prolog and epilog, run as Slurm would (environment only, no
# arguments) under a POSIX sh, with a fake pfsadmin on PATH that records its
# arguments: the register/end command lines, the MDS address from PFS_MDS or
# the config file, fallbacks for the node count, and that the hooks exit 0
# whatever happens (pfsadmin failing, hanging, missing, no job id).  Last,
# the real pfsadmin against a closed port: logged, exit 0.  Needs no Slurm
# and no cluster.
# timeout: 30
. "$(dirname "$0")/lib.sh"

HOOKS=$REPO/deploy/slurm
SH=$(command -v dash || command -v sh)
mkdir -p "$T/bin" "$T/other"
cat >"$T/bin/pfsadmin" <<'EOF'
#!/bin/sh
# fake pfsadmin: one argument per line into $FAKE_LOG, then as told.
for a in "$@"; do printf '%s\n' "$a"; done >>"$FAKE_LOG"
echo "--" >>"$FAKE_LOG"
[ -n "${FAKE_SLEEP:-}" ] && sleep "$FAKE_SLEEP"
echo "${FAKE_OUT:-fake ok}"
exit "${FAKE_RC:-0}"
EOF
chmod +x "$T/bin/pfsadmin"
cp "$T/bin/pfsadmin" "$T/other/admin-elsewhere"
export FAKE_LOG=$T/calls

# hook NAME VAR=VALUE...: run deploy/slurm/NAME with a clean Slurm-like
# environment plus the given variables; stderr to $T/err.  Fails the test on
# a non-zero exit.
hook() {
	local name=$1
	shift
	: >"$FAKE_LOG"
	env -i PATH="$T/bin:/usr/bin:/bin" FAKE_LOG="$FAKE_LOG" \
		PFS_SLURM_CONF="$T/none.conf" "$@" "$SH" "$HOOKS/$name" 2>"$T/err" ||
		fail "$name exited non-zero with $*: $(cat "$T/err")"
}

# expect LINE...: the fake was called once with exactly these arguments.
expect() {
	local want
	want=$(printf '%s\n' "$@" --)
	[ "$(cat "$FAKE_LOG")" = "$want" ] ||
		fail "pfsadmin got [$(tr '\n' ' ' <"$FAKE_LOG")], want [$*]"
}

hook prolog SLURM_JOB_ID=4242 SLURM_JOB_NUM_NODES=8 SLURM_JOB_UID=1000 PFS_MDS=mds1:7000
expect --mds mds1:7000 job register 4242 --nodes 8 --uid 1000
ok "prolog registers the job with its node count and owner"

hook epilog SLURM_JOB_ID=4242 SLURM_JOB_NUM_NODES=8 SLURM_JOB_UID=1000 PFS_MDS=mds1:7000
expect --mds mds1:7000 job end 4242
ok "epilog ends the job"

# Older names: SLURM_JOBID and SLURM_NNODES.
hook prolog SLURM_JOBID=77 SLURM_NNODES=3 SLURM_JOB_UID=5 PFS_MDS=m:1
expect --mds m:1 job register 77 --nodes 3 --uid 5
# No MDS anywhere: pfsadmin finds the mount itself.
hook prolog SLURM_JOB_ID=78 SLURM_JOB_NUM_NODES=2 SLURM_JOB_UID=5
expect job register 78 --nodes 2 --uid 5
# A node count that is not one is left to the default, and said so.
hook prolog SLURM_JOB_ID=79 SLURM_JOB_NUM_NODES=lots SLURM_JOB_UID=5
expect job register 79 --uid 5
grep -q "node count 'lots' is not a number" "$T/err" || fail "no warning: $(cat "$T/err")"
ok "fallbacks for the environment"

# The config file: address and program; the environment wins over it.
cat >"$T/slurm.conf" <<EOF
# pfs Slurm hooks
PFS_MDS = confhost:7100
PFSADMIN="$T/other/admin-elsewhere"
PFS_SLURM_LOG=$T/hooks.log
EOF
hook epilog SLURM_JOB_ID=90 PFS_SLURM_CONF="$T/slurm.conf"
expect --mds confhost:7100 job end 90
grep -q "pfs-slurm-epilog: job 90: pfsadmin --mds confhost:7100 job end 90: fake ok" \
	"$T/hooks.log" || fail "log file: $(cat "$T/hooks.log" 2>&1)"
hook epilog SLURM_JOB_ID=91 PFS_SLURM_CONF="$T/slurm.conf" PFS_MDS=envhost:1
expect --mds envhost:1 job end 91
ok "config file and environment"

# pfsadmin failing: logged, exit 0 (hook() fails the test otherwise).
hook prolog SLURM_JOB_ID=5 SLURM_JOB_NUM_NODES=1 SLURM_JOB_UID=0 PFS_MDS=m:1 FAKE_RC=1 \
	FAKE_OUT="pfsadmin: job register 5 on MDS m:1: Connection refused"
grep -q "failed (exit 1): pfsadmin: job register 5 on MDS m:1: Connection refused" "$T/err" ||
	fail "failure not logged: $(cat "$T/err")"
hook epilog SLURM_JOB_ID=5 PFS_MDS=m:1 FAKE_RC=1 FAKE_OUT="No such file or directory"
grep -q "failed (exit 1)" "$T/err" || fail "epilog failure not logged: $(cat "$T/err")"
ok "a failing pfsadmin is logged and does not fail the job"

# pfsadmin hanging: cut off after PFS_TIMEOUT.
start=$(date +%s)
hook prolog SLURM_JOB_ID=6 PFS_MDS=m:1 FAKE_SLEEP=20 PFS_TIMEOUT=1
[ $(($(date +%s) - start)) -lt 10 ] || fail "prolog waited for a hanging pfsadmin"
grep -q "no answer within 1s" "$T/err" || fail "timeout not logged: $(cat "$T/err")"
ok "a hanging pfsadmin is cut off"

# No pfsadmin, no job id: nothing run, exit 0.
hook prolog SLURM_JOB_ID=7 PFSADMIN=/nonexistent/pfsadmin
[ ! -s "$FAKE_LOG" ] || fail "something ran"
grep -q "pfsadmin not found" "$T/err" || fail "missing pfsadmin not logged: $(cat "$T/err")"
hook epilog PFS_MDS=m:1
[ ! -s "$FAKE_LOG" ] || fail "epilog ran pfsadmin without a job id"
grep -q "no SLURM_JOB_ID" "$T/err" || fail "missing job id not logged"
ok "no pfsadmin or no job id: exit 0"

# The real pfsadmin against a closed port.
if [ -x "$PFS_BIN/pfsadmin" ]; then
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# A key of its own (an admin key, as the hooks need), through PFS_KEY
	# of the hooks' configuration.
	"$PFS_BIN/pfsadmin" key gen --role mds "$T/mds.key" >/dev/null || fail "key gen mds"
	"$PFS_BIN/pfsadmin" key gen --role admin --master "$T/mds.key" "$T/admin.key" >/dev/null ||
		fail "key gen admin"
	printf 'PFS_KEY=%s\n' "$T/admin.key" >"$T/keyed.conf"
	hook prolog SLURM_JOB_ID=8 SLURM_JOB_NUM_NODES=2 SLURM_JOB_UID=1000 \
		PFSADMIN="$PFS_BIN/pfsadmin" PFS_MDS="127.0.0.1:$port" PFS_TIMEOUT=15 \
		PFS_SLURM_CONF="$T/keyed.conf"
	grep -q "failed (exit 1): pfsadmin: job register 8 on MDS 127.0.0.1:$port" "$T/err" ||
		fail "real pfsadmin: $(cat "$T/err")"
	hook epilog SLURM_JOB_ID=8 PFSADMIN="$PFS_BIN/pfsadmin" PFS_MDS="127.0.0.1:$port" \
		PFS_SLURM_CONF="$T/keyed.conf"
	grep -q "failed (exit 1): pfsadmin: job end 8" "$T/err" || fail "real pfsadmin: $(cat "$T/err")"
	ok "real pfsadmin, MDS down: logged, exit 0"
else
	fail "no pfsadmin in $PFS_BIN (build first)"
fi
