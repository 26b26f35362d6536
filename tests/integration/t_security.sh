#!/bin/bash
# The attacks of issue 7, each against a cluster in its default trust
# configuration (authentication on, root squash on), each refused with the
# expected error, and after each the daemons still serve a normal client (a
# stat and a 1 MiB O_DIRECT read through the mount, sha256 checked):
#  - a keyless connection (user nobody: the key files are root-only, so
#    nobody cannot even load one) is dropped before any frame is answered,
#    on the MDS and on both OSS ports;
#  - uid 0 forged over a client key is squashed: no mkdir under root's 0700
#    directory, no SETSIZE of root's 0600 file (the admin key, not
#    squashed, can: the requests are well formed);
#  - SETSIZE of root's 0600 file as uid 4242: refused, size unchanged;
#  - OSS_REGISTER (new OST, or an existing OST's uuid at another host) and
#    OSS_HEARTBEAT with a client or admin key: refused, the OST list
#    (pfsadmin ost list) unchanged;
#  - OSS_DESTROY of a file's object with a client key, an admin key (and
#    on the data port): refused, the file's data intact (sha256); with the
#    mds key it is accepted (for a missing object), so the frame is right;
#  - READ/WRITE/TRUNCATE of an object without a capability, with forged
#    ones (random key; a real read capability widened to write; a real one
#    used by another client id) and with an expired one minted under the
#    real capability key: refused (-EACCES, -EKEYEXPIRED), while the same
#    read with the capability the MDS gave, or a fresh minted one, works;
#  - a replayed frame and a frame modified after sealing: the connection is
#    closed without a reply (MDS and OSS);
#  - keys of the wrong role: client -> admin opcodes (MDS QOS_SHOW, OSS
#    NRS_RULE), oss -> namespace opcodes: -EACCES; a key of another
#    cluster fails the handshake;
#  - a world-readable key file is refused at start by pfs-mds, pfs-oss,
#    mount.pfs and pfsadmin with a message naming the file.
# Requests come from tools/sec_probe (one chosen frame, chosen key).
# timeout: 180
. "$(dirname "$0")/lib.sh"

P=$TOOLS/sec_probe
[ -x "$P" ] || fail "no $P (build the integration tools)"
start_cluster --oss 2 --mds-opt root_squash=on
K=$CLUSTER/keys
CK=$K/client.key
AK=$K/admin.key
[ -f "$CK" ] && [ -f "$AK" ] || fail "pfs-cluster made no keys in $K"
A() { "$PFS_BIN/pfsadmin" --key "$AK" --mds "$MDS" "$@"; }
# The data and control ports of the OSS serving OST 0 (indexes follow the
# order the OSSes registered in, not their names).
D0=127.0.0.1:$(A --json ost list | jq -r '.osts[] | select(.index == 0) | .data_port')
C0=127.0.0.1:$(A --json ost list | jq -r '.osts[] | select(.index == 0) | .ctl_port')
OSS_OF0=$(A --json ost list | jq -r '.osts[] | select(.index == 0) | .oss')
case "$D0 $C0" in *:null* | *": "* | *:) fail "no OST 0 in $(A ost list)" ;; esac

# probe WANT WHAT ARGS...: sec_probe ARGS must print a line starting with
# WANT ("ok", "status EACCES", "closed", "handshake refused", "key refused").
probe() {
	local want=$1 what=$2 out
	shift 2
	out=$("$P" "$@" 2>&1)
	case $out in
	"$want"*) echo "   $what: $out" ;;
	*) fail "$what: sec_probe $* says '$out', want '$want...'" ;;
	esac
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; } # field NAME < 'ok a=1 NAME=v'

