#!/bin/bash
# Bad QoS input.
#   pfsadmin: TBF rules with unknown keys, negative, absurd or malformed
#   rates, rate and rpcs together, empty job lists; unknown policies, bad
#   or unknown policy parameters; bad job registrations — each exits
#   non-zero with an error on stderr that says what was refused, and
#   changes nothing (rules listed, policy and parameters in force).  Rule
#   errors must name the offending word, as qos/tbf_rule.h promises; the
#   MDS answers a refused policy change with -EINVAL only (proto.h), so
#   there the kind of error ("unknown policy or parameter", "out of range")
#   is enough.
#   OSS control port: malformed QOS_SET / NRS_RULE / QOS_STATS frames each
#   get an error reply (qos_ctl_probe), random frames do not kill it
#   (frame_spray); meanwhile a throttled job has requests queued on that
#   OSS, and every one of them completes, data intact.
# Every check runs; the failures are listed at the end.
# timeout: 120
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qos_lib.sh"
for t in qos_ctl_probe frame_spray; do
	[ -x "$TOOLS/$t" ] || fail "$TOOLS/$t missing"
done

start_cluster --oss 1 --mds-opt qos_policy=gift --mds-opt qos_param=B_thres=0.3
problems=0
problem() { echo "PROBLEM: $*"; problems=$((problems + 1)); }

# refused WHAT WORD CMD...: CMD must exit non-zero with stderr naming WORD
# (a regular expression, grep -E -i).
refused() {
	local what=$1 word=$2 rc
	shift 2
	"$@" >"$T/out" 2>"$T/err"; rc=$?
	if [ $rc = 0 ]; then
		problem "$what: accepted (exit 0)"
	elif [ ! -s "$T/err" ]; then
		problem "$what: exit $rc without a message"
	elif ! grep -E -q -i -- "$word" "$T/err"; then
		problem "$what: exit $rc, but the message does not name /$word/: $(tr '\n' ' ' <"$T/err")"
	else
		echo "ok: $what: exit $rc: $(head -n 1 "$T/err")"
	fi
}

# ---- TBF rules ----
refused "unknown key" "rat" admin nrs tbf rule start bad 'jobid={x} rat=10MB/s'
refused "negative rate" "-10MB/s|negative" admin nrs tbf rule start bad 'jobid={x} rate=-10MB/s'
refused "absurd rate" "1e15|absurd|too large|above" admin nrs tbf rule start bad 'jobid={x} rate=1e15'
refused "malformed rate" "abc" admin nrs tbf rule start bad 'jobid={x} rate=abc'
refused "NaN rate" "nan" admin nrs tbf rule start bad 'jobid={x} rate=NaN'
refused "no rate" "rate|rpcs" admin nrs tbf rule start bad 'jobid={x}'
refused "rate and rpcs" "rate|rpcs" admin nrs tbf rule start bad 'jobid={x} rate=1MB/s rpcs=5'
refused "empty job list" "jobid|empty" admin nrs tbf rule start bad 'jobid={} rate=1MB/s'
refused "negative depth" "depth|-1" admin nrs tbf rule start bad 'jobid={x} rate=1MB/s depth=-1'
refused "change of a rule that does not exist" "nosuch|no rule" admin nrs tbf rule change nosuch 'rate=1MB/s'
refused "stop of a rule that does not exist" "nosuch|no rule" admin nrs tbf rule stop nosuch
n=$(admin --json nrs tbf rule list | jq '[.oss[].rules[]] | length')
[ "$n" = 0 ] || problem "refused rules left $n rule(s) behind: $(admin --json nrs tbf rule list | jq -c '[.oss[].rules[]]')"

# ---- policies and parameters: nothing changes ----
refused "unknown policy" "nosuch|unknown policy" admin qos policy set nosuch
refused "B_thres below 0" "B_thres|out of range" admin qos policy set gift B_thres=-1
refused "B_thres above 1" "B_thres|out of range" admin qos policy set gift B_thres=2
refused "unknown parameter" "nosuchkey|unknown (policy or )?parameter" admin qos policy set gift nosuchkey=1
refused "parameter not a number" "B_thres|number" admin qos policy set gift B_thres=abc
refused "parameter without a value" "B_thres|KEY=VALUE" admin qos policy set gift B_thres
refused "parameter of another policy" "tau|unknown (policy or )?parameter" admin qos policy set static tau=0.5
pol=$(admin --json qos show | jq -c '[.policy, .params.B_thres]')
[ "$pol" = '["gift",0.3]' ] || problem "refused policy changes changed the policy: $pol"
refused "job with 0 nodes" "nodes" admin job register j --nodes 0
refused "job with negative priority" "priority" admin job register j --priority -2
refused "job with negative limit" "limit" admin job register j --limit -5MB/s
[ "$(admin --json job list | jq '[.jobs[] | select(.job == "j")] | length')" = 0 ] ||
	problem "a refused registration registered job j"

# ---- OSS control port, with a throttled job's requests queued ----
admin nrs tbf rule start slow 'jobid={slow} rate=4MB/s' >/dev/null || fail "rule start slow"
mkdir -p "$MNT/slow"
load_bg slow write "$MNT/slow" --streams 8 --seconds 12 --direct --size 2M >"$T/slow"
slow_pid=$LOAD_PID
sleep 2
q0=$(admin --json jobstats --job slow | jq '.jobs[0].osts[0].queued')
echo "slow job: $q0 requests queued on the OSS before the probes"
[ "${q0:-0}" -gt 0 ] || problem "no request of the throttled job queued: nothing at stake"
"$TOOLS/qos_ctl_probe" "127.0.0.1:$OSS0_CTL" || problem "qos_ctl_probe: a malformed control frame was not refused with an error reply"
"$TOOLS/frame_spray" "127.0.0.1:$OSS0_CTL" 200 11 >"$T/spray" 2>&1 || problem "frame_spray: the OSS control port stopped serving: $(tail -n 3 "$T/spray")"
q1=$(admin --json jobstats --job slow | jq '.jobs[0].osts[0].queued')
echo "slow job: $q1 requests queued after the probes"
"$REPO/deploy/pfs-cluster" status "$CLUSTER" | grep -q stopped && fail "a daemon died"
[ "$(admin --json nrs tbf rule list | jq -r '[.oss[].rules[].name] | join(",")')" = slow ] ||
	problem "rules after the probes: $(admin --json nrs tbf rule list | jq -c '[.oss[].rules[]]')"
wait $slow_pid || problem "throttled writers failed: $(cat "$T/slow")"
r=$(mbps "$(cat "$T/slow")")
echo "throttled job: $(cat "$T/slow")"
near "$r" 4 10 || problem "throttled job at $r MB/s during the probes, want its 4 MB/s"
for i in $(seq 0 7); do
	f=$MNT/slow/load.$i
	c=$(printf "\\$(printf '%03o' $((97 + i)))")
	[ "$(stat -c %s "$f")" = $((2 << 20)) ] && [ "$(tr -d "$c" <"$f" | wc -c)" = 0 ] ||
		problem "$f: size $(stat -c %s "$f") or bytes that stream $i did not write"
done
ok "control port probes done; throttled job's queued requests all completed"

[ $problems = 0 ] || fail "$problems problem(s), listed above"
ok "bad QoS input refused clearly, nothing lost"
