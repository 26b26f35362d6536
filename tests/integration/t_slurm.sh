#!/bin/bash
# Real Slurm drives deploy/slurm/prolog and epilog against a real pfs cluster.
#
# Debian's slurmctld, slurmd, slurm-client and munge (installed here with
# apt-get when missing; the test prints "SKIP: ..." and passes only when apt
# cannot install them) run on loopback with everything under $T: a fresh
# munge key and a private munged socket, a minimal slurm.conf (one node,
# proctrack/linuxproc, task/none, no accounting, state and spool dirs in $T,
# free ports), Prolog/Epilog = the deploy/slurm hooks with PrologFlags=Alloc.
# A pfs cluster (deploy/pfs-cluster, 2 OSS, its mount tags I/O with
# SLURM_JOB_ID by default) is mounted on the same machine.  One srun job and
# one sbatch job each write (and read back) a file on the mount.  Then:
#   - each job's SLURM_JOB_ID has OSS rows in `pfsadmin jobstats --json`
#     carrying at least the bytes it wrote;
#   - the prolog registered each job with its node count and owner
#     (`pfsadmin job show ID --json`: registered, nodes 1, uid 0), before
#     the job's first I/O (PrologFlags=Alloc);
#   - the epilog ended it (state "ended").
# Every daemon and job process is stopped and $T removed on every exit path.
#
# slurmd runs its hooks with an environment of Slurm's own variables only
# (SLURM_JOB_ID, SLURM_JOB_NUM_NODES, SLURM_JOB_UID, ...), not slurmd's
# environment, so PFS_MDS cannot be handed to deploy/slurm/prolog by
# exporting it to slurmd.  The hooks' settings are the ones a site would put
# in /etc/pfs/slurm.conf; to keep /etc untouched the test's Prolog= and
# Epilog= are two-line wrappers in $T that export PFS_MDS, PFSADMIN and
# PFS_SLURM_LOG and exec the deploy/slurm scripts unchanged.
# timeout: 240
. "$(dirname "$0")/lib.sh"
t_start=$(date +%s)

# --- Slurm and munge from Debian, when missing --------------------------------
PKGS="slurmctld slurmd slurm-client munge"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing$missing from Debian (apt-get)"
	t_apt=$(date +%s)
	# Keep the packages' system services (munge, slurmctld, slurmd on the
	# default ports) from starting: a policy-rc.d denying every start, as
	# deploy/install-deps.sh does; one already present is left alone.
	policy=/usr/sbin/policy-rc.d ourpolicy=0
	if [ ! -e $policy ]; then
		printf '#!/bin/sh\n# written by pfs tests/integration/t_slurm.sh for one apt-get install\nexit 101\n' >$policy
		chmod 755 $policy
		ourpolicy=1
	fi
	apt_rc=0
	{
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=60 update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=60 install -y -qq \
				--no-install-recommends $missing
	} >"$T/apt.log" 2>&1 || apt_rc=$?
	[ $ourpolicy = 1 ] && rm -f $policy
	if [ $apt_rc -ne 0 ]; then
		echo "SKIP: apt-get could not install$missing (exit $apt_rc):"
		tail -n 5 "$T/apt.log" | sed 's/^/  /'
		exit 0
	fi
	# Nor at boot (no-ops where the links do not exist).
	for s in munge slurmctld slurmd; do
		update-rc.d "$s" disable >/dev/null 2>&1 || true
		deb-systemd-helper disable "$s.service" >/dev/null 2>&1 || true
	done
	echo "installed in $(($(date +%s) - t_apt))s"
fi
for b in munged mungekey slurmctld slurmd srun sbatch sinfo squeue scontrol scancel; do
	command -v "$b" >/dev/null || fail "$b missing although$PKGS are installed"
done
command -v jq >/dev/null || fail "no jq (deploy/install-deps.sh installs it)"

# --- daemons, job processes and cleanup ---------------------------------------
S=$T/slurm
SC=$S/slurm.conf
MUNGE_PID= CTLD_PID= SLURMD_PID=
mkdir -p "$S/munge" "$S/ctld" "$S/spool"
# munged wants execute permission for all on every directory above its socket.
chmod 711 "$T" "$S"
chmod 755 "$S/munge"