# --- fixtures: root's 0700 dir and 0600 file (admin key: not squashed),
# a world-writable directory where the mount (root, squashed) keeps a file.
out=$("$P" --key "$AK" --cred 0:0 "$MDS" mkdir 1 secret 0700) || fail "admin mkdir: $out"
SECRET=$(echo "$out" | field ino)
out=$("$P" --key "$AK" --cred 0:0 "$MDS" create 1 rootfile 0600) || fail "admin create: $out"
ROOTFILE=$(echo "$out" | field ino)
"$P" --key "$AK" --cred 0:0 "$MDS" mkdir 1 pub 1777 >/dev/null || fail "admin mkdir pub"
head -c $((4 << 20)) /dev/urandom >"$T/data"
cp "$T/data" "$MNT/pub/f" || fail "write through the mount"
SUM=$(sha256sum <"$T/data" | cut -d' ' -f1)
PUB=$("$P" --key "$AK" --cred 0:0 "$MDS" lookup 1 pub | field ino)
FINO=$("$P" --key "$AK" --cred 0:0 "$MDS" lookup "$PUB" f | field ino)
[ -n "$SECRET" ] && [ -n "$ROOTFILE" ] && [ -n "$FINO" ] || fail "fixture inodes: '$SECRET' '$ROOTFILE' '$FINO'"
# The file's stripe on OST 0 (served by OSS 0) and its object.
OBJ0=$(A --json getstripe "$MNT/pub/f" | jq -r '.stripes[] | select(.ost == 0) | .object')
[ -n "$OBJ0" ] || fail "no stripe of the file on OST 0: $(A getstripe "$MNT/pub/f")"
osts() { A --json ost list | jq -c '[.osts[] | {index, uuid, oss, host, data_port, ctl_port}]'; }
OSTS=$(osts)
UUID0=$(A --json ost list | jq -r '.osts[] | select(.index == 0) | .uuid')

# serves: a normal client still gets a stat and a 1 MiB read (O_DIRECT, so
# it reaches the OSSes) right, and the file is whole.
n_served=0
serves() {
	local skip=$((n_served % 4))
	stat "$MNT/pub/f" >/dev/null || fail "after $1: stat through the mount"
	[ "$(dd if="$MNT/pub/f" bs=1M count=1 skip=$skip iflag=direct 2>/dev/null | sha256sum)" = \
		"$(dd if="$T/data" bs=1M count=1 skip=$skip 2>/dev/null | sha256sum)" ] ||
		fail "after $1: the 1 MiB read through the mount is wrong"
	n_served=$((n_served + 1))
	ok "$1"
}
serves "fixtures (root's 0700 dir $SECRET, 0600 file $ROOTFILE, data file $FINO)"

# --- no key: user nobody, and a keyless connection ---------------------------------
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$P" --key "$CK" "$MDS" ping 2>&1)
case $out in "key refused"*) ;; *) fail "nobody used the root-only client key: $out" ;; esac
for a in "$MDS" "$D0" "$C0"; do
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$P" --no-key "$a" ping 2>&1)
	case $out in closed*) echo "   nobody, no key, PING to $a: $out" ;;
	*) fail "a keyless PING to $a was answered: $out" ;; esac
done
probe closed "no key, MKDIR uid 0 under root's dir" --no-key --cred 0:0 "$MDS" mkdir "$SECRET" nokey 0755
probe closed "no key, OSS_DESTROY" --no-key "$C0" destroy 0 "$OBJ0"
serves "keyless connections (nobody cannot read the root-only key) are dropped before any frame"

# --- forged uid 0 over a client key: squashed ------------------------------------------
probe "status EACCES" "client key, uid 0, mkdir in root's 0700 dir" --key "$CK" --cred 0:0 \
	"$MDS" mkdir "$SECRET" forged 0755
probe "status EACCES" "client key, uid 0, SETSIZE of root's 0600 file" --key "$CK" --cred 0:0 \
	"$MDS" setsize "$ROOTFILE" 1000000
probe ok "admin key (not squashed), uid 0, mkdir there" --key "$AK" --cred 0:0 \
	"$MDS" mkdir "$SECRET" byadmin 0755
[ "$("$P" --key "$AK" --cred 0:0 "$MDS" lookup "$SECRET" forged | cut -d' ' -f1-2)" = "status ENOENT" ] ||
	fail "the squashed mkdir made the directory"
serves "uid 0 from a client key is squashed (root_squash=on)"

# --- SETSIZE as uid 4242 --------------------------------------------------------------------
probe "status EACCES" "client key, uid 4242, SETSIZE of root's 0600 file" --key "$CK" \
	--cred 4242:4242 "$MDS" setsize "$ROOTFILE" 1000000
