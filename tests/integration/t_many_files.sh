#!/bin/bash
# 100,000 files created in one directory, listed (every name seen exactly
# once), stat'ed and removed.
# timeout: 900
. "$(dirname "$0")/lib.sh"
start_cluster
d=$MNT/many
mkdir "$d"
N=${PFS_MANY_FILES:-100000}
( cd "$d" && seq -f 'file%06g' 1 "$N" | xargs touch ) || fail "create"
ls -f "$d" | grep -v '^\.\.\?$' | sort > "$T/names"
[ "$(wc -l < "$T/names")" = "$N" ] || fail "listed $(wc -l < "$T/names") names, want $N"
[ -z "$(uniq -d "$T/names")" ] || fail "duplicate names in listing"
seq -f 'file%06g' 1 "$N" | cmp - "$T/names" || fail "listing differs from created names"
ok "$N files listed once each"
[ "$(find "$d" -type f | wc -l)" = "$N" ] || fail "find count"
( cd "$d" && ls -f | grep -v '^\.\.\?$' | xargs rm -f ) || fail "remove"
[ -z "$(ls -A "$d")" ] || fail "directory not empty after removal"
check rmdir "$d"
ok "$N files removed"
