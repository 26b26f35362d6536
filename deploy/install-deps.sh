#!/bin/sh
# Install the Debian 12 packages pfs needs to build, test and run, if missing.
# Used by `make`, `make test`, deploy/pfs-cluster and .ci/run; a no-op when all
# packages are present. Needs root (or sudo) only when something is missing.
# `install-deps.sh PKG...` installs those packages instead, the same way
# (deploy/podman-env.sh: podman and its helpers for the container tests).
#
# prometheus, curl and jq serve tests/integration/t_prometheus.sh, which runs its
# own Prometheus on a free loopback port with a temporary data directory.
# Debian's package would start a system-wide Prometheus on :9090 at install and
# at every boot; when this script installs it, it keeps that from happening:
# a policy-rc.d that denies every start is in place during the install (both
# invoke-rc.d and deb-systemd-invoke obey it; one already present is left
# alone), and afterwards the service is disabled for boot and stopped if it
# runs anyway.  A prometheus that was installed before is not touched.
set -e
PKGS="build-essential pkg-config libfuse3-dev fuse3 libevent-dev liblmdb-dev lmdb-utils
libglpk-dev zlib1g-dev libsodium-dev libcmocka-dev libinih-dev libjansson-dev clang libclang-rt-14-dev
iproute2 psmisc procps util-linux attr coreutils diffutils curl jq prometheus"
[ $# -gt 0 ] && PKGS="$*"
# Packages whose service must not start when this script installs them.
NOSTART="prometheus"
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

nostart=""
for p in $NOSTART; do
  case " $missing " in *" $p "*) nostart="$nostart $p" ;; esac
done
policy=/usr/sbin/policy-rc.d
ourpolicy=0
if [ -n "$nostart" ] && [ ! -e $policy ]; then
  # 101 = "action forbidden by policy" (invoke-rc.d(8)).
  printf '#!/bin/sh\n# written by pfs deploy/install-deps.sh for one apt-get install\nexit 101\n' |
    $SUDO tee $policy >/dev/null
  $SUDO chmod 755 $policy
  ourpolicy=1
fi
rc=0
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null || rc=$?
[ $ourpolicy = 1 ] && $SUDO rm -f $policy
[ $rc = 0 ] || exit $rc

for s in $nostart; do
  if [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now "$s.service" >/dev/null 2>&1 || true
  else
    # No systemd running: drop the sysv boot links and the unit's enable
    # links (so a later boot under systemd does not start it either), and
    # stop an instance the policy did not keep from starting.
    $SUDO update-rc.d "$s" disable >/dev/null 2>&1 || true
    $SUDO deb-systemd-helper disable "$s.service" >/dev/null 2>&1 || true
    if [ -x "/etc/init.d/$s" ]; then
      $SUDO "/etc/init.d/$s" stop >/dev/null 2>&1 || true
    fi
  fi
done
exit 0