[ "$("$P" --key "$AK" "$MDS" getattr "$ROOTFILE" | field size)" = 0 ] || fail "root's file changed size"
serves "SETSIZE of another user's 0600 file refused, size unchanged"

# --- OSS_REGISTER / HEARTBEAT from the wrong keys -------------------------------------------
for k in "$CK" "$AK"; do
	r=$(basename "$k" .key)
	probe "status EACCES" "$r key, OSS_REGISTER of a new OST at 10.6.6.6" --key "$k" \
		"$MDS" register evil 10.6.6.6 7800 7801 evil-uuid
	probe "status EACCES" "$r key, OSS_REGISTER of OST 0's uuid at 10.6.6.6" --key "$k" \
		"$MDS" register "$OSS_OF0" 10.6.6.6 7800 7801 "$UUID0"
	probe "status EACCES" "$r key, OSS_HEARTBEAT for $OSS_OF0" --key "$k" "$MDS" heartbeat "$OSS_OF0" 0
done
[ "$(osts)" = "$OSTS" ] || fail "the OST list changed: $(osts), was $OSTS"
A df >"$T/df" || fail "pfsadmin df"
grep -q "10.6.6.6\|evil" "$T/df" && fail "pfsadmin df shows the attacker: $(cat "$T/df")"
serves "OSS_REGISTER/HEARTBEAT from client and admin keys refused, OST list unchanged"

# --- OSS_DESTROY -----------------------------------------------------------------------------
probe "status EACCES" "client key, OSS_DESTROY of the file's object" --key "$CK" "$C0" destroy 0 "$OBJ0"
probe "status EACCES" "admin key, OSS_DESTROY of the file's object" --key "$AK" "$C0" destroy 0 "$OBJ0"
probe "status EACCES" "client key, OSS_DESTROY on the data port" --key "$CK" "$D0" destroy 0 "$OBJ0"
probe ok "mds key, OSS_DESTROY of a missing object (the frame is right)" --key "$K/mds.key" \
	"$C0" destroy 0 999999999
[ "$(dd if="$MNT/pub/f" bs=1M iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)" = "$SUM" ] ||
	fail "the file's data changed after the OSS_DESTROY attempts"
serves "OSS_DESTROY from client and admin keys refused, data intact (sha256)"

