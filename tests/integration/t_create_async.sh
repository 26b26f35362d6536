#!/bin/bash
# Asynchronous create (client/dirdeleg.h "Asynchronous create", mount.pfs
# async_create): a mount that holds a directory's delegation and has listed
# it answers creates of new names from slots the MDS reserved for it and
# sends the CREATEs later, held async_hold_ms (here 3 s, so that
# they are still queued when the faults below strike).  Two mounts of one
# cluster: A (mnt) creates, B (mnt1) checks from outside.
#  1. storm: A makes 200 files with 4 threads in a set-gid directory of
#     group 4242 as uid 1000 (the set-gid bit it asks for is dropped: not in
#     the group); A's own stat of each (the attributes it answered) must
#     equal B's (the MDS's, after B's access recalled the delegation): inode,
#     mode, owner, group.
#  2. data: A creates w, writes 1 MiB, closes; B reads it byte for byte
#     (close-to-open across the asynchronous create).
#  3. fsync: A creates f and writes it, fsyncs it, and is killed -9 at once;
#     B finds f with its bytes.  A creates g and fsyncs the directory; after
#     kill -9 of A, g exists.
#  4. MDS restart: A creates 40 files (held), the MDS is killed -9 and
#     revived; the slots are records of the MDS's database, so every create
#     lands: B lists all 40.
#  5. A's counters (logged at unmount): creates answered at once, sent
#     closed (no CLOSE after), in batches; none failed.
# Seen failing with slots kept only in the MDS's memory (4: the creates
# come back -ESTALE and the files vanish) and with the file's first write
# not waiting for its CREATE (2: ENOENT from the MDS at the write).
# timeout: 180
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 0; }
command -v setpriv >/dev/null || { echo "skip: no setpriv"; exit 0; }
export LC_ALL=C
PY=/usr/bin/python3
C="$REPO/deploy/pfs-cluster"

cat > "$T/h.py" <<'PY'
import os, sys, threading
cmd, a = sys.argv[1], sys.argv[2:]
def st(p):
    s = os.stat(p)
    return f"{s.st_ino} {s.st_mode:o} {s.st_uid} {s.st_gid}"
if cmd == "storm":       # DIR N: 4 threads make DIR/c<t>_<i> with 02644, print their stats
    d, n = a[0], int(a[1])
    out, errs, lock = {}, [], threading.Lock()
    def work(t):
        try:
            for i in range(n // 4):
                p = os.path.join(d, f"c{t}_{i:03d}")
                os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o2644))
                s = st(p)
                with lock:
                    out[os.path.basename(p)] = s
        except OSError as e:
            errs.append(str(e))
    th = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for x in th: x.start()
    for x in th: x.join()
    if errs: sys.exit("; ".join(errs))
    for k in sorted(out): print(k, out[k])
elif cmd == "stats":     # DIR: name and stat of every entry, sorted
    for k in sorted(os.listdir(a[0])): print(k, st(os.path.join(a[0], k)))
