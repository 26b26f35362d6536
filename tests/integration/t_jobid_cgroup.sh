#!/bin/bash
# A job id users cannot forge (mount.pfs jobid_source=auto, the default): a
# process in a cgroup named like Slurm's (cgroup v1 pids hierarchy,
# slurm_<tag>/uid_0/job_<ID>/step_0, as slurmd's proctrack/cgroup makes it)
# that sets SLURM_JOB_ID=999 in its environment is charged to job <ID> in
# `pfsadmin jobstats`, not to 999; a process outside any Slurm cgroup with
# the same environment is charged to 999 (the environment still counts
# where no cgroup says otherwise).  Needs root and a cgroup v1 pids (or
# blkio) hierarchy: otherwise prints SKIP and passes.
# timeout: 90
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || fail "no jq (deploy/install-deps.sh installs it)"
CGROOT=
for c in pids blkio; do
	d=/sys/fs/cgroup/$c
	if [ "$(id -u)" = 0 ] && [ -w "$d/cgroup.procs" ] && [ -d "$d" ]; then
		CGROOT=$d
		break
	fi
done
if [ -z "$CGROOT" ]; then
	echo "SKIP: no writable cgroup v1 pids or blkio hierarchy (root needed)"
	exit 0
fi
JOB=$((700000 + $$ % 100000))
# A name of our own under Slurm's multiple-slurmd form, never a real tree.
CGTOP=$CGROOT/slurm_pfsit$$
CG=$CGTOP/uid_0/job_$JOB/step_0
cg_cleanup() {
	# the writers have exited; leave no directory behind
	rmdir "$CG" "$CGTOP/uid_0/job_$JOB" "$CGTOP/uid_0" "$CGTOP" 2>/dev/null || true
}
trap 'rc=$?; cg_cleanup; (exit $rc); cleanup' EXIT
mkdir -p "$CG" || fail "cannot create $CG"

start_cluster --oss 1

# In the cgroup, claiming job 999: 1 MiB.
SLURM_JOB_ID=999 sh -c 'echo $$ >"$1/cgroup.procs" && exec dd if=/dev/zero of="$2" bs=64k count=16 conv=fsync status=none' \
	sh "$CG" "$MNT/in_cgroup" || fail "writer in the cgroup failed"
grep -q "job_$JOB" /proc/self/cgroup && fail "the test shell itself landed in the cgroup"
# Outside, claiming job 999: 256 KiB.
SLURM_JOB_ID=999 dd if=/dev/zero of="$MNT/outside" bs=64k count=4 conv=fsync status=none ||
	fail "writer outside failed"

wb() { jq --arg j "$1" '[.jobs[] | select(.job == $j) | .osts[].write_bytes] | add // 0' "$T/js.json"; }
admin --json jobstats >"$T/js.json" 2>"$T/js.err" || fail "jobstats: $(cat "$T/js.err")"
cg_bytes=$(wb "$JOB")
env_bytes=$(wb 999)
[ "$cg_bytes" -ge 1048576 ] ||
	fail "job $JOB (cgroup) wrote $cg_bytes bytes, want >= 1 MiB; jobs: $(jq -c '[.jobs[].job]' "$T/js.json")"
ok "a process in Slurm job $JOB's cgroup is charged to $JOB ($cg_bytes bytes) whatever SLURM_JOB_ID says"
[ "$env_bytes" -ge 262144 ] && [ "$env_bytes" -lt 1048576 ] ||
	fail "job 999 wrote $env_bytes bytes, want 256 KiB (only the process outside the cgroup)"
ok "outside a Slurm cgroup the environment names the job (999: $env_bytes bytes)"
