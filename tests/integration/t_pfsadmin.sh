# timeout: 120
# pfsadmin as lfs/lctl users expect it, against a real cluster (4 OSSes):
#   - every command answers -h/--help (exit 0, its usage on stdout), and
#     --version; a bad option is a usage error (exit 2);
#   - every command's --json parses with jq and has the documented keys
#     (client/README.md), the same key for the same thing everywhere;
#   - setstripe/getstripe round trips with short and long options, a
#     directory default set and deleted (-d), getstripe over several paths
#     with selectors and -y; --stripe-index N puts stripe 0 on OST N and the
#     next on N+1... (wrapping), a directory default with -i is inherited by
#     its files and new subdirectories, an index that is no OST is refused;
#     setstripe on an existing file (empty or not) is refused with
#     "file already has a layout" and the layout stays;
#   - error messages and exit codes: a bad address exits 2 from --mds and
#     from PFS_MDS alike, a name that does not resolve says "cannot resolve",
#     a closed port "not reachable", without a misleading errno text;
#   - df in lfs df's form, then with one OSS killed: its OST listed as an
#     inactive device and left out of the summary (text and JSON);
#   - a silent MDS (a pfs-mds stopped with SIGSTOP: the kernel still accepts
#     connections and takes requests) costs --timeout, and the default
#     timeout of 10 s without it, not half a minute.
. "$(dirname "$0")/lib.sh"

start_cluster --oss 4 --mds-opt heartbeat_timeout_ms=2000
P=$PFS_BIN/pfsadmin

# run WANT_RC CMD...: CMD's exit status must be WANT_RC; stdout in $T/out,
# stderr in $T/err.
run() {
	local want=$1 rc
	shift
	"$@" >"$T/out" 2>"$T/err"; rc=$?
	[ "$rc" = "$want" ] || fail "$* exited $rc, want $want: $(head -c 400 "$T/err")"
}
# has_keys FILE FILTER KEY...: the JSON FILTER of FILE is an object with KEYs.
has_keys() {
	local f=$1 filter=$2 k
	shift 2
	jq -e "$filter | type == \"object\"" "$f" >/dev/null ||
		fail "$filter is not an object in $(head -c 400 "$f")"
	for k in "$@"; do
		jq -e --arg k "$k" "$filter | has(\$k)" "$f" >/dev/null ||
			fail "$filter has no key '$k': $(jq -c "$filter" "$f" | head -c 400)"
	done
}

# ---- help and version -------------------------------------------------
run 0 "$P" --version
grep -Eq '^pfsadmin \(pfs\) [0-9]' "$T/out" || fail "--version: $(cat "$T/out")"
for h in -h --help help; do
	run 0 "$P" $h
	grep -q '^usage: pfsadmin ' "$T/out" || fail "pfsadmin $h: no usage"
done
for c in "ost list" df setstripe getstripe ping "job register" "job end" "job list" \
	"job show" jobstats "qos show" "qos policy set" "qos policy show" "qos coupons" \
	"qos regret" "nrs tbf rule list"; do
	# shellcheck disable=SC2086
	run 0 "$P" $c --help
	grep -q "^usage: pfsadmin ${c%% list}" "$T/out" || fail "$c --help: $(head -n 2 "$T/out")"
	[ -s "$T/err" ] && fail "$c --help wrote to stderr: $(cat "$T/err")"
	# shellcheck disable=SC2086
	[ "$c" = df ] || run 0 "$P" $c -h
done
run 0 "$P" df -h "$MNT" # -h in df is human-readable sizes, as in lfs df
grep -q '^filesystem_summary: .*[0-9.][KMGT] ' "$T/out" || fail "df -h: $(cat "$T/out")"
run 2 "$P" getstripe --bogus "$MNT"
grep -q "unknown option '--bogus' for getstripe" "$T/err" || fail "bogus option: $(cat "$T/err")"
grep -q "Try 'pfsadmin getstripe --help'" "$T/err" || fail "no pointer to help: $(cat "$T/err")"
ok "help, version, usage errors"

