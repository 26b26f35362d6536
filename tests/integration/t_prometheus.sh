#!/bin/bash
# Prometheus: a real Prometheus (Debian's package) on its own free loopback
# port, with its own config and data directory under $T, scrapes the MDS
# and every OSS each second.  Job promjob writes a file striped over every
# OST; Prometheus's HTTP API then shows: up = 1 for every target, the job's
# write bytes summed over the OSTs at least the bytes written (and on every
# OST), and the MDS's QoS decision counter.
# timeout: 180
. "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || fail "no prometheus (deploy/install-deps.sh installs it)"
command -v curl >/dev/null || fail "no curl"
command -v jq >/dev/null || fail "no jq"

PROM=$T/prom
PROM_PID=
PROM_PORT=

stop_prometheus() {
	[ -n "$PROM_PID" ] || return 0
	kill -TERM "$PROM_PID" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$PROM_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$PROM_PID" 2>/dev/null
	wait "$PROM_PID" 2>/dev/null
	PROM_PID=
}
on_exit() {
	local rc=$?
	if [ $rc -ne 0 ] || [ $_failed -ne 0 ]; then
		[ -f "$PROM/log" ] && { echo "--- tail of prometheus log" >&2; tail -n 20 "$PROM/log" >&2; }
	fi
	stop_prometheus
	# lib.sh's cleanup stops the cluster and removes $T; it reads $?.
	(exit $rc)
	cleanup
}
trap on_exit EXIT

# A port nobody listens on now; Prometheus binds it moments later (and a
# lost race is retried with another port below).
free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

# query PROMQL -> the API's JSON on stdout; fails on an HTTP or API error.
query() {
	curl -sf --max-time 5 -G "http://127.0.0.1:$PROM_PORT/api/v1/query" \
		--data-urlencode "query=$1" | jq -e 'select(.status == "success")'
}
# value PROMQL -> the value of a query whose result is one sample ("" if none).
value() { query "$1" | jq -r '.data.result[0].value[1] // empty'; }

# wait_for SECONDS DESC PREDICATE...: until PREDICATE succeeds.
wait_for() {
	local secs=$1 desc=$2 i
	shift 2
	for i in $(seq 1 $((secs * 2))); do
		"$@" && { ok "$desc (after ~$((i / 2)) s)"; return 0; }
		sleep 0.5
	done
	fail "$desc: not within $secs s"
}

# ---- the cluster, with a metrics port on every daemon ----
for d in pfs-mds pfs-oss; do
	"$PFS_BIN/$d" --help 2>&1 | grep -q -- '--metrics_port' ||
		fail "$d has no metrics_port option"
done
start_cluster --metrics
[ -n "${MDS_METRICS:-}" ] || fail "cluster.env has no MDS_METRICS"
targets_mds="'127.0.0.1:$MDS_METRICS'"
targets_oss=""
ports="$MDS_METRICS"
for i in $(seq 0 $((NOSS - 1))); do
	eval "p=\${OSS${i}_METRICS:-}"
	[ -n "$p" ] || fail "cluster.env has no OSS${i}_METRICS"
	targets_oss="$targets_oss${targets_oss:+, }'127.0.0.1:$p'"
	ports="$ports $p"
done

# ---- Prometheus ----
# honor_labels: pfs labels its series with job=<batch job id>, which would
# otherwise collide with Prometheus's own target label `job` (and be renamed
# exported_job); with it, pfs's job label wins on pfs's series and `up`
# keeps the scrape job's name.
mkdir -p "$PROM/data"
cat >"$PROM/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: pfs_mds
    honor_labels: true
    static_configs:
      - targets: [$targets_mds]
  - job_name: pfs_oss
    honor_labels: true
    static_configs:
      - targets: [$targets_oss]
EOF
if command -v promtool >/dev/null; then
	promtool check config "$PROM/prometheus.yml" >/dev/null || fail "promtool rejects the config"
fi
for attempt in 1 2 3 4 5; do
	PROM_PORT=$(free_port) || fail "no free port for Prometheus"
	prometheus --config.file="$PROM/prometheus.yml" --storage.tsdb.path="$PROM/data" \
		--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn \
		</dev/null >>"$PROM/log" 2>&1 &
	PROM_PID=$!
	for _ in $(seq 1 100); do
		curl -sf --max-time 2 "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null && break 2
		kill -0 "$PROM_PID" 2>/dev/null || break
		sleep 0.2
	done
	echo "Prometheus on port $PROM_PORT did not come up (attempt $attempt)" >&2
	stop_prometheus
done
[ -n "$PROM_PID" ] || fail "Prometheus did not start; see above"
ok "Prometheus $(prometheus --version 2>&1 | awk 'NR == 1 { print $3 }') on 127.0.0.1:$PROM_PORT"
# Prometheus has the targets (whatever their state; its discovery takes
# up to 5 s to hand them to the scrape loop).
have_targets() {
	[ "$(curl -sf --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/targets" |
		jq '.data.activeTargets | length')" = $((NOSS + 1)) ]
}
wait_for 20 "Prometheus has the $((NOSS + 1)) targets" have_targets

# ---- I/O as job promjob ----
MB=8
check "$PFS_BIN/pfsadmin" setstripe -c -1 -S 1M "$MNT/prom.bin" >/dev/null
head -c $((MB << 20)) /dev/urandom >"$T/src"
SLURM_JOB_ID=promjob dd if="$T/src" of="$MNT/prom.bin" bs=1M conv=fsync status=none ||
	fail "write as job promjob"
cmp "$T/src" "$MNT/prom.bin" || fail "read back"
bytes=$((MB << 20))
ok "job promjob wrote $bytes bytes over $NOSS OSTs"

# ---- what Prometheus saw ----
all_up() {
	local p
	for p in $ports; do
		[ "$(value "up{instance=\"127.0.0.1:$p\"}")" = 1 ] || return 1
	done
}
wait_for 30 "up = 1 for the MDS and all $NOSS OSS targets" all_up

job_bytes() {
	local v
	v=$(value 'sum(pfs_oss_job_bytes_total{job="promjob",op="write"})')
	[ -n "$v" ] && jq -en --argjson v "$v" --argjson want "$bytes" '$v >= $want' >/dev/null
}
wait_for 30 "sum of pfs_oss_job_bytes_total{job=promjob,op=write} >= $bytes" job_bytes
echo "  by OST: $(query 'pfs_oss_job_bytes_total{job="promjob",op="write"}' |
	jq -c '[.data.result[] | {(.metric.ost): .value[1]}] | add')"
nost=$(value 'count(pfs_oss_job_bytes_total{job="promjob",op="write"} > 0)')
[ "$nost" = "$NOSS" ] || fail "promjob's writes show on $nost OSTs, want $NOSS"
ok "promjob's writes show on every OST"

decisions() { [ -n "$(value 'count(pfs_mds_qos_decisions_total)')" ]; }
wait_for 15 "pfs_mds_qos_decisions_total exists" decisions

# Every scrape parsed: no target has reported a failed scrape since.
bad=$(value 'count(up == 0)')
[ -z "$bad" ] || fail "$bad targets down"
