#!/bin/bash
# Asynchronous unlink under directory delegations (issue 11, unlink;
# client/dirdeleg.h, mds/deleg.h): a mount that holds a directory's
# delegation answers unlink(2) at once and sends the UNLINKs behind; any
# other mount's request on that directory waits at the MDS until the
# holder sent them and returned the delegation.  Four mounts of one
# cluster: A (mnt) unlinks, B (mnt1) looks, C (mnt2) and D (mnt3) are
# killed.  Each case uses its own directory (a lease B holds on a
# directory would keep A from getting its delegation), and starts with the
# kernel's dentries dropped, as the core benchmark does (a name the kernel
# still caches reaches no LOOKUP, so the mount would not know its inode
# and would unlink it synchronously).
#  1. streaming: A unlinks 300 files with a loop, 100 of them while the
#     MDS is stopped (SIGSTOP, at most 2 s): some are answered meanwhile
#     (asynchronous: fails with the synchronous unlink); right after its
#     SIGCONT, B lists the directory (A's UNLINKs are still queued): none
#     of the names A unlinked, all the others; in the end both see it
#     empty; A's mount counted asynchronous unlinks (> 0).
#  2. recreate race: A unlinks x asynchronously after 60 other names, B at
#     once creates x with O_EXCL (A's unlink is done for everybody: EEXIST
#     if B's request did not wait for A's queue) and writes "B";
#     afterwards x holds "B" on both mounts (a late unlink must not remove
#     B's file: the expected inode).
#  2b. late unlink: A unlinks x with the MDS stopped (queued), A's mount
#     is stopped (SIGSTOP), B removes x (waits the recall time) and makes
#     it anew, A goes on: its UNLINK of x expects the old inode, the MDS
#     refuses it (counted on A as already gone), B's x stays.
#  2c. A unlinks x (queued behind a stopped MDS) and creates x again with
#     O_EXCL at once: the CREATE waits for the queue; the new x stays.
#  2d. A unlinks 200 names and removes the directory at once: RMDIR waits
#     for A's queue (ENOTEMPTY otherwise).
#  3. open-unlinked: A unlinks a file it holds open: fstat shows nlink 0,
#     the bytes still read, the name is gone.
#  4. EACCES (nobody, no write permission), EISDIR, ENOENT (a missing name
#     and a name already unlinked asynchronously) in a delegated directory:
#     the same answers as the synchronous unlink; nothing else removed.
#  5. durability: C unlinks 100 of 120 files (80 with the MDS stopped, so
#     that they are still queued) and fsyncs the directory; kill -9 of C's
#     mount.pfs as soon as fsync returns, then of the MDS, revive: the 100
#     stay gone, the 20 keep their bytes (fsync(dir) sent every pending
#     unlink).
#  6. kill -9 of D's mount.pfs in the middle of a stream: B's `ls` answers
#     within the recall time (pfs-mds deleg_recall_ms, 5 s) + 5 s; every
#     name listed is a whole file, every name D never unlinked is there, at
#     most async_unlink_max (128) acknowledged unlinks lost; B removes the
#     rest and the directory; lfsck finds no orphan object.
# Seen failing with: the MDS's parking off (1, 2), UNLINK's expected inode
# 0 (2b), no ordering wait before a CREATE (2c) or an RMDIR (2d),
# async_unlink=0 or pfs-mds deleg=0 (the counter).  Not with an fsyncdir
# that does not wait for the queue: its MDS_SYNC takes long enough for the
# flushers to empty it (not covered here).
# Every command on a mount runs under `run` (a time limit): a request a
# mount never answers cannot be killed, so the test fails instead, and its
# exit trap kills a mount.pfs that does not unmount within 10 s.
# timeout: 150
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
command -v jq >/dev/null || fail "jq is needed"
export LC_ALL=C
RECALL_S=5 # pfs-mds deleg_recall_ms default
QMAX=128   # mount.pfs async_unlink_max default