# --- object access without a valid capability --------------------------------------------------
CID=0x5ec0001
caps=$("$P" --key "$CK" --client-id $CID "$MDS" open "$FINO" r) || fail "OPEN: $caps"
# the capability of the stripe on OST 0 (its first 8 hex digits: ost, LE)
CAP=$(echo "$caps" | field caps | tr ',' '\n' | grep '^00000000' | head -1)
[ ${#CAP} = 96 ] || fail "no OST 0 capability in '$caps'"
probe ok "READ with the MDS's capability" --key "$CK" --client-id $CID --capa "$CAP" "$D0" read 0 "$OBJ0" 0 4096
probe "status EACCES" "READ without a capability" --key "$CK" --client-id $CID "$D0" read 0 "$OBJ0" 0 4096
probe "status EACCES" "WRITE without a capability" --key "$CK" --client-id $CID "$D0" write 0 "$OBJ0" 0 4096
probe "status EACCES" "TRUNCATE without a capability" --key "$CK" --client-id $CID "$D0" truncate 0 "$OBJ0" 0
probe "status EACCES" "WRITE with the read capability" --key "$CK" --client-id $CID --capa "$CAP" \
	"$D0" write 0 "$OBJ0" 0 4096
# rights field (hex digits 24..31) widened to read|write: the MAC no longer fits
probe "status EACCES" "WRITE with the read capability widened to write" --key "$CK" --client-id $CID \
	--capa "${CAP:0:24}03000000${CAP:32}" "$D0" write 0 "$OBJ0" 0 4096
probe "status EACCES" "READ with another client's capability" --key "$CK" --client-id 0x77 \
	--capa "$CAP" "$D0" read 0 "$OBJ0" 0 4096
probe "status EACCES" "WRITE with a capability forged under a random key" --key "$CK" \
	--mint random:7:600 "$D0" write 0 "$OBJ0" 0 4096
probe "status EACCES" "TRUNCATE with a forged capability" --key "$CK" --mint random:7:600 \
	"$D0" truncate 0 "$OBJ0" 0
probe ok "READ with a fresh capability under the real key (control)" --key "$CK" \
	--mint "$K/mds.key:1:60" "$D0" read 0 "$OBJ0" 0 4096
probe "status EKEYEXPIRED" "READ with an expired capability" --key "$CK" \
	--mint "$K/mds.key:1:-5" "$D0" read 0 "$OBJ0" 0 4096
probe "status EKEYEXPIRED" "WRITE with an expired capability" --key "$CK" \
	--mint "$K/mds.key:7:-5" "$D0" write 0 "$OBJ0" 0 4096
[ "$(dd if="$MNT/pub/f" bs=1M iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)" = "$SUM" ] ||
	fail "the file's data changed after the capability attempts"
serves "READ/WRITE/TRUNCATE without, with forged and with expired capabilities refused"

# --- replayed and modified frames -------------------------------------------------------------------
for a in "$MDS" "$D0"; do
	probe closed "a replayed PING to $a" --key "$CK" --tamper replay "$a" ping
	probe closed "a PING to $a modified after sealing" --key "$CK" --tamper modify "$a" ping
done
probe closed "a SETSIZE modified after sealing" --key "$AK" --tamper modify "$MDS" setsize "$ROOTFILE" 1
[ "$("$P" --key "$AK" "$MDS" getattr "$ROOTFILE" | field size)" = 0 ] || fail "the modified SETSIZE was applied"
serves "replayed and modified frames close the connection unanswered"

# --- wrong-role keys -------------------------------------------------------------------------------
probe "status EACCES" "client key, MDS_QOS_SHOW (admin)" --key "$CK" "$MDS" qos_show
probe ok "admin key, MDS_QOS_SHOW (control)" --key "$AK" "$MDS" qos_show
probe "status EACCES" "client key, OSS_NRS_RULE list (admin)" --key "$CK" "$C0" nrs_list
probe ok "admin key, OSS_NRS_RULE list (control)" --key "$AK" "$C0" nrs_list
probe "status EACCES" "oss key, MDS_MKDIR" --key "$K/oss.key" --cred 0:0 "$MDS" mkdir 1 byoss 0755
"$PFS_BIN/pfsadmin" key gen --role mds "$T/other.key" >/dev/null || fail "key gen"
probe "handshake refused" "another cluster's mds key" --key "$T/other.key" "$MDS" ping
serves "keys of the wrong role refused for other roles' opcodes"

# --- world-readable key files ------------------------------------------------------------------------
for r in mds oss client admin; do
	cp "$K/$r.key" "$T/ww-$r.key"
	chmod 644 "$T/ww-$r.key"
done
chmod 640 "$T/ww-admin.key" # group-readable is refused too
# refused WHAT CMD...: CMD fails, naming the file and why, within 10 s.
refused() {
	local what=$1 out rc
	shift
	out=$(timeout 10 "$@" 2>&1 </dev/null)
	rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "$what started with a world-readable key (exit $rc): $out"
	echo "$out" | grep -q "ww-.*\.key.*permission" ||
		fail "$what: no clear message naming the key file: $out"
	echo "   $what: $(echo "$out" | grep "ww-" | head -1)"
}
refused pfs-mds "$PFS_BIN/pfs-mds" --auth_key="$T/ww-mds.key" --db="$T/wwdb" --listen=127.0.0.1:0
refused pfs-oss "$PFS_BIN/pfs-oss" --auth_key="$T/ww-oss.key" --osts="$T/wwost" --mds="$MDS" \
	--listen_host=127.0.0.1 --data_port=0 --ctl_port=0
mkdir -p "$T/wwmnt"
refused mount.pfs "$PFS_BIN/mount.pfs" "$MDS" "$T/wwmnt" -o key="$T/ww-client.key"
mountpoint -q "$T/wwmnt" && { umount "$T/wwmnt"; fail "mount.pfs mounted with a world-readable key"; }
refused pfsadmin "$PFS_BIN/pfsadmin" --key "$T/ww-admin.key" --mds "$MDS" ost list
refused sec_probe "$P" --key "$T/ww-client.key" "$MDS" ping
serves "world-readable and group-readable key files refused at start, with the file named"
