#!/bin/sh
# compose-test.sh — `make compose-test`: the container cluster of
# deploy/docker-compose.yml, run with podman and podman-compose, end to end.
#
#   1. installs what it misses from Debian and configures podman for itself
#      (deploy/podman-env.sh: never the system's configuration);
#   2. makes the base image localhost/debian:12 with mmdebstrap when absent
#      (no image registry is needed, nor contacted);
#   3. builds localhost/pfs:latest from deploy/Dockerfile (multi-stage);
#   4. brings up the keys (one-shot), MDS + 4 OSS + client, waits until every
#      healthcheck passes, checks a peer without a key is refused;
#   5. writes 16 MiB of random data through the client's FUSE mount, striped
#      over the 4 OSTs, checks `pfsadmin getstripe` shows 4 stripes on 4 OSTs,
#      reads the file back through a second, fresh mount and compares sha256;
#   6. tears everything down (always: trap), prints the elapsed time.
#
# Environment:
#   PFS_CT_ROOT=/var/lib/pfs-compose-test   image store and configuration (kept:
#                                           the next run reuses the base image
#                                           and the build cache)
#   PFS_CT_RUN=/run/pfs-compose-test        podman's per-boot state
#   PFS_CT_DRIVER=overlay|vfs               storage driver (default: probed)
#   PFS_CT_CONTEXT=DIR                      build context (default: this checkout)
#   PFS_CT_TIMEOUT=180                      seconds to wait for the cluster's health
#   PFS_CT_KEEP=1                           leave the cluster up (no teardown)
set -eu

T0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
CONTEXT=${PFS_CT_CONTEXT:-$repo}
TIMEOUT=${PFS_CT_TIMEOUT:-180}
IMAGE=localhost/pfs:latest
COMPOSE=$here/docker-compose.yml
PROJECT=pfsct$$
NOSS=4
SIZE_MIB=16

say() { printf 'compose-test: %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }
elapsed() { echo $(($(date +%s) - T0)); }

# --- 1. root, packages and podman's configuration (deploy/podman-env.sh) ------
# shellcheck source=deploy/podman-env.sh
. "$here/podman-env.sh"
pct_need_root "$@"
pct_init

# --- teardown, always ----------------------------------------------------------
compose() { podman-compose -p "$PROJECT" -f "$COMPOSE" "$@"; }
cname() { # cname SERVICE -> container name
	podman ps -a --filter "label=io.podman.compose.project=$PROJECT" \
		--filter "label=com.docker.compose.service=$1" --format '{{.Names}}' | head -1
}
teardown() {
	rc=$?
	trap - EXIT INT TERM
	if [ "$started" = 0 ]; then
		:
	elif [ "${PFS_CT_KEEP:-0}" = 1 ]; then
		say "PFS_CT_KEEP=1: cluster $PROJECT left up; to remove it:"
		say "  . $ROOT/conf/env; podman-compose -p $PROJECT -f $COMPOSE down -v; podman network rm ${PROJECT}_default"
	else
		if [ $rc != 0 ]; then
			for s in mds oss0 oss1 oss2 oss3 client; do
				c=$(cname $s 2>/dev/null) || continue
				[ -n "$c" ] || continue
				say "--- $s: $(podman inspect --format '{{.State.Status}} exit={{.State.ExitCode}}' "$c" 2>/dev/null)"
				podman logs --tail 20 "$c" 2>&1 | sed "s/^/  $s| /" >&2 || true
			done
		fi
		compose down -v >"$RUN/down.log" 2>&1 || true
		# What podman-compose 1.0 leaves: the network (and anything a
		# failed `up` left behind).
		podman ps -aq --filter "label=io.podman.compose.project=$PROJECT" |
			xargs -r podman rm -f -v >/dev/null 2>&1 || true
		podman volume ls -q --filter "label=io.podman.compose.project=$PROJECT" |
			xargs -r podman volume rm -f >/dev/null 2>&1 || true
		podman network rm -f "${PROJECT}_default" >/dev/null 2>&1 || true
	fi
	rm -f "$RUN/data.$$"
	if [ $rc = 0 ]; then
		say "PASS in $(elapsed) s"
	else
		say "FAILED after $(elapsed) s"
	fi
	exit $rc
}
started=0
trap teardown EXIT
trap 'say interrupted; exit 130' INT TERM

# --- 2. base image -------------------------------------------------------------
pct_base_image

# --- 3. the pfs image ---------------------------------------------------------
say "building $IMAGE from $CONTEXT"
t=$(date +%s)
old=$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
podman build --quiet --isolation=chroot --pull=never --build-arg "BASE=$BASE" \
	-f "$here/Dockerfile" -t "$IMAGE" "$CONTEXT" >"$RUN/build.log" 2>&1 ||
	{ tail -40 "$RUN/build.log" >&2; die "image build failed (log: $RUN/build.log)"; }
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
# The image this build replaced (its layers stay as build cache).
if [ -n "$old" ] && [ "$old" != "$(podman image inspect --format '{{.Id}}' "$IMAGE")" ]; then
	podman rmi "$old" >/dev/null 2>&1 || true
fi
say "built in $(($(date +%s) - t)) s: $IMAGE $((size / 1000000)) MB"

# --- 4. the cluster ------------------------------------------------------------
say "starting project $PROJECT"
started=1
compose up -d --no-build >"$RUN/up.log" 2>&1 || { cat "$RUN/up.log" >&2; die "podman-compose up failed"; }

# Wait for each service's healthcheck, in dependency order.  podman-compose
# 1.0 starts the containers without waiting for `condition: service_healthy`
# (the entrypoint and the OSS's registration retries cover that), and with
# no systemd no timer runs the checks: run them here until they pass.
deadline=$(($(date +%s) + TIMEOUT))
for s in mds oss0 oss1 oss2 oss3 client; do
	c=$(cname $s)
	[ -n "$c" ] || die "no container for service $s"
	until podman healthcheck run "$c" >/dev/null 2>&1; do
		st=$(podman inspect --format '{{.State.Status}}' "$c")
		[ "$st" = running ] || die "$s is $st"
		[ "$(date +%s)" -lt "$deadline" ] || die "$s not healthy after ${TIMEOUT}s"
		sleep 0.5
	done
	say "$s healthy ($(elapsed) s)"
done
client=$(cname client)
cx() { podman exec "$client" "$@"; }
cjq() { podman exec -i "$client" jq "$@"; } # jq of the image, on stdin

# Every OST is up and advertised under its OSS's service name and fixed port
# (the bug of the old compose file: 127.0.0.1 and a random port).
cx pfsadmin ost list >&2
n=$(cx pfsadmin --json ost list | cjq '[.osts[] | select(.state == "up" and
	(.oss | test("^oss[0-9]+$")) and .host == .oss and .data_port == 7800)] | length')
