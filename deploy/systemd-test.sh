#!/bin/sh
# systemd-test.sh — `make systemd-test`: the Debian package of `make deb`,
# installed and run by systemd as a site runs it (deploy/README-containers.md
# "Services on hosts: systemd"), in a podman container whose PID 1 is
# systemd (this machine has none of its own).
#
#   1. podman as for compose-test (deploy/podman-env.sh), the base image;
#   2. `make deb`; an image with systemd and the package's dependencies
#      (the package itself installed once and removed again: apt resolves
#      its Depends from the mirror);
#   3. a container with systemd as PID 1 and no network but its own
#      loopback (--network none): every daemon and the mount talk over it;
#   4. inside, as an administrator would: dpkg -i (nothing enabled, nothing
#      running), keys, the two configuration files; systemctl enable --now
#      pfs-mds pfs-oss and a second OSS as pfs-oss@b; the example mount unit;
#      16 MiB striped over both OSSes, read back after the mount unit's
#      restart; kill -9 of an OSS (systemd restarts it, the file reads
#      back); a bad configuration (exit 2: not restarted); the journal;
#      dpkg -r stops the servers cleanly, dpkg --purge removes /etc/pfs and
#      keeps /var/lib/pfs;
#   5. removes the container (always: trap), prints the elapsed time.
#
# Environment: PFS_CT_ROOT, PFS_CT_RUN, PFS_CT_DRIVER as compose-test.sh
# (the image store is shared), PFS_CT_KEEP=1 leaves the container up.
# shellcheck disable=SC2016 # the single-quoted commands run in the container's shell
set -eu

T0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
IMAGE=localhost/pfs-systemd:latest
NAME=pfs-systemd-$$
SIZE_MIB=16

