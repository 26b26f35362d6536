#!/bin/bash
# Random, truncated and oversized frames sent to the MDS port and to every
# OSS data and control port get errors or closed connections; the daemons
# keep serving (PING answers, and the file system still works through the
# mount, with the data written before intact).
# timeout: 300
. "$(dirname "$0")/lib.sh"
start_cluster
head -c 3000000 /dev/urandom > "$T/before"
check cp "$T/before" "$MNT/before"
check "$TOOLS/frame_spray" "$MDS" 400 1
for i in $(seq 0 $((NOSS - 1))); do
	eval "d=\$OSS${i}_DATA c=\$OSS${i}_CTL"
	check "$TOOLS/frame_spray" "127.0.0.1:$d" 200 $((i + 2))
	check "$TOOLS/frame_spray" "127.0.0.1:$c" 200 $((i + 20))
done
"$REPO/deploy/pfs-cluster" status "$CLUSTER" | grep -q stopped && fail "a daemon died"
sync; echo 3 > /proc/sys/vm/drop_caches
check cmp "$T/before" "$MNT/before"
check cp "$T/before" "$MNT/after"
check cmp "$T/before" "$MNT/after"
ok "daemons survive bad input and keep serving"
