#!/bin/bash
# mount.pfs's own write-back cache (client/wcache.h) and the OSS write
# grants (oss/grant.h), two OSSes whose OSTs are 32 MiB tmpfs each:
# 1. small writes stay in the writer's cache: a second mount's stat
#    (glimpsing the objects, the file being open for writing) sees none
#    of them; the writer reads them back through its own descriptor
#    before closing; after close the second mount reads them all
#    (close-to-open);
# 2. ENOSPC: 100 MiB into 64 MiB of OSTs fails at write(2) (grants: a
#    cached write never fails later), fsync and close after it succeed,
#    and every byte written before the error reads back;
# 3. a flush that fails reaches fsync: bytes cached, both OSSes killed -9
#    and kept down past the recovery window (3 s): fsync reports the error
#    instead of the data vanishing.
# timeout: 240
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }

for i in 0 1; do
	mkdir -p "$CLUSTER/oss$i/ost0"
	mount -t tmpfs -o size=32m tmpfs "$CLUSTER/oss$i/ost0" || { echo "skip: no tmpfs"; exit 0; }
done
MNT2=$CLUSTER/mnt2
stop_all() {
	umount "$MNT2" 2>/dev/null
	"$REPO/deploy/pfs-cluster" stop "$CLUSTER" >/dev/null 2>&1
	umount "$CLUSTER/oss0/ost0" "$CLUSTER/oss1/ost0" 2>/dev/null
}
trap '_rc=$?; stop_all; (exit $_rc); cleanup' EXIT
# data stays cached until fsync/close (no age flush), and a dead OSS is
# given up on after 3 s
start_cluster --oss 2 --mount-opt wcache_age_ms=600000 --mount-opt recovery_window_s=3 \
	--mount-opt retry_ms=2000 --mount-opt md_lease_s=30 --mds-opt md_lease_s=10
if [ "${PFS_AUTH:-on}" = off ]; then MAUTH=auth=0; else MAUTH=key=$CLUSTER/keys/client.key; fi
mkdir -p "$MNT2"
# md_lease_s: the second mount's stat below caches size 0; the writer's
# close revokes it at once (without leases it would stand attr_timeout_s)
check "$PFS_BIN/mount.pfs" "$MDS" "$MNT2" -o "$MAUTH,wcache_mb=0,md_lease_s=30,log=file:$CLUSTER/client2.log"

# w.py FILE SRC CHUNK DIR: writes SRC to FILE in CHUNK-byte writes through
# one O_RDWR descriptor (a shell's copies of a descriptor would each close,
# and every close flushes), reads it back through the same descriptor,
# says DIR/ready, waits for DIR/go, then fsync and close; each step's
# outcome (ok or the errno name, and the bytes written) in DIR/out.
cat >"$T/w.py" <<'PY'
import errno, os, sys, time
path, src, chunk, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
data = open(src, 'rb').read()
res = []
def step(name, fn):
    try:
        fn()
        res.append(name + " ok")
        return True
    except OSError as e:
        res.append(name + " " + errno.errorcode.get(e.errno, str(e.errno)))
        return False
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
done = 0
err = None
while done < len(data):
    try:
        done += os.write(fd, data[done:done + chunk])
    except OSError as e:
        err = errno.errorcode.get(e.errno, str(e.errno))
        break
res.append("write " + (err or "ok"))
res.append("written %d" % done)
back = os.pread(fd, done, 0) if done else b""
res.append("readback " + ("ok" if back == data[:done] else "differs"))
open(d + "/ready", "w").close()
while not os.path.exists(d + "/go"):
    time.sleep(0.05)
step("fsync", lambda: os.fsync(fd))
step("close", lambda: os.close(fd))
open(d + "/out", "w").write("\n".join(res) + "\n")
PY
# run_writer NAME FILE SRC CHUNK: in the background; its directory $T/NAME
run_writer() {
	mkdir -p "$T/$1"
	python3 "$T/w.py" "$2" "$3" "$4" "$T/$1" >"$T/$1/log" 2>&1 &
	for _ in $(seq 600); do [ -e "$T/$1/ready" ] && return 0; sleep 0.1; done
	fail "$1: the writer did not get to its first close ($(cat "$T/$1/log"))"
}
# finish NAME: let it fsync and close; its results on stdout
finish() {
	: >"$T/$1/go"
	for _ in $(seq 900); do [ -s "$T/$1/out" ] && break; sleep 0.1; done
	[ -s "$T/$1/out" ] || fail "$1: no result ($(cat "$T/$1/log"))"
	cat "$T/$1/out"
}
has() { grep -qx "$2" <<<"$1" || fail "$3: '$2' expected in: $(tr '\n' ';' <<<"$1")"; }

# 1. cached, read back, close-to-open
check head -c 300000 /dev/urandom >"$T/small"
run_writer one "$MNT/small" "$T/small" 4096
# the second mount glimpses the objects of a file open for writing:
# nothing of it has left the writer's cache
s=$(stat -c %s "$MNT2/small") || fail "stat on the second mount"
[ "$s" = 0 ] || fail "second mount sees $s bytes before the writer's close: not cached"
r=$(finish one)
has "$r" "write ok" "cached writes"
has "$r" "readback ok" "read-back through the writing descriptor before close"
has "$r" "fsync ok" "fsync"
has "$r" "close ok" "close"
cmp "$T/small" "$MNT2/small" || fail "second mount after close: other bytes"
cmp "$T/small" "$MNT/small" || fail "writer's mount after close: other bytes"
ok "writes cached until close; read back before it; close-to-open on a second mount"

# 2. ENOSPC at write(2), never later
check head -c $((100 << 20)) /dev/urandom >"$T/big"
run_writer two "$MNT/big" "$T/big" $((1 << 20))
r=$(finish two)
has "$r" "write ENOSPC" "a full OST"
has "$r" "fsync ok" "fsync after ENOSPC at write (grants: nothing cached may fail later)"
has "$r" "close ok" "close after ENOSPC"
n=$(sed -n 's/^written //p' <<<"$r")
[ "$n" -gt $((8 << 20)) ] || fail "only $n bytes written before ENOSPC"
head -c "$n" "$T/big" >"$T/big.want"
head -c "$n" "$MNT2/big" >"$T/big.got" || fail "read back on the second mount"
cmp "$T/big.want" "$T/big.got" || fail "the $n bytes written before ENOSPC read back other"
ok "ENOSPC at write(2) after $n bytes; fsync and close succeed; those bytes intact"
check rm -f "$MNT/big" "$MNT/small"
sleep 1 # the OSTs' objects destroyed

# 3. a failed flush is reported by fsync
run_writer three "$MNT/lost" "$T/small" 4096
for i in 0 1; do "$REPO/deploy/pfs-cluster" kill "$CLUSTER" "oss$i" KILL || fail "kill oss$i"; done
t0=$(date +%s)
r=$(finish three)
t1=$(date +%s)
grep -q "^fsync ok" <<<"$r" && fail "fsync succeeded with both OSSes dead: $(tr '\n' ';' <<<"$r")"
grep -q "^fsync E" <<<"$r" || fail "fsync: no error in: $(tr '\n' ';' <<<"$r")"
ok "a write-back that failed is reported by fsync ($(grep '^fsync' <<<"$r"), after $((t1 - t0)) s)"