elapsed() { echo $(($(date +%s) - T0)); }
say() { printf 'systemd-test [%3s s]: %s\n' "$(elapsed)" "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }

# --- 1. root, podman and the base image (deploy/podman-env.sh) ------------------
# shellcheck source=deploy/podman-env.sh
. "$here/podman-env.sh"
pct_need_root "$@"
pct_init
pct_base_image

ctx=$RUN/systemd-ctx.$$
started=0
teardown() {
	rc=$?
	trap - EXIT INT TERM
	if [ "$started" = 1 ]; then
		if [ $rc != 0 ]; then
			say "--- the container's failed units and pfs journal (last 40 lines)"
			podman exec "$NAME" systemctl --failed --no-legend >&2 2>/dev/null || true
			podman exec "$NAME" journalctl --no-pager -n 40 -u 'pfs-*' -u mnt-pfs.mount >&2 2>/dev/null || true
		fi
		if [ "${PFS_CT_KEEP:-0}" = 1 ]; then
			say "PFS_CT_KEEP=1: container $NAME left up (. $ROOT/conf/env; podman exec -it $NAME bash; podman rm -f $NAME)"
		else
			podman rm -f -t 5 "$NAME" >/dev/null 2>&1 || true
		fi
	fi
	rm -rf "$ctx"
	if [ $rc = 0 ]; then say "PASS in $(elapsed) s"; else say "FAILED after $(elapsed) s"; fi
	exit $rc
}
trap teardown EXIT
trap 'say interrupted; exit 130' INT TERM

# --- 2. the package and the image -------------------------------------------------
say "make deb"
make -s -C "$repo" deb >"$RUN/systemd-deb.log" 2>&1 ||
	{ tail -20 "$RUN/systemd-deb.log" >&2; die "make deb failed (log: $RUN/systemd-deb.log)"; }
deb=$(sed -n 's/^built //p' "$RUN/systemd-deb.log" | tail -1)
if [ -z "$deb" ] || [ ! -f "$repo/$deb" ]; then die "make deb built no package"; fi
mkdir -p "$ctx"
cp "$repo/$deb" "$ctx/pfs.deb"
cat >"$ctx/Containerfile" <<EOF
FROM $BASE
COPY pfs.deb /root/pfs.deb
# systemd as PID 1, the package's dependencies (apt resolves them from the
# package, which is removed again: the test installs it with dpkg), jq for
# pfsadmin --json.
# The base image keeps no documentation (mmdebstrap's path-exclude): this
# one installs what the package ships under /usr/share/doc and man.
RUN rm -f /etc/dpkg/dpkg.cfg.d/99mmdebstrap \\
    && apt-get update \\
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
       systemd systemd-sysv dbus jq man-db /root/pfs.deb \\
    && dpkg --purge pfs \\
    && rm -rf /var/lib/apt/lists/*
STOPSIGNAL SIGRTMIN+3
CMD ["/lib/systemd/systemd"]
EOF
say "building $IMAGE with $(basename "$deb")"
t=$(date +%s)
old=$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
podman build --quiet --isolation=chroot --pull=never -f "$ctx/Containerfile" -t "$IMAGE" "$ctx" \
	>"$RUN/systemd-build.log" 2>&1 ||
	{ tail -30 "$RUN/systemd-build.log" >&2; die "image build failed (log: $RUN/systemd-build.log)"; }
# The image this build replaced (its layers stay as build cache).
if [ -n "$old" ] && [ "$old" != "$(podman image inspect --format '{{.Id}}' "$IMAGE")" ]; then
	podman rmi "$old" >/dev/null 2>&1 || true
fi
say "built in $(($(date +%s) - t)) s"

# --- 3. the container ------------------------------------------------------------
started=1
podman run -d --name "$NAME" --systemd=always --network none --cap-add SYS_ADMIN \
	--device /dev/fuse -v "$ctx/pfs.deb:/root/pfs.deb:ro" "$IMAGE" >/dev/null ||
	die "podman run failed"
# In the container, pfsadmin finds the MDS in PFS_MDS (before any mount).
cx() { podman exec -e PFS_MDS=127.0.0.1:7700 "$NAME" "$@"; }
csh() { podman exec -e PFS_MDS=127.0.0.1:7700 "$NAME" sh -ec "$1"; }
# until SECONDS CMD: CMD (in the container's shell) succeeds, or die
until_ok() {
	n=$(($1 * 4))
	while ! csh "$2" >/dev/null 2>&1; do
		n=$((n - 1))
		[ $n -gt 0 ] || die "not within $1 s: $2"
		sleep 0.25
	done
}
# Both OSTs are up in the MDS's list.
BOTH_UP='[ "$(pfsadmin --json ost list | jq "[.osts[] | select(.state == \"up\")] | length")" = 2 ]'
until_ok 60 'systemctl is-system-running | grep -Eq "^(running|degraded)$"'
say "systemd $(cx systemctl --version | head -1 | cut -d' ' -f2) is PID 1 in $NAME"

# --- 4. as an administrator would ----------------------------------------------------
cx dpkg -i /root/pfs.deb >/dev/null
for u in pfs-mds.service pfs-oss.service; do
	[ "$(cx systemctl is-enabled "$u" 2>/dev/null || true)" = disabled ] || die "$u is enabled by the install"
	[ "$(cx systemctl is-active "$u" 2>/dev/null || true)" = inactive ] || die "$u runs after the install"
done
cx man -P cat pfsadmin 2>/dev/null | grep -q "setstripe" || die "man pfsadmin does not show the manual"
say "dpkg -i: units installed, none enabled or running; man pfsadmin works"

# Keys (README.md "Keys") and the configuration files.
csh 'cd /etc/pfs
	pfsadmin key gen --role mds mds.key
	for r in oss client admin; do pfsadmin key gen --role $r --master mds.key $r.key; done
	sed -i "s|^#listen = .*|listen = 127.0.0.1:7700|" mds.conf
	sed -e "s|^#name =.*|name = b|" -e "s|^#listen_host = .*|listen_host = 127.0.0.1|" \
	    -e "s|^osts = .*|osts = /srv/pfs/ostb|" \
	    -e "s|^#data_port = .*|data_port = 7810|" -e "s|^#ctl_port = .*|ctl_port = 7811|" \
	    oss.conf >oss-b.conf
	sed -i -e "s|^#name =.*|name = a|" -e "s|^#listen_host = .*|listen_host = 127.0.0.1|" oss.conf
	mkdir -p /srv/pfs'
cx systemctl enable --now pfs-mds.service pfs-oss.service pfs-oss@b.service >/dev/null 2>&1 ||
	die "systemctl enable --now failed"
until_ok 30 "$BOTH_UP"
cx pfsadmin ost list >&2
[ "$(cx pfsadmin --json ost list | podman exec -i "$NAME" jq -r '[.osts[].oss] | sort | join(",")')" = a,b ] ||
	die "the OSTs are not served by OSS a and OSS b"
say "pfs-mds, pfs-oss and pfs-oss@b enabled and running, 2 OSTs up"

# The example mount unit, as deploy/systemd/mnt-pfs.mount says.
csh 'sed "s|^What=.*|What=127.0.0.1:7700|" /usr/share/doc/pfs/examples/mnt-pfs.mount \
	>/etc/systemd/system/mnt-pfs.mount
	mkdir -p /mnt/pfs
	systemctl daemon-reload
	systemctl start mnt-pfs.mount'
until_ok 30 'mountpoint -q /mnt/pfs && stat -f /mnt/pfs'
say "mnt-pfs.mount: $(cx findmnt -n -o SOURCE,FSTYPE /mnt/pfs)"

data=$ctx/data
head -c $((SIZE_MIB * 1048576)) /dev/urandom >"$data"
want=$(sha256sum <"$data" | cut -d' ' -f1)
# Root on a client node is squashed (root_squash): the administrator makes
# a user's directory through a mount with the admin key, and the user
# writes through the unit's mount.
csh 'useradd -m alice
	mkdir -p /mnt/admin
	mount -t pfs -o key=/etc/pfs/admin.key 127.0.0.1:7700 /mnt/admin 2>/dev/null
	mkdir /mnt/admin/alice
	chown alice: /mnt/admin/alice
	umount /mnt/admin'
cx pfsadmin setstripe -c 2 -S 1M /mnt/pfs/alice >/dev/null
if cx sh -c ': >/mnt/pfs/root-made' 2>/dev/null; then die "root on the client was not squashed"; fi
podman exec -i "$NAME" runuser -u alice -- sh -c 'cat >/mnt/pfs/alice/rand && sync' <"$data"
osts=$(cx pfsadmin --json getstripe /mnt/pfs/alice/rand | podman exec -i "$NAME" jq '[.stripes[].ost] | unique | length')
[ "$osts" = 2 ] || die "the file is on $osts OSTs, want 2"
cx systemctl restart mnt-pfs.mount
sum() { cx runuser -u alice -- sh -c 'sha256sum </mnt/pfs/alice/rand' | cut -d' ' -f1; }
got=$(sum)
[ "$got" = "$want" ] || die "sha256 after the mount unit's restart: $got, want $want"
say "$SIZE_MIB MiB written by a user over both OSSes, the same after the mount unit's restart (root squashed)"

# kill -9: Restart=on-failure brings the OSS back; the file reads back.
pid=$(cx systemctl show -P MainPID pfs-oss.service)
cx systemctl kill -s KILL --kill-whom=main pfs-oss.service
until_ok 30 '[ "$(systemctl show -P NRestarts pfs-oss.service)" -ge 1 ] && systemctl is-active -q pfs-oss.service'
until_ok 30 "$BOTH_UP"
got=$(sum)
[ "$got" = "$want" ] || die "sha256 after the OSS's restart: $got, want $want"
say "kill -9 of pfs-oss (pid $pid): systemd restarted it (pid $(cx systemctl show -P MainPID pfs-oss.service)), data intact"

# A bad configuration exits 2, which is not restarted (RestartPreventExitStatus=2).
csh 'printf "[oss]\nno_such_option = 1\n" >/etc/pfs/oss-bad.conf'
cx systemctl start pfs-oss@bad.service >/dev/null 2>&1 || true
until_ok 15 '[ "$(systemctl show -P ExecMainStatus pfs-oss@bad.service)" = 2 ]'
sleep 3 # longer than RestartSec=2s
[ "$(cx systemctl show -P NRestarts pfs-oss@bad.service)" = 0 ] ||
	die "pfs-oss@bad was restarted after exit status 2"
why=$(cx journalctl --no-pager -o cat -u pfs-oss@bad.service | grep -m1 no_such_option || true)
[ -n "$why" ] || die "the journal does not say what is wrong with oss-bad.conf"
cx systemctl reset-failed pfs-oss@bad.service
say "bad configuration: exit 2, not restarted; the journal says: $why"

# The journal has each daemon's lines (stderr, dated).
cx journalctl --no-pager -o cat -u pfs-mds.service | grep -q "serving /var/lib/pfs/mds" ||
	die "no start line of pfs-mds in the journal"

# Removal: the servers stop cleanly (SIGTERM, exit 0); purge drops /etc/pfs,
# never the data.
cx systemctl stop mnt-pfs.mount
cx dpkg -r pfs >/dev/null
for u in pfs-mds.service pfs-oss.service pfs-oss@b.service; do
	st=$(cx systemctl show -P ActiveState "$u")
	ex=$(cx systemctl show -P ExecMainStatus "$u")
	if [ "$st" != inactive ] || [ "$ex" != 0 ]; then die "$u after dpkg -r: $st, exit status $ex"; fi
done
# (dpkg warns that /etc/pfs is not empty: the keys and oss-b.conf are the site's)
cx dpkg --purge pfs >/dev/null 2>&1
csh '[ ! -e /etc/pfs/mds.conf ] && [ ! -e /etc/pfs/oss.conf ] && [ -e /etc/pfs/mds.key ] &&
	[ -d /var/lib/pfs/mds ] && [ -d /var/lib/pfs/ost0 ] && [ -d /srv/pfs/ostb ]' ||
	die "after purge: the package's /etc/pfs files should be gone; the keys, /var/lib/pfs and /srv/pfs kept"
say "dpkg -r stopped the three servers (exit 0); --purge removed the package's /etc/pfs files, kept the keys and the data"