elif cmd == "mkwrite":   # FILE SRC [fsync]: create FILE (O_EXCL), write SRC's bytes, maybe fsync
    data = open(a[1], "rb").read()
    fd = os.open(a[0], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    os.write(fd, data)
    if len(a) > 2: os.fsync(fd)
    os.close(fd)
elif cmd == "mkdirsync": # DIR NAME: create DIR/NAME, fsync DIR
    os.close(os.open(os.path.join(a[0], a[1]), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    fd = os.open(a[0], os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)
elif cmd == "mk":        # DIR N: create DIR/m000.. (O_EXCL)
    for i in range(int(a[1])):
        os.close(os.open(os.path.join(a[0], f"m{i:03d}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
PY
chmod 755 "$T" && chmod 644 "$T/h.py"

# counters the mount logged at unmount: "N creates answered at once (K closed ..."
created() { grep -ho "[0-9]* creates answered at once ([0-9]* closed before sent, [0-9]* failed, [0-9]* in [0-9]* batches)" "$CLUSTER/$1.log" | tail -1; }

start_cluster --oss 2 --mounts 2 --mount-opt log_level=info --mount-opt async_hold_ms=3000
MNTB=$CLUSTER/mnt1
for l in client client1; do
	for _ in $(seq 100); do grep -q "notify channel up" "$CLUSTER/$l.log" && break; sleep 0.1; done
	grep -q "notify channel up" "$CLUSTER/$l.log" || fail "no notify channel in $l.log"
done

# ---- 1. storm, and the attributes A answered against the MDS's
mkdir "$MNT/s" && chgrp 4242 "$MNT/s" && chmod 2777 "$MNT/s" || fail "set-gid directory"
timeout 60 setpriv --reuid 1000 --regid 1000 --clear-groups $PY "$T/h.py" storm "$MNT/s" 200 \
	> "$T/a.st" 2> "$T/a.err" || fail "storm on A: $(cat "$T/a.err")"
timeout 30 $PY "$T/h.py" stats "$MNTB/s" > "$T/b.st" || fail "stats on B"
[ "$(wc -l < "$T/a.st")" = 200 ] || fail "A made $(wc -l < "$T/a.st") files, not 200"
diff "$T/a.st" "$T/b.st" > "$T/st.diff" || fail "A's answers differ from the MDS's: $(head -5 "$T/st.diff")"
head -1 "$T/b.st" | grep -q " 100644 1000 4242$" || fail "owner, group or mode wrong: $(head -1 "$T/b.st")"
ok "200 creates on A as uid 1000 in a set-gid directory: B sees the inode, mode, owner and group A answered"

# ---- 2. data after close
mkdir "$MNT/d" || fail "mkdir d"
head -c 1048576 /dev/urandom > "$T/src"
timeout 30 $PY "$T/h.py" mk "$MNT/d" 3 || fail "warm-up creates"
timeout 30 $PY "$T/h.py" mkwrite "$MNT/d/w" "$T/src" || fail "create and write w on A"
cmp -s "$T/src" "$MNTB/d/w" || fail "B reads w wrong"
ok "a file created asynchronously, written and closed on A reads back on B"

# ---- 3. fsync, then kill -9 of A
mkdir "$MNT/f" || fail "mkdir f"
timeout 30 $PY "$T/h.py" mk "$MNT/f" 3 || fail "warm-up creates"
timeout 30 $PY "$T/h.py" mkwrite "$MNT/f/f" "$T/src" fsync || fail "create, write, fsync f on A"
timeout 30 $PY "$T/h.py" mkdirsync "$MNT/f" g || fail "create g, fsync f on A"
"$C" kill "$CLUSTER" client KILL || fail "kill -9 A"
umount -l "$MNT" 2>/dev/null
cmp -s "$T/src" "$MNTB/f/f" || fail "f lost or wrong after kill -9 of A"
[ -e "$MNTB/f/g" ] || fail "g lost after fsync of its directory and kill -9 of A"
ok "fsync'd creates survive kill -9 of the mount"

# ---- 4. MDS restart with held creates (on B, the one mount left)
mkdir "$MNTB/r" || fail "mkdir r"
timeout 30 $PY "$T/h.py" mk "$MNTB/r" 40 || fail "40 creates on B"
"$C" kill "$CLUSTER" mds KILL || fail "kill -9 mds"
sleep 1
"$C" revive "$CLUSTER" >/dev/null || fail "revive mds"
n=$(timeout 60 ls "$MNTB/r" | wc -l)
[ "$n" = 40 ] || fail "after the MDS restart B lists $n of its 40 files"
ok "40 creates held across kill -9 of the MDS all landed"

# ---- 5. the counters (B unmounts: it logs them)
umount "$MNTB" || fail "umount B"
for _ in $(seq 100); do [ -n "$(created client1)" ] && break; sleep 0.1; done
line=$(created client1)
echo "B: $line"
read -r n _ _ _ _ k _ _ _ fl _ nb _ nbat _ <<< "$(echo "$line" | tr -d '(),')"
[ "${n:-0}" -ge 30 ] || fail "B answered ${n:-0} of its 40 creates at once (the first few ask for the delegation)"
[ "${fl:-1}" = 0 ] || fail "$fl asynchronous creates failed on B"
[ "${k:-0}" -ge 1 ] && [ "${nbat:-0}" -ge 1 ] || fail "no create went closed or in a batch: $line"
ok "B: $n creates answered at once, $k sent closed, $nb in $nbat batches, none failed"
