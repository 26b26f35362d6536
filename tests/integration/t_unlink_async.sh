#!/bin/bash
# Asynchronous unlink under directory delegations (issue 11, unlink;
# client/unlinkq.h, mds/deleg.h): a mount that holds a directory's
# delegation answers unlink(2) at once and sends the UNLINKs behind; any
# other mount's request on that directory waits at the MDS until the
# holder sent them and returned the delegation.  Four mounts of one
# cluster: A (mnt) unlinks, B (mnt1) looks, C (mnt2) and D (mnt3) are
# killed.  Each case uses its own directory (a lease B holds on a
# directory would keep A from getting its delegation), and starts with the
# kernel's dentries dropped, as the core benchmark does (a name the kernel
# still caches reaches no LOOKUP, so the mount would not know its inode
# and would unlink it synchronously).
#  1. streaming: A unlinks 300 files with a loop; B lists the directory
#     right after: empty; A's own view is empty at once; A's mount counted
#     asynchronous unlinks (> 0: fails without async unlink).
#  2. recreate race: A unlinks x asynchronously, B at once creates x with
#     O_EXCL (A's unlink is already done for everybody) and writes "B";
#     afterwards x holds "B" on both mounts (a late unlink must not remove
#     B's file: the expected inode).
#  3. open-unlinked: A unlinks a file it holds open: fstat shows nlink 0,
#     the bytes still read, the name is gone.
#  4. EACCES (nobody, no write permission), EISDIR, ENOENT (a missing name
#     and a name already unlinked asynchronously) in a delegated directory:
#     the same answers as the synchronous unlink; nothing else removed.
#  5. durability: C unlinks 100 of 120 files and fsyncs the directory;
#     kill -9 of C's mount.pfs and of the MDS, revive: the 100 stay gone,
#     the 20 keep their bytes (fsync(dir) sent every pending unlink).
#  6. kill -9 of D's mount.pfs in the middle of a stream: B's `ls` answers
#     within the recall time (pfs-mds deleg_recall_ms, 5 s) + 5 s; every
#     name listed is a whole file, every name D never unlinked is there, at
#     most async_unlink_max (128) acknowledged unlinks lost; B removes the
#     rest and the directory; lfsck finds no orphan object.
# timeout: 150
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
command -v jq >/dev/null || fail "jq is needed"
export LC_ALL=C
RECALL_S=5 # pfs-mds deleg_recall_ms default
QMAX=128   # mount.pfs async_unlink_max default
start_cluster --oss 2 --mounts 4 --mount-opt log_level=info
MNTB=$CLUSTER/mnt1
MNTC=$CLUSTER/mnt2
MNTD=$CLUSTER/mnt3

# delegations need each mount's notify channel
for l in client client1 client2 client3; do
	for _ in $(seq 100); do grep -q "notify channel up" "$CLUSTER/$l.log" && break; sleep 0.1; done
	grep -q "notify channel up" "$CLUSTER/$l.log" || fail "no notify channel in $l.log"
done

# the kernel forgets the names it caches (the mounts then see LOOKUPs)
cold() { echo 2 > /proc/sys/vm/drop_caches; }

# mkfiles DIR PREFIX N: DIR/PREFIX000.. with the bytes "PREFIXnnn\n"
mkfiles() {
	python3 - "$@" <<'PY' || fail "mkfiles $*"
import os, sys
d, p, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(d, exist_ok=True)
for i in range(n):
    with open(os.path.join(d, f"{p}{i:03d}"), "w") as f:
        f.write(f"{p}{i:03d}\n")
PY
}

# unl DIR PREFIX FROM TO [fsync]: unlink DIR/PREFIXnnn for nnn in
# [FROM, TO), every one must succeed; fsync: then fsync(DIR)
unl() {
	python3 - "$@" <<'PY' || fail "unlink $*"
import os, sys
d, p, a, b = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for i in range(a, b):
    os.unlink(os.path.join(d, f"{p}{i:03d}"))
if len(sys.argv) > 5:
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)
PY
}

# names DIR: the sorted names of DIR, one line (bounded in time)
names() { timeout 20 ls -A "$1" | tr '\n' ' ' | sed 's/ $//'; }

# ---- 1. streaming
mkfiles "$MNT/s" f 300
cold
t0=$(date +%s%N)
PFS_JOBID=ua_stream unl "$MNT/s" f 0 300
t1=$(date +%s%N)
got=$(names "$MNTB/s") || fail "ls on B"
t2=$(date +%s%N)
[ -z "$got" ] || fail "B lists $(echo "$got" | wc -w) names in s right after A's unlinks: ${got:0:200}"
got=$(names "$MNT/s") || fail "ls on A"
[ -z "$got" ] || fail "A lists names in s after its own unlinks: ${got:0:200}"
stat "$MNT/s/f150" >/dev/null 2>&1 && fail "A: stat of an unlinked name succeeds"
echo "  the stream's MDS requests: $(admin --json jobstats | jq -c '[.jobs[] |
	select(.job == "ua_stream") | .mds_ops[] | {(.op): .count}] | add')"
