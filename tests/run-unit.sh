#!/bin/sh
# Run every unit test binary in $1 (build/tests); print a summary line.
# Exit status is non-zero if any test binary fails.
dir=${1:-build/tests}
pass=0; fail=0; failed=""
for t in "$dir"/test_*; do
  [ -x "$t" ] || continue
  case "$t" in *.d|*.o) continue;; esac
  name=$(basename "$t")
  if CMOCKA_MESSAGE_OUTPUT=stdout "$t" > "$dir/$name.log" 2>&1; then
    pass=$((pass+1)); echo "PASS $name"
  else
    fail=$((fail+1)); failed="$failed $name"; echo "FAIL $name"; tail -n 30 "$dir/$name.log"
  fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