# ---- setstripe / getstripe round trips ----------------------------------
run 0 admin setstripe -c 2 -S 1M "$MNT/short"
run 0 admin getstripe -c "$MNT/short"
[ "$(cat "$T/out")" = 2 ] || fail "getstripe -c after setstripe -c 2: $(cat "$T/out")"
run 0 admin getstripe -S "$MNT/short"
[ "$(cat "$T/out")" = 1048576 ] || fail "getstripe -S: $(cat "$T/out")"
run 0 admin setstripe --stripe-count 3 --stripe-size=256K "$MNT/long"
run 0 admin getstripe --stripe-count "$MNT/long"
[ "$(cat "$T/out")" = 3 ] || fail "getstripe --stripe-count: $(cat "$T/out")"
run 0 admin getstripe --stripe-size "$MNT/long"
[ "$(cat "$T/out")" = 262144 ] || fail "getstripe --stripe-size: $(cat "$T/out")"
run 0 admin --json getstripe "$MNT/long"
first=$(jq '.stripes[0].ost' "$T/out")
[ "$(jq '[.stripes[].ost] | unique | length' "$T/out")" = 3 ] || fail "3 stripes, 3 OSTs: $(cat "$T/out")"
run 0 admin getstripe -i "$MNT/long"
[ "$(cat "$T/out")" = "$first" ] || fail "getstripe -i $(cat "$T/out"), stripe 0 on OST $first"
echo data >"$MNT/long" || fail "write into the new file"
[ "$(cat "$MNT/long")" = data ] || fail "read back from the new file"
# several paths, several selectors
run 0 admin getstripe -c -S "$MNT/short" "$MNT/long"
printf '%s\n  stripe_count: 2\n  stripe_size: 1048576\n%s\n  stripe_count: 3\n  stripe_size: 262144\n' \
	"$MNT/short" "$MNT/long" | cmp -s - "$T/out" || fail "getstripe -c -S two paths: $(cat "$T/out")"
run 0 admin getstripe -y "$MNT/short" "$MNT/long"
[ "$(grep -c '^- path: ' "$T/out")" = 2 ] && grep -q '^  stripe_count: 3$' "$T/out" ||
	fail "getstripe -y: $(cat "$T/out")"
run 0 admin --json getstripe "$MNT/short" "$MNT/long"
[ "$(jq -c '[.paths[].stripe_count]' "$T/out")" = "[2,3]" ] || fail "getstripe --json two paths: $(cat "$T/out")"
# a path that fails among others: reported, the others shown, exit 1
run 1 admin getstripe -c "$MNT/short" "$MNT/nope" "$MNT/long"
grep -q "^pfsadmin: getstripe $MNT/nope: No such file or directory$" "$T/err" ||
	fail "missing path: $(cat "$T/err")"