ok "300 unlinks on A in $(( (t1 - t0) / 1000000 )) ms; B's ls right after: empty ($(( (t2 - t1) / 1000000 )) ms)"

# ---- 2. recreate race, five directories
for k in 0 1 2 3 4; do mkfiles "$MNT/r$k" f 10; echo A > "$MNT/r$k/x" || fail "x$k"; done
cold
python3 - "$MNT" "$MNTB" <<'PY' || fail "recreate race"
import os, sys
a, b = sys.argv[1:]
for k in range(5):
    for i in range(10):
        os.unlink(f"{a}/r{k}/f{i:03d}")
    os.unlink(f"{a}/r{k}/x")
    # A's unlink returned: x is gone for everybody, O_EXCL must succeed
    fd = os.open(f"{b}/r{k}/x", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"B\n")
    os.close(fd)
PY
# flush whatever A still has, then give a late unlink time to do harm
for k in 0 1 2 3 4; do unl "$MNT/r$k" f 0 0 fsync; done
sleep 1
for k in 0 1 2 3 4; do
	for m in "$MNT" "$MNTB"; do
		[ "$(cat "$m/r$k/x" 2>&1)" = B ] || fail "r$k/x on $m after the race: $(cat "$m/r$k/x" 2>&1)"
		[ "$(names "$m/r$k")" = x ] || fail "r$k on $m: $(names "$m/r$k")"
	done
done
ok "unlink on A then create on B at once: B's file stays, on both mounts"

# ---- 3. open-unlinked
mkfiles "$MNT/o" f 10
head -c 300000 /dev/urandom > "$T/ref"
cp "$T/ref" "$MNT/o/big" || fail "cp big"
cold
python3 - "$MNT/o" "$T/ref" <<'PY' || fail "open-unlinked"
import errno, os, sys
d, ref = sys.argv[1:]
want = open(ref, "rb").read()
for i in range(5):
    os.unlink(f"{d}/f{i:03d}")
fd = os.open(f"{d}/big", os.O_RDONLY)
os.unlink(f"{d}/big")
st = os.fstat(fd)
if st.st_nlink != 0:
    sys.exit(f"fstat after unlink: nlink {st.st_nlink}")
if st.st_size != len(want):
    sys.exit(f"fstat after unlink: size {st.st_size}")
if os.pread(fd, len(want) + 1, 0) != want:
    sys.exit("bytes differ after unlink")
try:
    os.stat(f"{d}/big")
    sys.exit("the unlinked name still stats")
except FileNotFoundError:
    pass
os.close(fd)
PY
want="f005 f006 f007 f008 f009"
got=$(names "$MNTB/o")
[ "$got" = "$want" ] || fail "o on B: '$got', want '$want'"
ok "a file open on A, unlinked: nlink 0, bytes read, name gone on A and B"

# ---- 4. errors answered as before, in a delegated directory
mkfiles "$MNT/e" f 10
check chmod 0755 "$MNT/e"
echo keep > "$MNT/e/n" || fail "e/n"
check mkdir "$MNT/e/sub"
cold
unl "$MNT/e" f 0 6
# (from inside e: the test's directory is 0700)
cd "$MNT/e" || fail "cd e"
# expect_err MESSAGE CMD...: CMD fails with MESSAGE
expect_err() {
	local want=$1 out
	shift
	out=$("$@" 2>&1) && fail "$* succeeded, want '$want'"
	echo "$out" | grep -q "$want" || fail "$*: '$out', want '$want'"
}
expect_err "Permission denied" setpriv --reuid=65534 --regid=65534 --clear-groups unlink n
expect_err "Is a directory" unlink sub
expect_err "No such file or directory" unlink missing
expect_err "No such file or directory" unlink f005
check unlink f006
expect_err "No such file or directory" unlink f006
cd /
want="f007 f008 f009 n sub"
got=$(names "$MNTB/e")
[ "$got" = "$want" ] || fail "e on B: '$got', want '$want'"
[ "$(cat "$MNTB/e/n")" = keep ] || fail "e/n on B: $(cat "$MNTB/e/n")"
ok "EACCES, EISDIR, ENOENT (missing, already unlinked) as before; nothing else removed"

