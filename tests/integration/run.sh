#!/bin/sh
# Run every integration test (tests/integration/t_*.sh), each bounded in
# time, and print "integration: N passed, M failed".  Needs root and
# /dev/fuse.  PFS_BIN points at the binaries; ONLY=name runs one test.
here=$(cd "$(dirname "$0")" && pwd)
: "${PFS_BIN:?PFS_BIN must point at the binaries}"
export PFS_BIN
pass=0; fail=0; failed=""
for t in "$here"/t_*.sh; do
	name=$(basename "$t" .sh)
	[ -n "${ONLY:-}" ] && [ "$ONLY" != "$name" ] && continue
	limit=$(sed -n 's/^# timeout: *//p' "$t"); limit=${limit:-300}
	start=$(date +%s)
	if timeout -k 10 "$limit" bash "$t" > "/tmp/pfs-$name.log" 2>&1; then
		pass=$((pass+1)); echo "PASS $name ($(( $(date +%s) - start ))s)"
	else
		rc=$?
		fail=$((fail+1)); failed="$failed $name"
		echo "FAIL $name (exit $rc after $(( $(date +%s) - start ))s)"; tail -n 40 "/tmp/pfs-$name.log"
	fi
done
echo "integration: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