[ "$(grep -c stripe_count "$T/out")" = 2 ] || fail "the other paths: $(cat "$T/out")"
# directory default: set, inherited, deleted
mkdir "$MNT/d" || fail mkdir
run 0 admin setstripe --stripe-count 1 "$MNT/d"
run 0 admin getstripe -c "$MNT/d"
[ "$(cat "$T/out")" = 1 ] || fail "directory default count: $(cat "$T/out")"
echo x >"$MNT/d/f1" || fail "create in d"
run 0 admin getstripe -c "$MNT/d/f1"
[ "$(cat "$T/out")" = 1 ] || fail "file in d does not inherit count 1: $(cat "$T/out")"
run 0 admin setstripe -d "$MNT/d"
run 0 admin getstripe -c "$MNT/d"
[ "$(cat "$T/out")" = 0 ] || fail "default after -d: $(cat "$T/out")"
echo x >"$MNT/d/f2" || fail "create in d"
run 0 admin getstripe -c "$MNT/d/f2"
[ "$(cat "$T/out")" = 4 ] || fail "after -d a new file gets the file system default (4 OSTs): $(cat "$T/out")"
run 1 admin setstripe -d "$MNT/short"
grep -q "not a directory" "$T/err" || fail "-d on a file: $(cat "$T/err")"
# the first OST (lfs -i): stripe 0 there, the next ones on the next OSTs
osts() { admin --json getstripe "$1" | jq -c '[.stripes[].ost]'; }
run 0 admin setstripe -i 2 -c 2 "$MNT/idx"
[ "$(osts "$MNT/idx")" = "[2,3]" ] || fail "-i 2 -c 2: OSTs $(osts "$MNT/idx")"
run 0 admin getstripe -i "$MNT/idx"
[ "$(cat "$T/out")" = 2 ] || fail "getstripe -i of -i 2: $(cat "$T/out")"
run 0 admin setstripe --stripe-index 3 --stripe-count 3 "$MNT/idxwrap"
[ "$(osts "$MNT/idxwrap")" = "[3,0,1]" ] || fail "-i 3 -c 3: OSTs $(osts "$MNT/idxwrap")"
echo data >"$MNT/idx" && [ "$(cat "$MNT/idx")" = data ] || fail "I/O on a file made with -i"
run 1 admin setstripe -i 9 -c 1 "$MNT/idx9"
grep -q "^pfsadmin: setstripe $MNT/idx9: no OST has index 9" "$T/err" || fail "-i 9: $(cat "$T/err")"
[ -e "$MNT/idx9" ] && fail "-i 9 created the file"
run 0 admin setstripe --stripe-index -1 -c 1 "$MNT/idxany"
# a directory default with -i: kept, inherited by files and new subdirectories
mkdir "$MNT/di" || fail mkdir
run 0 admin getstripe -i "$MNT/di"
[ "$(cat "$T/out")" = -1 ] || fail "a directory without -i: $(cat "$T/out")"
run 0 admin setstripe -i 1 -c 2 "$MNT/di"
run 0 admin getstripe -i "$MNT/di"
[ "$(cat "$T/out")" = 1 ] || fail "directory default -i: $(cat "$T/out")"
run 0 admin getstripe "$MNT/di"
grep -q "^  default stripe_index: 1$" "$T/out" || fail "directory default text: $(cat "$T/out")"
echo x >"$MNT/di/f1" && echo y >"$MNT/di/f2" || fail "create in di"
mkdir "$MNT/di/sub" && echo z >"$MNT/di/sub/g" || fail "create in di/sub"
for f in di/f1 di/f2 di/sub/g; do
	[ "$(osts "$MNT/$f")" = "[1,2]" ] || fail "$f does not inherit -i 1 -c 2: $(osts "$MNT/$f")"
done
run 0 admin setstripe -d "$MNT/di"
run 0 admin getstripe -i "$MNT/di"
[ "$(cat "$T/out")" = -1 ] || fail "-i after -d: $(cat "$T/out")"
ok "setstripe/getstripe round trips, short and long options, -d, -i (files, directory defaults), several paths"

# ---- setstripe refuses a file that has a layout -------------------------
touch "$MNT/empty" || fail touch
echo some data >"$MNT/full" || fail write
for f in empty full short; do
	before=$(admin --json getstripe "$MNT/$f" | jq -c '.stripes')
	run 1 admin setstripe -c 1 "$MNT/$f"
	grep -q "^pfsadmin: setstripe $MNT/$f: file already has a layout" "$T/err" ||
		fail "setstripe on existing $f: $(cat "$T/err")"
	grep -q "File exists" "$T/err" && fail "errno text in: $(cat "$T/err")"
	[ "$(admin --json getstripe "$MNT/$f" | jq -c '.stripes')" = "$before" ] ||
		fail "layout of $f changed"
done
[ "$(cat "$MNT/full")" = "some data" ] || fail "data of full changed"
ok "setstripe refuses existing files (empty, with data, made by setstripe)"

# ---- JSON: parses, documented keys --------------------------------------
run 0 admin --json ost list
has_keys "$T/out" '.osts[0]' index name uuid oss state host data_port ctl_port \
	total_bytes used_bytes free_bytes available_bytes used_pct objects
space="total_bytes used_bytes free_bytes available_bytes used_pct total_inodes used_inodes free_inodes used_inodes_pct"
for o in "" -i -h; do
	# shellcheck disable=SC2086
	run 0 admin --json df $o
	has_keys "$T/out" . fsname mdts osts summary
	# shellcheck disable=SC2086
	has_keys "$T/out" '.mdts[0]' index name state $space
	# shellcheck disable=SC2086
	has_keys "$T/out" '.osts[0]' index name uuid oss state $space
	# shellcheck disable=SC2086
	has_keys "$T/out" .summary osts_up osts_down $space