# unmount every mount; one whose mount.pfs does not finish unmounting in
# 10 s (a hung request) is killed, so that cleanup does not hang on it
unmount_all() {
	local f i m p u n
	for f in "$CLUSTER"/client*.pid; do
		[ -f "$f" ] || continue
		i=${f##*/client}
		m=$CLUSTER/mnt${i%.pid}
		p=$(cat "$f")
		mountpoint -q "$m" 2>/dev/null || continue
		umount "$m" 2>/dev/null &
		u=$!
		for n in $(seq 100); do kill -0 "$u" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$u" 2>/dev/null; then
			echo "$m does not unmount within 10 s: kill -9 of its mount.pfs" >&2
			kill -9 "$p" 2>/dev/null
		fi
		wait "$u" 2>/dev/null
	done
}
# (the MDS or mount A may have been left stopped by cases 1, 2b and 5)
trap '_rc=$?; for f in "$CLUSTER"/mds.pid "$CLUSTER"/client.pid; do
		[ -f "$f" ] && kill -CONT "$(cat "$f")" 2>/dev/null; done
	unmount_all; (exit $_rc); cleanup' EXIT

# run SECONDS OUT CMD...: CMD with stdout and stderr in OUT (/dev/null:
# none), in the background, waited for at most SECONDS; its status
run() {
	local s=$1 out=$2 p n
	shift 2
	"$@" > "$out" 2>&1 &
	p=$!
	for n in $(seq $((s * 20))); do
		kill -0 "$p" 2>/dev/null || { wait "$p"; return; }
		sleep 0.05
	done
	fail "no answer within $s s: $* ($(tail -c 300 "$out" 2>/dev/null))"
}

cat > "$T/h.py" <<'PY'
import errno, os, signal, sys, threading
cmd, a = sys.argv[1], sys.argv[2:]
def name(p, i): return f"{p}{i:03d}"
if cmd == "mkfiles":    # DIR PREFIX N: PREFIXnnn holding "PREFIXnnn\n"
    d, p, n = a[0], a[1], int(a[2])
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        with open(os.path.join(d, name(p, i)), "w") as f:
            f.write(name(p, i) + "\n")
elif cmd == "unl":      # DIR PREFIX FROM TO [fsync]
    d, p, lo, hi = a[0], a[1], int(a[2]), int(a[3])
    for i in range(lo, hi):
        os.unlink(os.path.join(d, name(p, i)))
    if len(a) > 4:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(fd)
        os.close(fd)
elif cmd == "unl_rmdir":  # DIR N: unlink f000..f(N-1), then rmdir DIR at once
    d, n = a[0], int(a[1])
    for i in range(n):
        os.unlink(os.path.join(d, name("f", i)))
    os.rmdir(d)
elif cmd == "ls":       # DIR: the names, sorted; a file named like a
    d = a[0]            # made one must hold its name
    names = sorted(os.listdir(d))
    for n in names:
        p = os.path.join(d, n)
        if os.path.isfile(p) and n[0] in "fk" and n[1:].isdigit():
            got = open(p).read()
            if got != n + "\n":
                sys.exit(f"{p} holds {got!r}")
    print(" ".join(names))
elif cmd == "stream_ls":  # DIR_A DIR_B MDS_PID: A unlinks f000..f299, its
    da, db, mds = a[0], a[1], int(a[2])  # f020..f119 with the MDS stopped (for
    for i in range(20):                  # at most 2 s), then B lists at once
        os.unlink(os.path.join(da, name("f", i)))
    done = threading.Event()
    def cont():
        os.kill(mds, signal.SIGCONT)
        done.set()
    timer = threading.Timer(2.0, cont)
    os.kill(mds, signal.SIGSTOP)
    timer.start()
    answered = 0
    for i in range(20, 120):
        os.unlink(os.path.join(da, name("f", i)))
        if not done.is_set():
            answered += 1
    timer.cancel()
    cont()
    seen = sorted(os.listdir(db))
    want = [name("f", i) for i in range(120, 300)]
    if seen != want:
        stale = [n for n in seen if n not in want]
        sys.exit(f"B lists {len(stale)} names A unlinked (e.g. {' '.join(stale[:5])}) and "
                 f"{len(set(want) - set(seen))} fewer of the others")
    for i in range(120, 300):
        os.unlink(os.path.join(da, name("f", i)))
    seen_b, seen_a = sorted(os.listdir(db)), sorted(os.listdir(da))
    if seen_b or seen_a:
        sys.exit(f"after A's unlinks B lists {len(seen_b)} names, A {len(seen_a)}")
    print(answered)
elif cmd == "race":     # MNT_A MNT_B N
    ma, mb, n = a[0], a[1], int(a[2])
    for k in range(5):
        # x last, after a stream: its UNLINK is still queued on A
        for i in range(n):
            os.unlink(f"{ma}/r{k}/{name('f', i)}")
        os.unlink(f"{ma}/r{k}/x")
        # A's unlink returned: x is gone for everybody, O_EXCL succeeds
        fd = os.open(f"{mb}/r{k}/x", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"B\n")
        os.close(fd)
elif cmd == "late":     # DIR_A DIR_B MDS_PID A_PID: A's UNLINK of x arrives
    da, db, mds, pa = a[0], a[1], int(a[2]), int(a[3])  # after B made x anew
    for i in range(20):
        os.unlink(os.path.join(da, name("f", i)))
    done = threading.Event()
    def cont():
        os.kill(mds, signal.SIGCONT)
        done.set()
    timer = threading.Timer(2.0, cont)
    os.kill(mds, signal.SIGSTOP)
    timer.start()
    for i in range(20, 40):
        os.unlink(os.path.join(da, name("f", i)))
    os.unlink(os.path.join(da, "x"))
    queued = 0 if done.is_set() else 1  # x answered with the MDS stopped
    os.kill(pa, signal.SIGSTOP)         # A sends nothing now
    timer.cancel()
    cont()
    try:                                # waits for the recall time, as A
        os.unlink(os.path.join(db, "x"))  # does not answer
    except FileNotFoundError:
        queued = 0
    fd = os.open(os.path.join(db, "x"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"B\n")
    os.close(fd)
    os.kill(pa, signal.SIGCONT)         # A's late UNLINK of x: -ESTALE
    fd = os.open(da, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)
    print(queued)
elif cmd == "durable":  # DIR MDS_PID C_PID: unlink f000..f099, f020.. with
    d, mds, pc = a[0], int(a[1]), int(a[2])  # the MDS stopped (at most 2 s),
    for i in range(20):                      # fsync(DIR), kill -9 of C at once
        os.unlink(os.path.join(d, name("f", i)))
    timer = threading.Timer(2.0, lambda: os.kill(mds, signal.SIGCONT))
    os.kill(mds, signal.SIGSTOP)
    timer.start()
    for i in range(20, 100):
        os.unlink(os.path.join(d, name("f", i)))
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.kill(pc, signal.SIGKILL)
    timer.cancel()
    os.kill(mds, signal.SIGCONT)
elif cmd == "same":     # DIR MDS_PID: unlink f000..f039 and x (f020.. with
    d, mds = a[0], int(a[1])  # the MDS stopped for 1 s), make x anew at once
    for i in range(20):
        os.unlink(os.path.join(d, name("f", i)))
    timer = threading.Timer(1.0, lambda: os.kill(mds, signal.SIGCONT))
    os.kill(mds, signal.SIGSTOP)
    timer.start()
    for i in range(20, 40):
        os.unlink(os.path.join(d, name("f", i)))
    os.unlink(os.path.join(d, "x"))
    fd = os.open(os.path.join(d, "x"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"A2\n")
    os.close(fd)
    timer.cancel()
    os.kill(mds, signal.SIGCONT)
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)
elif cmd == "openunl":  # DIR REF
    d, ref = a
    want = open(ref, "rb").read()
    for i in range(5):
        os.unlink(os.path.join(d, name("f", i)))
    fd = os.open(f"{d}/big", os.O_RDONLY)
    os.unlink(f"{d}/big")
    st = os.fstat(fd)
    if st.st_nlink != 0:
        sys.exit(f"fstat after unlink: nlink {st.st_nlink}")
    if st.st_size != len(want):
        sys.exit(f"fstat after unlink: size {st.st_size}")
    if os.pread(fd, len(want) + 1, 0) != want:
        sys.exit("bytes differ after unlink")
    if os.path.lexists(f"{d}/big"):
        sys.exit("the unlinked name is still there")
    os.close(fd)
elif cmd == "stream":   # DIR PID N: unlink f000..f(N-1), then kill -9 PID
    d, pid, n = a[0], int(a[1]), int(a[2])
    for i in range(n):
        os.unlink(os.path.join(d, name("f", i)))
    os.kill(pid, signal.SIGKILL)
else:
    sys.exit(f"h.py: no command {cmd}")
PY
h() { run "$1" "$T/h.out" python3 "$T/h.py" "${@:2}" || fail "$2 ${*:3}: $(tail -c 500 "$T/h.out")"; }
# names DIR: got= what h.py ls prints (the names, contents checked)
names() { h 20 ls "$1"; got=$(cat "$T/h.out"); }
# seq_names PREFIX FROM TO: PREFIXnnn for nnn in [FROM, TO), one line
seq_names() { python3 -c 'import sys; p, a, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]); print(" ".join(f"{p}{i:03d}" for i in range(a, b)))' "$@"; }
# the kernel forgets the names it caches (the mounts then see LOOKUPs)
cold() { echo 2 > /proc/sys/vm/drop_caches; }

start_cluster --oss 2 --mounts 4 --mount-opt log_level=info
MNTB=$CLUSTER/mnt1
MNTC=$CLUSTER/mnt2
MNTD=$CLUSTER/mnt3
# delegations need each mount's notify channel
for l in client client1 client2 client3; do
	for _ in $(seq 100); do grep -q "notify channel up" "$CLUSTER/$l.log" && break; sleep 0.1; done
	grep -q "notify channel up" "$CLUSTER/$l.log" || fail "no notify channel in $l.log"
done

# ---- 1. streaming
h 60 mkfiles "$MNT/s" f 300
cold
t0=$(date +%s%N)
PFS_JOBID=ua_stream h 30 stream_ls "$MNT/s" "$MNTB/s" "$(cat "$CLUSTER/mds.pid")"
t1=$(date +%s%N)
stopped=$(cat "$T/h.out")
# unlinks answered while the MDS could answer nothing: asynchronous
[ "$stopped" -gt 0 ] || fail "A answered no unlink while the MDS was stopped"
run 20 /dev/null stat "$MNT/s/f150" && fail "A: stat of an unlinked name succeeds"
echo "  the stream's MDS requests: $(admin --json jobstats | jq -c '[.jobs[] |
	select(.job == "ua_stream") | .mds_ops[] | {(.op): .count}] | add')"
ok "300 unlinks on A ($stopped of 100 answered while the MDS was stopped), ls on B at once: none of them ($(( (t1 - t0) / 1000000 )) ms in all)"

# ---- 2. recreate race, five directories
for k in 0 1 2 3 4; do
	h 20 mkfiles "$MNT/r$k" f 60
	run 20 /dev/null sh -c "echo A > '$MNT/r$k/x'" || fail "r$k/x"
done
cold
h 60 race "$MNT" "$MNTB" 60
# flush what A may still have, then give a late unlink time to do harm
for k in 0 1 2 3 4; do h 20 unl "$MNT/r$k" f 0 0 fsync; done
sleep 1
for k in 0 1 2 3 4; do
	for m in "$MNT" "$MNTB"; do
		names "$m/r$k"
		[ "$got" = x ] || fail "r$k on $m: $got"
		run 20 "$T/x" cat "$m/r$k/x"
		[ "$(cat "$T/x")" = B ] || fail "r$k/x on $m after the race: $(cat "$T/x")"
	done
done
ok "unlink on A then create on B at once: B's file stays, on both mounts"

# ---- 2b. A late UNLINK (its mount stopped past the recall time) of a
# name B removed and made anew: the expected inode keeps B's file
h 20 mkfiles "$MNT/l" f 40
run 20 /dev/null sh -c "echo A > '$MNT/l/x'" || fail "l/x"
cold
h 40 late "$MNT/l" "$MNTB/l" "$(cat "$CLUSTER/mds.pid")" "$(cat "$CLUSTER/client.pid")"
late_queued=$(cat "$T/h.out")
sleep 0.5
for m in "$MNT" "$MNTB"; do
	names "$m/l"
	[ "$got" = x ] || fail "l on $m: $got"
	run 20 "$T/x" cat "$m/l/x"
	[ "$(cat "$T/x")" = B ] || fail "l/x on $m after A's late unlink: $(cat "$T/x")"
done
ok "A's unlink of x sent after B removed and made x anew (queued on A: $late_queued): B's x stays"

# ---- 2c. the same mount makes a name anew right after unlinking it
h 20 mkfiles "$MNT/m" f 40
run 20 /dev/null sh -c "echo A > '$MNT/m/x'" || fail "m/x"
cold
h 30 same "$MNT/m" "$(cat "$CLUSTER/mds.pid")"
sleep 0.5
for mt in "$MNT" "$MNTB"; do
	names "$mt/m"
	[ "$got" = x ] || fail "m on $mt: $got"
	run 20 "$T/x" cat "$mt/m/x"
	[ "$(cat "$T/x")" = A2 ] || fail "m/x on $mt: $(cat "$T/x")"
done
ok "unlink of x on A, then O_EXCL create of x on A at once: the new x stays"

# ---- 2d. rmdir right after a stream: RMDIR waits for A's queue
h 30 mkfiles "$MNT/q" f 200
cold
h 30 unl_rmdir "$MNT/q" 200
run 20 /dev/null stat "$MNTB/q" && fail "q still there on B after its rmdir on A"
ok "rmdir on A right after 200 unlinks there: done, gone on B"

# ---- 3. open-unlinked
h 20 mkfiles "$MNT/o" f 10
head -c 300000 /dev/urandom > "$T/ref"
run 20 /dev/null cp "$T/ref" "$MNT/o/big" || fail "cp big"
cold
h 30 openunl "$MNT/o" "$T/ref"
names "$MNTB/o"
[ "$got" = "$(seq_names f 5 10)" ] || fail "o on B: '$got'"
ok "a file open on A, unlinked: nlink 0, bytes read, name gone on A and B"

# ---- 4. errors answered as before, in a delegated directory
h 20 mkfiles "$MNT/e" f 10
run 20 /dev/null sh -c "chmod 0755 '$MNT/e' && echo keep > '$MNT/e/n' && mkdir '$MNT/e/sub'" ||
	fail "e's setup"
cold
h 20 unl "$MNT/e" f 0 6
# expect_err MESSAGE CMD...: CMD, run in e (the test's directory is 0700),
# fails with MESSAGE
expect_err() {
	local want=$1
	shift
	run 20 "$T/err" sh -c 'cd "$0" && exec "$@"' "$MNT/e" "$@" && fail "$* succeeded, want '$want'"
	grep -q "$want" "$T/err" || fail "$*: '$(cat "$T/err")', want '$want'"
}
expect_err "Permission denied" setpriv --reuid=65534 --regid=65534 --clear-groups unlink n
expect_err "Is a directory" unlink sub
expect_err "No such file or directory" unlink missing
expect_err "No such file or directory" unlink f005
run 20 /dev/null unlink "$MNT/e/f006" || fail "unlink e/f006"
expect_err "No such file or directory" unlink f006
names "$MNTB/e"
[ "$got" = "f007 f008 f009 n sub" ] || fail "e on B: '$got'"
run 20 "$T/x" cat "$MNTB/e/n"
[ "$(cat "$T/x")" = keep ] || fail "e/n on B: $(cat "$T/x")"
ok "EACCES, EISDIR, ENOENT (missing, already unlinked) as before; nothing else removed"

# ---- 5. durability: fsync(dir), kill -9 of the unlinking mount and the MDS
h 30 mkfiles "$MNTC/p" f 100
h 20 mkfiles "$MNTC/p" k 20
cold
up0=$(grep -c "the MDS restarted" "$CLUSTER/client3.log")
h 30 durable "$MNTC/p" "$(cat "$CLUSTER/mds.pid")" "$(cat "$CLUSTER/client2.pid")"
"$REPO/deploy/pfs-cluster" kill "$CLUSTER" mds || fail "kill mds"
"$REPO/deploy/pfs-cluster" revive "$CLUSTER" > /dev/null || fail "revive"
names "$MNTB/p"
[ "$got" = "$(seq_names k 0 20)" ] || fail "p on B after fsync(p), kill -9 of C and the MDS: '$got'"
# D asks for delegations again once its channel is back
for _ in $(seq 150); do
	[ "$(grep -c "the MDS restarted" "$CLUSTER/client3.log")" -gt "$up0" ] && break
	sleep 0.1
done
[ "$(grep -c "the MDS restarted" "$CLUSTER/client3.log")" -gt "$up0" ] ||
	fail "D's notify channel not up again within 15 s of the MDS's revive"
ok "100 unlinks and fsync(dir) on C, kill -9 of C and the MDS: the 100 stay gone, the 20 kept"

# ---- 6. kill -9 of D's mount.pfs in the middle of a stream
h 60 mkfiles "$MNTD/k" f 300
cold
h 30 stream "$MNTD/k" "$(cat "$CLUSTER/client3.pid")" 150
t0=$(date +%s%N)
run 30 /dev/null ls -A "$MNTB/k" || fail "ls k on B after D's kill -9"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
names "$MNTB/k"
[ "$ms" -le $(( (RECALL_S + 5) * 1000 )) ] ||
	fail "ls k on B took $ms ms after D's kill -9 (recall time ${RECALL_S} s + 5 s)"
lost=0
for n in $got; do
	case $n in f[0-9][0-9][0-9]) ;; *) fail "k on B lists '$n'" ;; esac
	[ "$((10#${n#f}))" -lt 150 ] && lost=$((lost + 1))
