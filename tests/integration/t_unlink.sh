#!/bin/bash
# Unlink on the MDS's event loop (issue 11, unlink; mds/nsgroup.h "Inline
# runs"): a lone UNLINK or RMDIR runs on the loop when the group committer
# is idle.  Serial unlinks and rmdirs answer with POSIX's results (0,
# ENOENT, EISDIR, ENOTDIR, ENOTEMPTY), an open-unlinked file stays
# readable, acknowledged unlinks survive kill -9 of the MDS, and the MDS
# reports that unlinks did run inline (else this path went untested).
# timeout: 180
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
start_cluster --oss 2
D=$MNT/u
mkdir -p "$D/sub/deep"
for i in $(seq 1 200); do echo "file $i" > "$D/f$i"; done
echo keep > "$D/sub/deep/k"
head -c 300000 /dev/urandom > "$T/ref"
cp "$T/ref" "$D/open"
sync; echo 3 > /proc/sys/vm/drop_caches

python3 - "$D" "$T/ref" <<'PY' || fail "unlink results"
import errno, os, sys
d, ref = sys.argv[1:]
want = open(ref, 'rb').read()
def err(fn, path, e):
    try:
        fn(path)
    except OSError as x:
        if x.errno != e:
            sys.exit(f"{fn.__name__}({path}): {os.strerror(x.errno)}, want {os.strerror(e)}")
        return
    sys.exit(f"{fn.__name__}({path}) succeeded, want {os.strerror(e)}")
fd = os.open(os.path.join(d, 'open'), os.O_RDONLY)
os.unlink(os.path.join(d, 'open'))
for i in range(1, 151):
    os.unlink(os.path.join(d, f'f{i}'))
err(os.unlink, os.path.join(d, 'f1'), errno.ENOENT)
err(os.unlink, os.path.join(d, 'sub'), errno.EISDIR)
err(os.rmdir, os.path.join(d, 'f151'), errno.ENOTDIR)
err(os.rmdir, os.path.join(d, 'sub'), errno.ENOTEMPTY)
err(os.rmdir, os.path.join(d, 'nothere'), errno.ENOENT)
if os.pread(fd, len(want) + 1, 0) != want:
    sys.exit("open-unlinked file: bytes differ")
if os.fstat(fd).st_nlink != 0:
    sys.exit("open-unlinked file: nlink not 0")
os.close(fd)
names = sorted(os.listdir(d))
if names != sorted([f'f{i}' for i in range(151, 201)] + ['sub']):
    sys.exit(f"left after unlinks: {len(names)} names")
PY
ok "serial unlinks and rmdirs: results, open-unlinked file readable"

# acknowledged unlinks survive kill -9 of the MDS
for i in $(seq 151 180); do rm "$D/f$i" || fail "rm f$i"; done
"$REPO/deploy/pfs-cluster" kill "$CLUSTER" mds
"$REPO/deploy/pfs-cluster" revive "$CLUSTER" || fail "revive"
sync; echo 3 > /proc/sys/vm/drop_caches
for i in $(seq 151 180); do [ ! -e "$D/f$i" ] || fail "f$i back after kill -9 of the MDS"; done
for i in $(seq 181 200); do [ "$(cat "$D/f$i")" = "file $i" ] || fail "f$i after kill -9"; done
ok "acknowledged unlinks survive kill -9 of the MDS"

for i in $(seq 181 200); do rm "$D/f$i" || fail "rm f$i after revive"; done
rm "$D/sub/deep/k" && rmdir "$D/sub/deep" "$D/sub" "$D" || fail "rmdir after revive"
[ ! -e "$D" ] || fail "$D still there"
"$REPO/deploy/pfs-cluster" stop "$CLUSTER" >/dev/null 2>&1
line=$(grep -h 'group commit:' "$CLUSTER/mds.log" | tail -n 1)
echo "MDS: ${line#*notice: }"
n=$(echo "$line" | sed -n 's/.*, \([0-9]*\) run inline.*/\1/p')
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "no unlink ran inline on the MDS's loop: $line"
ok "$n mutations ran inline on the MDS's loop"