done
[ "$(jq -r '.osts[0].name' "$T/out")" = pfs-OST0000 ] || fail "OST name: $(jq -c '.osts[0]' "$T/out")"
run 0 admin --json --fsname lfs1 df
[ "$(jq -r '.mdts[0].name' "$T/out")" = lfs1-MDT0000 ] || fail "--fsname: $(jq -c '.mdts' "$T/out")"
run 0 admin --json getstripe "$MNT/short"
has_keys "$T/out" . path ino type stripe_size stripe_count stripe_index stripes
has_keys "$T/out" '.stripes[0]' index ost object_id object
run 0 admin --json setstripe -c 1 "$MNT/viajson"
has_keys "$T/out" . path ino type stripe_size stripe_count stripe_index stripes
run 0 admin --json ping -c 2
has_keys "$T/out" . address count rtt_us min_us avg_us max_us
[ "$(jq -r .address "$T/out")" = "$MDS" ] || fail "ping address: $(cat "$T/out")"
run 0 admin --json job register J1 --nodes 2
has_keys "$T/out" .job job uid nodes priority limit_bytes_per_s throttle_friendly
[ "$(jq .job.limit_bytes_per_s "$T/out")" = null ] || fail "no limit is null: $(cat "$T/out")"
run 0 admin --json job show J1
has_keys "$T/out" . job uid nodes priority limit_bytes_per_s state start_ns end_ns
run 0 admin --json job list
has_keys "$T/out" '.jobs[0]' job state
run 0 admin --json jobstats
has_keys "$T/out" . snapshot_ns mds oss jobs
has_keys "$T/out" .mds address status
run 0 admin --json qos show
has_keys "$T/out" . policy params interval_s decided_ns decisions
run 0 admin --json qos policy show
has_keys "$T/out" . policy params
pol=$(jq -r .policy "$T/out")
run 0 admin --json qos policy set "$pol" # the policy in force again: changes nothing
has_keys "$T/out" . policy params interval_s
run 0 admin --json qos coupons
has_keys "$T/out" . coupons
run 0 admin --json qos regret
has_keys "$T/out" . budget_nh period_s worth_issued_bytes worth_redeemed_bytes
run 0 admin --json nrs tbf rule start r1 'jobid={nobody} rate=100MB/s'
has_keys "$T/out" . verb name expr oss
has_keys "$T/out" '.oss[0]' oss address status
run 0 admin --json nrs tbf rule list
has_keys "$T/out" '.oss[0]' oss address status rules
has_keys "$T/out" '.oss[0].rules[0]' name expr
run 0 admin --json nrs tbf rule stop r1
has_keys "$T/out" . verb name oss
run 0 admin --json job end J1
has_keys "$T/out" . action job
ok "--json of every command parses and has the documented keys"

# ---- errors and exit codes ----------------------------------------------
run 2 "$P" --mds garbage df
grep -q "bad MDS address 'garbage'" "$T/err" || fail "--mds garbage: $(cat "$T/err")"
PFS_MDS=garbage run 2 "$P" df
grep -q "bad MDS address 'garbage'" "$T/err" || fail "PFS_MDS=garbage: $(cat "$T/err")"
run 1 "$P" --mds nosuchhost.invalid:7000 df
grep -q "cannot resolve nosuchhost.invalid" "$T/err" || fail "DNS failure: $(cat "$T/err")"
grep -q "No route to host" "$T/err" && fail "DNS failure as errno text: $(cat "$T/err")"
PFS_MDS=nosuchhost.invalid:7000 run 1 "$P" df
closed=127.0.0.1:1 # nothing listens on port 1
run 1 "$P" --mds "$closed" ost list
grep -q "^pfsadmin: ost list: MDS $closed not reachable" "$T/err" || fail "closed port: $(cat "$T/err")"
run 1 admin getstripe /
grep -q "^pfsadmin: /: not in a pfs mount$" "$T/err" || fail "path outside pfs: $(cat "$T/err")"
ok "exit codes 0/1/2, errors in words"

