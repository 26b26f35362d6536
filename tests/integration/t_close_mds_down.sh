#!/bin/bash
# Issue 8: the size of a file lives in the writing client until close.  A
# close while the MDS is down must not drop it: FLUSH's SETSIZE is resent
# through the client's recovery window (recovery_window_s), so the close
# waits for the MDS to come back and the file then has its size and bytes.
# The writer is one python process (no fork: a child's exec would close
# the descriptor, and so push the size, before the MDS is killed).
# timeout: 90
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
start_cluster --oss 2
head -c 300000 /dev/urandom >"$T/src"
python3 - "$MNT/f" "$T/src" "$CLUSTER/mds.pid" >"$T/py.out" 2>&1 <<'PY' &
import os, signal, sys, time
dst, src, pidf = sys.argv[1:4]
fd = os.open(dst, os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, open(src, "rb").read())
os.kill(int(open(pidf).read()), signal.SIGKILL)
time.sleep(0.3)
t = time.time()
os.close(fd)
print("close took %.1f s" % (time.time() - t))
PY
py=$!
sleep 3
kill -0 "$py" 2>/dev/null || fail "close returned with the MDS down: $(cat "$T/py.out")"
ok "close waits while the MDS is down"
"$REPO/deploy/pfs-cluster" revive "$CLUSTER" >/dev/null 2>&1 || fail "revive"
wait "$py" || fail "writer failed: $(cat "$T/py.out")"
ok "$(cat "$T/py.out") (MDS down about 3 s)"
[ "$(stat -c %s "$MNT/f")" = 300000 ] || fail "size $(stat -c %s "$MNT/f") after the MDS came back, want 300000"
cmp -s "$MNT/f" "$T/src" || fail "data differs"
ok "the size pushed at close reached the restarted MDS"