# stop_daemon PID: TERM, up to 10 s, KILL; reaped (they are our children).
stop_daemon() {
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}
# Processes started for this test's Slurm: slurmstepd and job processes
# carry SLURM_CONF=$SC in their environment (slurmd and srun pass it on).
our_slurm_pids() {
	local f pid
	for f in /proc/[0-9]*/environ; do
		pid=${f#/proc/}; pid=${pid%/environ}
		[ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] && continue
		{ tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SC" && echo "$pid"
	done
}
on_exit() {
	local rc=$? p
	if [ $rc -ne 0 ] || [ $_failed -ne 0 ]; then
		for f in "$S/slurmctld.log" "$S/slurmd.log" "$S/hooks.log" "$S/sbatch.out" "$S/munged.log"; do
			[ -s "$f" ] && { echo "--- tail of $f" >&2; tail -n 20 "$f" >&2; }
		done
	fi
	if [ -n "$CTLD_PID" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
		SLURM_CONF=$SC timeout 10 scancel --quiet --full --user=root >/dev/null 2>&1
	fi
	stop_daemon "$SLURMD_PID"
	stop_daemon "$CTLD_PID"
	for p in $(our_slurm_pids); do kill -KILL "$p" 2>/dev/null; done
	stop_daemon "$MUNGE_PID"
	(exit $rc)
	cleanup
}
trap on_exit EXIT

free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		case " ${PORTS_TAKEN:-} " in *" $p "*) continue ;; esac
		ss -Htln "sport = :$p" 2>/dev/null | grep -q . && continue
		PORTS_TAKEN="${PORTS_TAKEN:-} $p"
		echo "$p"
		return 0
	done
	return 1
}
# wait_for SECONDS DESC CMD...: until CMD succeeds, polling every 0.2 s.
wait_for() {
	local secs=$1 desc=$2 i
	shift 2
	for i in $(seq 1 $((secs * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	fail "$desc (not within ${secs}s)"
}
sl() { SLURM_CONF=$SC "$@"; }

# --- pfs -------------------------------------------------------------------------
start_cluster --oss 2
ok "pfs cluster up: MDS $MDS, mount $MNT"

# --- munge ---------------------------------------------------------------------
mungekey --create --keyfile="$S/munge/munge.key" >/dev/null 2>&1 || {
	dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 status=none
	chmod 600 "$S/munge/munge.key"
}
MSOCK=$S/munge/munge.socket
munged --foreground --socket="$MSOCK" --key-file="$S/munge/munge.key" \
	--pid-file="$S/munge/munged.pid" --seed-file="$S/munge/munged.seed" \
	--log-file="$S/munged.log" </dev/null >"$S/munged.out" 2>&1 &
MUNGE_PID=$!
wait_for 20 "munged did not start: $(tail -n 3 "$S/munged.out")" test -S "$MSOCK"
munge -S "$MSOCK" -n | unmunge -S "$MSOCK" >/dev/null || fail "munge credential round trip"

# --- Slurm --------------------------------------------------------------------
CTLD_PORT=$(free_port) && SLURMD_PORT=$(free_port) || fail "no free ports"
for h in prolog epilog; do
	cat >"$S/$h" <<EOF
#!/bin/sh
# slurmd gives its hooks no settings of its own: they ride in here.
PFS_MDS='$MDS' PFSADMIN='$PFS_BIN/pfsadmin' PFS_SLURM_LOG='$S/hooks.log' PFS_TIMEOUT=10
PFS_KEY='${PFS_KEY:-}'
export PFS_MDS PFSADMIN PFS_SLURM_LOG PFS_TIMEOUT PFS_KEY
exec '$REPO/deploy/slurm/$h'
EOF
	chmod 755 "$S/$h"
done
cat >"$SC" <<EOF
# minimal one-node Slurm for tests/integration/t_slurm.sh
ClusterName=pfsit
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MSOCK
StateSaveLocation=$S/ctld
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
MailProg=/bin/true
Prolog=$S/prolog
Epilog=$S/epilog
PrologFlags=Alloc
NodeName=pfsnode NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=$(nproc) State=UNKNOWN
PartitionName=pfs Nodes=pfsnode Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF=$SC
slurmctld -D -f "$SC" </dev/null >"$S/slurmctld.out" 2>&1 &
CTLD_PID=$!
wait_for 30 "slurmctld did not answer: $(tail -n 3 "$S/slurmctld.out")" scontrol ping
slurmd -D -f "$SC" -N pfsnode </dev/null >"$S/slurmd.out" 2>&1 &
SLURMD_PID=$!
node_idle() { [ "$(sinfo -h -n pfsnode -o %t)" = idle ]; }
wait_for 30 "node pfsnode not idle: $(sinfo -h -N -o '%N %t %E' 2>&1)" node_idle
ok "slurmctld (port $CTLD_PORT) and slurmd (port $SLURMD_PORT) up, node idle ($(($(date +%s) - t_start))s)"

# --- jobs ---------------------------------------------------------------------
MiB8=$((8 << 20))
timeout 60 srun -N1 -n1 -J pfs-srun -t 2 bash -c "
	set -e
	echo \"\$SLURM_JOB_ID\" >'$S/srun.id'
	'$PFS_BIN/pfsadmin' --mds '$MDS' --json job show \"\$SLURM_JOB_ID\" >'$S/srun.show'
	dd if=/dev/urandom of='$MNT/srun.dat' bs=1M count=8 conv=fsync status=none
	sync; cat '$MNT/srun.dat' >/dev/null
" || fail "srun job failed"
JOB_SRUN=$(cat "$S/srun.id")
[ -n "$JOB_SRUN" ] || fail "srun: no SLURM_JOB_ID"
[ "$(stat -c %s "$MNT/srun.dat")" = $MiB8 ] || fail "srun job's file has the wrong size"
ok "srun job $JOB_SRUN wrote 8 MiB to pfs"

cat >"$S/batch.sh" <<EOF
#!/bin/bash
#SBATCH -N 1
#SBATCH -n 1
#SBATCH -J pfs-sbatch
#SBATCH -t 2
#SBATCH -o $S/sbatch.out
set -e
echo "\$SLURM_JOB_ID" >'$S/sbatch.id'
'$PFS_BIN/pfsadmin' --mds '$MDS' --json job show "\$SLURM_JOB_ID" >'$S/sbatch.show'
dd if=/dev/urandom of='$MNT/sbatch.dat' bs=1M count=8 conv=fsync status=none
cat '$MNT/sbatch.dat' >/dev/null
echo done
EOF
JOB_SBATCH=$(timeout 90 sbatch --parsable --wait "$S/batch.sh") || fail "sbatch job failed: $(cat "$S/sbatch.out" 2>&1)"
JOB_SBATCH=${JOB_SBATCH%%;*}
[ "$JOB_SBATCH" = "$(cat "$S/sbatch.id" 2>/dev/null)" ] ||
	fail "sbatch: job id $JOB_SBATCH, but the job saw '$(cat "$S/sbatch.id" 2>/dev/null)'"
grep -qx done "$S/sbatch.out" || fail "batch script did not finish: $(cat "$S/sbatch.out")"
[ "$(stat -c %s "$MNT/sbatch.dat")" = $MiB8 ] || fail "sbatch job's file has the wrong size"
ok "sbatch job $JOB_SBATCH wrote 8 MiB to pfs"

# --- what pfs saw -------------------------------------------------------------
admin --json jobstats >"$T/jobstats.json" 2>"$T/jobstats.err" || true
jq -e '.oss | length == 2' "$T/jobstats.json" >/dev/null ||
	fail "jobstats: want 2 OSS answers: $(head -c 600 "$T/jobstats.json") $(cat "$T/jobstats.err")"
for j in $JOB_SRUN $JOB_SBATCH; do
	rows=$(jq --arg j "$j" '[.jobs[] | select(.job == $j) | .osts[]] | length' "$T/jobstats.json")
	wb=$(jq --arg j "$j" '[.jobs[] | select(.job == $j) | .osts[].write_bytes] | add // 0' "$T/jobstats.json")
	[ "${rows:-0}" -ge 1 ] || fail "job $j has no OSS rows in jobstats: $(jq -c '[.jobs[].job]' "$T/jobstats.json")"
	[ "${wb:-0}" -ge $MiB8 ] || fail "job $j: OSS rows count $wb bytes written, want >= $MiB8"
	ok "jobstats: job $j on $rows OST rows, $wb bytes written"
done

# PrologFlags=Alloc: the prolog had registered each job before it ran.
for k in srun sbatch; do
	jq -e '.registered == true and .state == "running" and .nodes == 1' "$S/$k.show" >/dev/null ||
		fail "$k job was not registered when it started: $(cat "$S/$k.show")"
done
ok "both jobs were registered and running in pfs before their first I/O"

# job_field ID JQ: a field of `pfsadmin job show ID --json`.
job_field() { admin --json job show "$1" 2>/dev/null | jq -r "$2"; }
job_ended() { [ "$(job_field "$1" .state)" = ended ]; }
for j in $JOB_SRUN $JOB_SBATCH; do
	# The epilog runs after the job's last step has returned to srun/sbatch.
	wait_for 30 "job $j not ended by the epilog: $(admin job show "$j" 2>&1)" job_ended "$j"
	show=$(admin --json job show "$j") || fail "job show $j"
	[ "$(echo "$show" | jq -r .registered)" = true ] || fail "job $j not registered: $show"
	[ "$(echo "$show" | jq -r .nodes)" = 1 ] || fail "job $j: want nodes 1: $show"
	[ "$(echo "$show" | jq -r .uid)" = 0 ] || fail "job $j: want uid 0 (root submitted it): $show"
	grep -q "pfs-slurm-prolog: job $j: pfsadmin --mds $MDS job register $j --nodes 1 --uid 0: job $j registered" \
		"$S/hooks.log" || fail "prolog of job $j: $(grep "job $j" "$S/hooks.log")"
	grep -q "pfs-slurm-epilog: job $j: pfsadmin --mds $MDS job end $j: job $j ended" \
		"$S/hooks.log" || fail "epilog of job $j: $(grep "job $j" "$S/hooks.log")"
	ok "job $j: registered by the prolog with 1 node (uid 0), ended by the epilog"
done
# No hook complained (a missing SLURM_JOB_NUM_NODES, a failed pfsadmin...).
if grep -v ': job [0-9]*: pfsadmin --mds .*: job [0-9]* \(registered\|ended\)' "$S/hooks.log" | grep -q .; then
	fail "hooks logged problems: $(cat "$S/hooks.log")"
fi
ok "hooks logged $(wc -l <"$S/hooks.log") calls, none failed"
echo "t_slurm: $(($(date +%s) - t_start))s"