# ---- df in lfs's form, then with one OSS down ---------------------------
run 0 admin df "$MNT"
grep -Eq "^pfs-MDT0000_UUID +.*$MNT\[MDT:0\]$" "$T/out" || fail "no MDT line: $(cat "$T/out")"
[ "$(grep -Ec '^pfs-OST000[0-3]_UUID +[0-9]+ ' "$T/out")" = 4 ] || fail "OST lines: $(cat "$T/out")"
total3=$(admin --json df | jq .summary.total_bytes)
victim=$(admin --json ost list | jq -r '.osts[] | select(.oss == "oss1") | .name')
[ -n "$victim" ] || fail "no OST of oss1"
"$REPO/deploy/pfs-cluster" kill "$CLUSTER" oss1 || fail "kill oss1"
for i in $(seq 1 100); do
	admin --json ost list | jq -e '[.osts[] | select(.state == "down")] | length == 1' >/dev/null && break
	sleep 0.1
done
admin --json ost list | jq -e '[.osts[] | select(.state == "down")] | length == 1' >/dev/null ||
	fail "oss1 not down after 10 s: $(admin --json ost list)"
run 0 admin df "$MNT"
grep -Eq "^${victim}_UUID +: inactive device$" "$T/out" || fail "$victim not inactive: $(cat "$T/out")"
[ "$(grep -Ec '^pfs-OST000[0-3]_UUID +[0-9]+ ' "$T/out")" = 3 ] || fail "up OSTs: $(cat "$T/out")"
run 0 admin --json df
jq -e '.summary.osts_up == 3 and .summary.osts_down == 1' "$T/out" >/dev/null ||
	fail "summary counts: $(jq -c .summary "$T/out")"
jq -e '.summary.total_bytes == ([.osts[] | select(.state == "up") | .total_bytes] | add)' "$T/out" >/dev/null ||
	fail "summary is not the sum of the up OSTs: $(jq -c '.summary, [.osts[] | {name, state, total_bytes}]' "$T/out")"
[ "$(jq .summary.total_bytes "$T/out")" -lt "$total3" ] || fail "down OST still counted: $total3 -> $(jq .summary.total_bytes "$T/out")"
sum_text=$(admin df | awk '/^filesystem_summary:/ { print $2 }')
[ "$sum_text" = "$(( $(jq .summary.total_bytes "$T/out") / 1024 ))" ] || fail "text summary $sum_text"
run 0 admin df -i
grep -Eq "^${victim}_UUID +: inactive device$" "$T/out" || fail "df -i: $(cat "$T/out")"
ok "df: MDT line, FSNAME-OSTxxxx_UUID, $victim inactive and out of the summary"

# ---- a silent MDS costs --timeout -----------------------------------------
# seconds since $1 (date +%s.%N), and whether that is below $2
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
mkdir -p "$T/silent"
"$PFS_BIN/pfs-mds" --listen=127.0.0.1:0 --db="$T/silent/db" --port_file="$T/silent/port" --auth_key="$CLUSTER/keys/mds.key" \
	</dev/null >"$T/silent/log" 2>&1 &
silent_pid=$!
# whatever happens, the stopped MDS goes (cleanup keeps the exit status)
trap 'rc=$?; kill -KILL $silent_pid 2>/dev/null; (exit $rc); cleanup' EXIT
for i in $(seq 1 100); do [ -s "$T/silent/port" ] && break; sleep 0.05; done
silent=127.0.0.1:$(sed -n 's/^port=//p' "$T/silent/port")
run 0 "$P" --mds "$silent" ping # it answers while it runs
kill -STOP $silent_pid
t0=$(date +%s.%N)
run 1 "$P" --mds "$silent" --timeout 2 df
t1=$(since "$t0")
grep -q "^pfsadmin: df: MDS $silent did not answer within 2 s (--timeout)$" "$T/err" ||
	fail "silent MDS: $(cat "$T/err")"
below "$t1" 4 || fail "--timeout 2 took $t1 s"
t0=$(date +%s.%N)
run 1 "$P" --mds "$silent" job list
t2=$(since "$t0")
grep -q "did not answer within 10 s" "$T/err" || fail "default timeout: $(cat "$T/err")"
below "$t2" 13 || fail "the default timeout took $t2 s"
kill -KILL $silent_pid
ok "a silent MDS: failed after $t1 s with --timeout 2, after $t2 s by default"
