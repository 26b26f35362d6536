#!/bin/sh
# sacct2trace.sh — turn a Slurm accounting export and Lustre job_stats into a
# pfs-sim job trace (bench/sim/README.md, "Trace replay"), so a site can
# replay its own history: pfs-sim run CLUSTER.json --trace trace.csv ...
#
# usage: sacct2trace.sh SACCT.txt [JOBSTATS.txt] > trace.csv
#
# SACCT.txt, from the Slurm database (times as epoch seconds):
#   SLURM_TIME_FORMAT=%s sacct -a -X -P -n -S 2026-01-01 -E 2026-01-31 \
#       --format=JobIDRaw,Submit,NNodes,ElapsedRaw,JobName > SACCT.txt
# (Submit replays arrivals through pfs-sim's scheduler; put Start there to
# replay the start times instead.)  Jobs that never started (ElapsedRaw 0)
# are left out.
#
# JOBSTATS.txt, from every OSS while jobstats are on with jobid_var=
# SLURM_JOB_ID (lctl conf_param FS.sys.jobid_var=SLURM_JOB_ID), collected
# before Lustre expires them (job_cleanup_interval, 600 s by default):
#   lctl get_param obdfilter.*.job_stats >> JOBSTATS.txt
# Each job's OST set is the OSTs where it read or wrote; io_mb the bytes
# read and written (MB = 10^6 bytes).  Without JOBSTATS.txt, or for a job
# job_stats does not know, the job does no I/O on one round-robin OST (it
# still takes its nodes).
#
# Environment: PHASES (default 1) I/O phases per job, bytes split evenly;
# OST_MBPS (default 100) the stand-alone MB/s of one OST, used to take the
# I/O time out of ElapsedRaw: compute_s = max(0, elapsed - io_mb /
# (OSTs x OST_MBPS)) / PHASES.  The job name is the application (characters
# outside [A-Za-z0-9._:+@/-] become '_', 63 at most), so repeated runs of
# one job script share GIFT's coupons.  The cluster's scenario must have at
# least as many nodes as the largest job and OSTs as the highest index.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 SACCT.txt [JOBSTATS.txt] > trace.csv" >&2
	exit 2
fi
sacct=$1
stats=${2:-/dev/null}
phases=${PHASES:-1}
mbps=${OST_MBPS:-100}
for f in "$sacct" "$stats"; do
	[ -r "$f" ] || { echo "$0: cannot read $f" >&2; exit 2; }
done

# Sorted by submit time (the trace must be); numeric job ids as the tie-break.
sort -t'|' -k2,2n -k1,1n "$sacct" | awk -v phases="$phases" -v mbps="$mbps" -v stats="$stats" '
function hex(s,   i, c, v) {
	v = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", tolower(substr(s, i, 1)))
		if (c == 0) return -1
		v = v * 16 + c - 1
	}
	return v
}
function die(msg) { print "sacct2trace: " msg > "/dev/stderr"; bad = 1; exit 2 }
BEGIN {
	if (phases !~ /^[0-9]+$/ || phases < 1) die("PHASES must be an integer >= 1")
	if (mbps !~ /^[0-9.]+$/ || mbps <= 0) die("OST_MBPS must be a number > 0")
	ost = -1
	while ((getline line < stats) > 0) {
		if (line ~ /^obdfilter\..*OST[0-9a-fA-F]+.*job_stats=/) {
			match(line, /OST[0-9a-fA-F]+/)
			ost = hex(substr(line, RSTART + 3, RLENGTH - 3))
		} else if (line ~ /^- job_id:/) {
			job = line; sub(/^- job_id:[ \t]*/, "", job); sub(/[ \t]+$/, "", job)
		} else if (line ~ /^[ \t]*(read|write)_bytes:/ && ost >= 0 && job != "") {
			if (!match(line, /[ ,{]sum:[ \t]*[0-9]+/)) continue
			s = substr(line, RSTART, RLENGTH); sub(/.*sum:[ \t]*/, "", s)
			if (s + 0 <= 0) continue
			if (!((job, ost) in seen)) { seen[job, ost] = 1; osts[job] = osts[job] (osts[job] == "" ? "" : ";") ost; n[job]++ }
			bytes[job] += s
		}
	}
	print "job,submit,app,nodes,osts,phases,io_mb,compute_s"
	FS = "|"
}
{
	if (NF < 5) die("line " NR " of the sorted sacct output: " NF " fields, want JobIDRaw|Submit|NNodes|ElapsedRaw|JobName")
	id = $1; sub_t = $2; nodes = $3; el = $4; name = $5
	if (id !~ /^[A-Za-z0-9._:+@\/-]+$/ || sub_t !~ /^[0-9]+$/ || nodes !~ /^[0-9]+$/ || el !~ /^[0-9]+$/)
		die("job " id ": bad JobIDRaw, Submit (epoch seconds: SLURM_TIME_FORMAT=%s?), NNodes or ElapsedRaw")
	if (el == 0 || nodes == 0) { skipped++; next }
	if (t0 == "") t0 = sub_t
	gsub(/[^A-Za-z0-9._:+@\/-]/, "_", name)
	name = substr(name, 1, 63)
	if (id in bytes) { o = osts[id]; mb = bytes[id] / 1e6; k = n[id] } else { o = "rr:1"; mb = 0; k = 1 }
	c = (el - mb / (k * mbps)) / phases
	if (c < 0) c = 0
	printf "%s,%d,%s,%d,%s,%d,%.6g,%.6g\n", id, sub_t - t0, name, nodes, o, phases, mb, c
	out++
}
END {
	if (bad) exit 2
	printf "sacct2trace: %d jobs, %d skipped (never ran)\n", out, skipped > "/dev/stderr"
}'
