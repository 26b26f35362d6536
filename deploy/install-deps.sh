#!/bin/sh
# Install the Debian 12 packages pfs needs to build, test and run, if missing.
# Used by `make`, `make test`, deploy/pfs-cluster and .ci/run; a no-op when all
# packages are present. Needs root (or sudo) only when something is missing.
set -e
PKGS="build-essential pkg-config libfuse3-dev fuse3 libevent-dev liblmdb-dev lmdb-utils
libglpk-dev libcmocka-dev libinih-dev libjansson-dev clang libclang-rt-14-dev
iproute2 psmisc procps util-linux attr coreutils diffutils"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
