#!/bin/bash
# AdapTBF live (adaptbf.txt sec. III, IV-D/F at small scale): one OST
# emulated at 100 MB/s, qos_policy=adaptbf, four jobs with 1, 1, 3 and 5
# nodes saturating it.
#   - Over a 5 s window the jobs' shares of what the OST served (measured
#     client-side) are 10/10/30/50 % within 5 % absolute.
#   - J3's bulk writer pauses (SIGSTOP) while a 3 MB/s trickle keeps J3
#     active with a demand below its 30 %: J3 lends, its record r_x turns
#     positive.  (A job with no I/O at all is not active on the OST, so it
#     neither lends nor borrows: oss/adapt.h.)
#   - The writer resumes: J3 is re-compensated, its record falls within 6 s.
# Records come from `pfsadmin jobstats --json` (adaptbf_record_tokens) when
# it has them, else from the OSS's metrics (pfs_oss_adaptbf_record_tokens).
# timeout: 120
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qos_lib.sh"

start_cluster --oss 1 --mounts 4 --metrics --oss-opt ost_bandwidth=100 \
	--mds-opt qos_policy=adaptbf --mds-opt qos_interval_s=1
read -ra M <<<"$MNTS"
k=0
for jn in J1:1 J2:1 J3:3 J4:5; do
	admin job register "${jn%:*}" --nodes "${jn#*:}" >/dev/null || fail "register $jn"
	mkdir -p "${M[$k]}/${jn%:*}"
	k=$((k + 1))
done

record() { # record JOB: AdapTBF record of JOB on OST 0, tokens
	local r
	r=$(admin --json jobstats --job "$1" | jq -r '.jobs[0].osts[0] | .adaptbf_record_tokens // .record // empty')
	if [ -z "$r" ]; then
		r=$(curl -s "http://127.0.0.1:$OSS0_METRICS/metrics" |
			sed -n "s/^pfs_oss_adaptbf_record_tokens{job=\"$1\",ost=\"0\"} //p")
	fi
	echo "${r:-}"
}

t0=$(date +%s.%N)
k=0
for j in J1 J2 J3 J4; do
	load_bg "$j" write "${M[$k]}/$j" --streams 4 --seconds 18 --direct --size 32M \
		--interval-ms 500 --csv "$T/rates.csv" >"$T/$j"
	eval "pid_$j=$LOAD_PID"
	k=$((k + 1))
done
load J3 write "${M[2]}/J3" --prefix trickle --label J3t --streams 1 --rate 3 --seconds 18 \
	--direct --size 8M --interval-ms 500 --csv "$T/rates.csv" >"$T/J3t" &
sleep 8.5
admin --json qos show | jq -c '[.policy, .decisions]'
w0=$(awk -v t="$t0" 'BEGIN { printf "%.3f", t + 3 }'); w1=$(awk -v t="$t0" 'BEGIN { printf "%.3f", t + 8 }')
declare -A rate
total=0
for j in J1 J2 J3 J3t J4; do
	rate[$j]=$(csv_mbps "$T/rates.csv" "$j" "$w0" "$w1")
	total=$(awk -v a="$total" -v b="${rate[$j]:-0}" 'BEGIN { print a + b }')
done
echo "rates over 5 s (MB/s): J1 ${rate[J1]} J2 ${rate[J2]} J3 ${rate[J3]}+${rate[J3t]} J4 ${rate[J4]}, total $total"
gt "$total" 85 || fail "the OST served only $total MB/s of 100"
for jw in J1:10 J2:10 J3:30 J4:50; do
	j=${jw%:*}
	r=${rate[$j]}
	[ "$j" = J3 ] && r=$(awk -v a="$r" -v b="${rate[J3t]}" 'BEGIN { print a + b }')
	share=$(awk -v a="$r" -v t="$total" 'BEGIN { printf "%.1f", 100 * a / t }')
	echo "$j share $share % (want ${jw#*:} %)"
	near_abs "$share" "${jw#*:}" 5 || fail "$j got $share % of the OST, want ${jw#*:} +- 5"
done
ok "shares follow node counts 1/1/3/5"

[ -n "$(admin --json jobstats --job J3 | jq -r '.jobs[0].osts[0] | .adaptbf_record_tokens // .record // empty')" ] ||
	echo "note: jobstats --json has no record field; reading records from the OSS metrics"
r0=$(record J3)
kill -STOP "$pid_J3"
for i in 1 2 3 4; do sleep 1; echo "lending: J1 $(record J1) J2 $(record J2) J3 $(record J3) J4 $(record J4)"; done
r1=$(record J3)
echo "J3 record: $r0 before the pause, $r1 after 4 s lending (J1 $(record J1), J2 $(record J2), J4 $(record J4))"
[ -n "$r1" ] || fail "no AdapTBF record for J3"
gt "$r1" 0 || fail "J3's record $r1 is not positive while it lends"
gt "$r1" "${r0:-0}" || fail "J3's record did not grow while it lent ($r0 -> $r1)"
ok "J3 lends while its bulk writer is paused (record $r0 -> $r1)"
kill -CONT "$pid_J3"
for i in 1 2 3 4 5 6; do sleep 1; echo "busy again: J1 $(record J1) J2 $(record J2) J3 $(record J3) J4 $(record J4)"; done
r2=$(record J3)
echo "J3 record $r2 after 6 s busy again (J1 $(record J1), J2 $(record J2), J4 $(record J4))"
gt "$r1" "$r2" || fail "J3 not re-compensated: record $r1 -> $r2"
ok "J3 re-compensated (record $r1 -> $r2)"
wait