# ---- 5. durability: fsync(dir), kill -9 of the unlinking mount and the MDS
mkfiles "$MNTC/p" f 100
mkfiles "$MNTC/p" k 20
cold
unl "$MNTC/p" f 0 100 fsync
up0=$(grep -c "the MDS restarted" "$CLUSTER/client3.log")
"$REPO/deploy/pfs-cluster" kill "$CLUSTER" client2 || fail "kill client2"
"$REPO/deploy/pfs-cluster" kill "$CLUSTER" mds || fail "kill mds"
"$REPO/deploy/pfs-cluster" revive "$CLUSTER" > /dev/null || fail "revive"
want=$(for i in $(seq 0 19); do printf 'k%03d ' "$i"; done)
got=$(names "$MNTB/p") || fail "ls p on B after revive"
[ "$got" = "${want% }" ] || fail "p on B after fsync(p), kill -9 of C and the MDS: '$got'"
for i in $(seq 0 19); do
	n=$(printf k%03d "$i")
	[ "$(cat "$MNTB/p/$n")" = "$n" ] || fail "p/$n on B: $(cat "$MNTB/p/$n" 2>&1)"
done
# D asks for delegations again once its channel is back
for _ in $(seq 150); do
	[ "$(grep -c "the MDS restarted" "$CLUSTER/client3.log")" -gt "$up0" ] && break
	sleep 0.1
done
[ "$(grep -c "the MDS restarted" "$CLUSTER/client3.log")" -gt "$up0" ] ||
	fail "D's notify channel not up again within 15 s of the MDS's revive"
ok "100 unlinks and fsync(dir) on C, kill -9 of C and the MDS: the 100 stay gone, the 20 kept"

# ---- 6. kill -9 of D's mount.pfs in the middle of a stream
mkfiles "$MNTD/k" f 300
cold
python3 - "$MNTD/k" "$(cat "$CLUSTER/client3.pid")" <<'PY' || fail "stream on D"
import os, signal, sys
d, pid = sys.argv[1], int(sys.argv[2])
for i in range(150):
    os.unlink(f"{d}/f{i:03d}")
os.kill(pid, signal.SIGKILL)
PY
t0=$(date +%s%N)
got=$(timeout $((RECALL_S + 20)) ls -A "$MNTB/k") || fail "ls k on B after D's kill -9: rc $?"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -le $(( (RECALL_S + 5) * 1000 )) ] ||
	fail "ls k on B took $ms ms after D's kill -9 (recall time ${RECALL_S} s + 5 s)"
lost=0
for n in $got; do
	case $n in f[0-9][0-9][0-9]) ;; *) fail "k on B lists '$n'" ;; esac
	[ "$(cat "$MNTB/k/$n")" = "$n" ] || fail "k/$n on B: $(cat "$MNTB/k/$n" 2>&1)"
	[ "$((10#${n#f}))" -lt 150 ] && lost=$((lost + 1))
done
never=$(for i in $(seq 150 299); do printf 'f%03d\n' "$i"; done)
missing=$(comm -23 <(echo "$never") <(echo "$got" | sort))
[ -z "$missing" ] || fail "names D never unlinked are missing on B: $(echo $missing)"
[ "$lost" -le $QMAX ] || fail "$lost acknowledged unlinks lost by D's kill -9 (cap $QMAX)"
(cd "$MNTB/k" && rm -f -- f*) || fail "rm on B"
check rmdir "$MNTB/k"
ok "D killed after 150 unlinks: B's ls in $ms ms, $lost acknowledged unlinks lost (cap $QMAX), namespace whole"

lf=$(admin --json lfsck --dry-run) || fail "lfsck --dry-run: $lf"
read -r reached orph <<<"$(echo "$lf" | jq -r '"\([.osts[] | select(.reached)] | length) \(.orphaned)"')"
[ "$reached" = 2 ] || fail "lfsck --dry-run reached $reached of 2 OSTs: $lf"
[ "$orph" = 0 ] || fail "lfsck --dry-run: $orph orphan objects: $lf"
ok "lfsck --dry-run: no orphan object"

# ---- A's counters (logged when it unmounts)
umount "$MNT" || fail "umount A"
for _ in $(seq 50); do grep -q "async unlink" "$CLUSTER/client.log" && break; sleep 0.1; done
line=$(grep -h "async unlink" "$CLUSTER/client.log" | tail -n 1)
echo "A: ${line#*: }"
n=$(echo "$line" | sed -n 's/.*async unlink[^0-9]*\([0-9][0-9]*\).*/\1/p')
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "mount A made no asynchronous unlink: '$line'"
ok "mount A answered $n unlinks asynchronously"
