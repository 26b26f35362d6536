#!/bin/bash
# Negative lookups answered by the mount in a directory it holds the
# delegation of (create storms; client/dirdeleg.h "Negative lookups",
# mount.pfs neg_local).  Two mounts of one cluster: A (mnt) creates, B
# (mnt1) creates in A's directory meanwhile.
#  1. listing and recall: A creates p0..p9 in a fresh directory e (the
#     third create asks for e's delegation, the grant lists e); the
#     kernel's dentries are dropped; A stats p0..p9 (made before the
#     grant: known only from the listing; ENOENT if the listing were
#     skipped) and g (not there: answered by A, counted); then B creates
#     g (it waits at the MDS until A returns e); A stats g: it must exist
#     (A dropped completeness at the recall).
#  2. storm: A creates 300 files in a fresh directory d with 4 threads; when
#     a third is made, B creates x there with O_EXCL (must succeed: a
#     negative answer about x is never wrong on B's side, and B's CREATE
#     waits for A's return); A keeps creating.  Afterwards both mounts list
#     the 300 names and x, x once; A stats x.
#  3. A's counters (logged at unmount): negative lookups answered locally
#     > 0, at least one directory listed complete.
# Seen failing with: no listing (1: p0).  Not with negative answers that
# ignore the recall, the expiry and the credential: the mount's count of
# held delegations (0 once it returned e) still stopped them (the unit
# cases cover those checks).
# timeout: 120
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
export LC_ALL=C

unmount_all() {
	local m u n
	for m in "$CLUSTER"/mnt "$CLUSTER"/mnt1; do
		mountpoint -q "$m" 2>/dev/null || continue
		umount "$m" 2>/dev/null &
		u=$!
		for n in $(seq 100); do kill -0 "$u" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$u" 2>/dev/null && umount -l "$m" 2>/dev/null
		wait "$u" 2>/dev/null
	done
}
trap '_rc=$?; unmount_all; (exit $_rc); cleanup' EXIT

# run SECONDS OUT CMD...: CMD with its output in OUT, waited for at most
# SECONDS; its status
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
import errno, os, sys, threading
cmd, a = sys.argv[1], sys.argv[2:]
if cmd == "mk":          # DIR NAME...: create each (O_EXCL)
    for n in a[1:]:
        os.close(os.open(os.path.join(a[0], n), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
elif cmd == "exists":    # DIR NAME...: each must exist
    for n in a[1:]:
        os.stat(os.path.join(a[0], n))
elif cmd == "absent":    # DIR NAME...: each must not
    for n in a[1:]:
        try:
            os.stat(os.path.join(a[0], n))
            sys.exit(f"{n} exists")
        except FileNotFoundError:
            pass
elif cmd == "storm":     # DA DB N: 4 threads make DA/c<t>_<i>; at N/3, DB/x
    da, db, n = a[0], a[1], int(a[2])
    made = [0]
    lock = threading.Lock()
    third = threading.Event()
    errs = []
    def work(t):
        try:
            for i in range(n // 4):
                p = os.path.join(da, f"c{t}_{i:03d}")
                os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                with lock:
                    made[0] += 1
                    if made[0] >= n // 3:
                        third.set()
        except OSError as e:
            errs.append(f"A: {e}")
    th = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for x in th:
        x.start()
    third.wait(60)
    try:
        os.close(os.open(os.path.join(db, "x"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except OSError as e:
        errs.append(f"B: x: {e}")
    with lock:
        at = made[0]
    for x in th:
        x.join()
    if errs:
        sys.exit("; ".join(errs))
    print(at)
elif cmd == "ls":        # DIR: the names, sorted
    print(" ".join(sorted(os.listdir(a[0]))))
PY
h() { run "$1" "$T/h.out" python3 "$T/h.py" "${@:2}" || fail "$2 ${*:3}: $(tail -c 500 "$T/h.out")"; }
cold() { echo 2 > /proc/sys/vm/drop_caches; }

start_cluster --oss 2 --mounts 2 --mount-opt log_level=info
MNTB=$CLUSTER/mnt1
for l in client client1; do
	for _ in $(seq 100); do grep -q "notify channel up" "$CLUSTER/$l.log" && break; sleep 0.1; done
	grep -q "notify channel up" "$CLUSTER/$l.log" || fail "no notify channel in $l.log"
done

# ---- 1. listing and recall
mkdir "$MNT/e" || fail "mkdir e"
h 20 mk "$MNT/e" p0 p1 p2 p3 p4 p5 p6 p7 p8 p9
cold
h 20 exists "$MNT/e" p0 p1 p2 p3 p4 p5 p6 p7 p8 p9
h 20 absent "$MNT/e" g
h 20 mk "$MNTB/e" g
h 20 exists "$MNT/e" g
ok "A holds e: its earlier names found after the listing, g made by B meanwhile seen by A"

# ---- 2. storm
mkdir "$MNT/d" || fail "mkdir d"
cold
h 60 storm "$MNT/d" "$MNTB/d" 300
at=$(cat "$T/h.out")
want="$(python3 -c 'print(" ".join(sorted([f"c{t}_{i:03d}" for t in range(4) for i in range(75)] + ["x"])))')"
h 20 ls "$MNT/d"
[ "$(cat "$T/h.out")" = "$want" ] || fail "A lists d wrong: $(cat "$T/h.out" | tr ' ' '\n' | diff - <(echo "$want" | tr ' ' '\n') | head)"
h 20 ls "$MNTB/d"
[ "$(cat "$T/h.out")" = "$want" ] || fail "B lists d wrong: $(cat "$T/h.out" | tr ' ' '\n' | diff - <(echo "$want" | tr ' ' '\n') | head)"
h 20 exists "$MNT/d" x
ok "300 creates on A with 4 threads, x on B after $at of them: both see all 301 names, x once"

# ---- 3. A's counters (logged when it unmounts)
run 30 /dev/null umount "$MNT" || fail "umount A"
line=$(grep -h "async unlink:" "$CLUSTER/client.log" | tail -n 1)
echo "A: ${line#*info: }"
n=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) negative lookups answered locally.*/\1/p')
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "A answered no negative lookup itself: '$line'"
l=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) directories listed complete.*/\1/p')
[ -n "$l" ] && [ "$l" -gt 0 ] || fail "A listed no directory complete: '$line'"
ok "A answered $n negative lookups itself ($l directories listed complete)"