[ "$n" = $NOSS ] || die "$n of $NOSS OSTs are up at ossN:7800"

# Authentication is on: a peer without a key is turned away.
if cx pfsadmin --no-auth ping >/dev/null 2>&1; then die "the MDS answers a peer without a key"; fi

# --- 5. data through the mount -------------------------------------------------
data=$RUN/data.$$
head -c $((SIZE_MIB * 1048576)) /dev/urandom >"$data"
want=$(sha256sum <"$data" | cut -d' ' -f1)
cx pfsadmin setstripe -c $NOSS -S 1M /mnt/pfs/rand >/dev/null
t=$(date +%s)
podman exec -i "$client" sh -c 'cat >/mnt/pfs/rand && sync' <"$data"
say "wrote $SIZE_MIB MiB in $(($(date +%s) - t)) s"
cx pfsadmin getstripe /mnt/pfs/rand >&2
count=$(cx pfsadmin --json getstripe /mnt/pfs/rand | cjq .stripe_count)
osts=$(cx pfsadmin --json getstripe /mnt/pfs/rand | cjq '[.stripes[].ost] | unique | length')
[ "$count" = $NOSS ] || die "stripe count is '$count', want $NOSS"
[ "$osts" = $NOSS ] || die "the stripes are on $osts OSTs, want $NOSS"
# Read back through a second mount, made now: nothing can come from the
# first mount's page cache, every byte comes from the OSSes.
# shellcheck disable=SC2016 # $PFS_MDS is the container's
cx sh -c 'mkdir -p /mnt/verify && mount.pfs "$PFS_MDS" /mnt/verify'
got=$(cx sh -c 'sha256sum </mnt/verify/rand' | cut -d' ' -f1)
got1=$(cx sh -c 'sha256sum </mnt/pfs/rand' | cut -d' ' -f1)
cx umount /mnt/verify
[ "$got" = "$want" ] || die "sha256 through a fresh mount: $got, want $want"
[ "$got1" = "$want" ] || die "sha256 through the writing mount: $got1, want $want"
say "sha256 $want: same through both mounts"
say "image $IMAGE: $((size / 1000000)) MB"