done
missing=$(comm -23 <(seq_names f 150 300 | tr ' ' '\n') <(echo "$got" | tr ' ' '\n'))
[ -z "$missing" ] || fail "names D never unlinked are missing on B: $(echo $missing)"
[ "$lost" -le $QMAX ] || fail "$lost acknowledged unlinks lost by D's kill -9 (cap $QMAX)"
run 30 /dev/null sh -c "cd '$MNTB/k' && rm -f -- f* && cd / && rmdir '$MNTB/k'" ||
	fail "rm and rmdir of k on B"
ok "D killed after 150 unlinks: B's ls in $ms ms, $lost acknowledged unlinks lost (cap $QMAX), namespace whole"

run 30 "$T/lf" admin --json lfsck --dry-run || fail "lfsck --dry-run: $(cat "$T/lf")"
read -r reached orph < <(jq -r '"\([.osts[] | select(.reached)] | length) \(.orphaned)"' "$T/lf")
[ "$reached" = 2 ] || fail "lfsck --dry-run reached $reached of 2 OSTs: $(cat "$T/lf")"
[ "$orph" = 0 ] || fail "lfsck --dry-run: $orph orphan objects: $(cat "$T/lf")"
ok "lfsck --dry-run: no orphan object"

# ---- A's counters (logged when it unmounts)
run 30 /dev/null umount "$MNT" || fail "umount A"
line=$(grep -h "async unlink:" "$CLUSTER/client.log" | tail -n 1)
echo "A: ${line#*info: }"
n=$(echo "$line" | sed -n 's/.*async unlink: \([0-9][0-9]*\) unlinks answered at once.*/\1/p')
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "mount A made no asynchronous unlink: '$line'"
ok "mount A answered $n unlinks asynchronously"
# 2b's late UNLINK of x was refused (-ESTALE) as expected
gone=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) already gone on the MDS.*/\1/p')
if [ "$late_queued" = 1 ]; then
	[ -n "$gone" ] && [ "$gone" -gt 0 ] || fail "A's late unlink of l/x was not refused: '$line'"
	ok "A's late unlink was refused by the MDS ($gone already gone)"
fi
