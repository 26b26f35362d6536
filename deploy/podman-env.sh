# deploy/podman-env.sh — podman for the container tests (deploy/compose-test.sh,
# deploy/systemd-test.sh), sourced by them after they set `here` and define
# say and die.  It sets what both share: ROOT (PFS_CT_ROOT, the image store
# and configuration, kept between runs), RUN (PFS_CT_RUN, podman's per-boot
# state) and BASE (the base image).
#
#   pct_need_root "$@"  re-runs the script with sudo unless it runs as root;
#   pct_init        installs what it misses from Debian (podman, podman-compose,
#                   mmdebstrap, runc, the CNI plugins with dnsname, iptables:
#                   deploy/install-deps.sh), writes podman's configuration and
#                   puts it in the environment;
#   pct_base_image  makes the base image $BASE with mmdebstrap when absent (no
#                   image registry is needed, nor contacted).
#
# Podman runs with its own configuration, never the system's: containers.conf,
# storage.conf and registries.conf are written under $PFS_CT_ROOT/conf and
# named by CONTAINERS_CONF / CONTAINERS_STORAGE_CONF / CONTAINERS_REGISTRIES_CONF:
# cgroupfs cgroup manager and file event logger (no systemd needed), runc, the
# CNI network backend (networks in $PFS_CT_ROOT/cni, not /etc/cni), ulimits
# within this machine's hard limits, the overlay storage driver where an
# overlay mount works here (else vfs), no registries to search.
#
# shellcheck shell=sh

ROOT=${PFS_CT_ROOT:-/var/lib/pfs-compose-test}
RUN=${PFS_CT_RUN:-/run/pfs-compose-test}
BASE=localhost/debian:12

pct_need_root() {
	[ "$(id -u)" = 0 ] && return 0
	command -v sudo >/dev/null || die "needs root (podman, FUSE in a container)"
	exec sudo -E sh "$0" "$@"
}

pct_init() {
	sh "${here:?}/install-deps.sh" podman podman-compose mmdebstrap runc \
		containernetworking-plugins golang-github-containernetworking-plugin-dnsname \
		iptables conmon || die "could not install podman and its helpers"
	[ -e /dev/fuse ] || modprobe fuse 2>/dev/null || true
	[ -c /dev/fuse ] || die "no /dev/fuse on this machine"

	mkdir -p "$ROOT/conf" "$ROOT/cni" "$RUN"
	driver=${PFS_CT_DRIVER:-}
	if [ -z "$driver" ]; then
		# overlay where the kernel can mount one on $ROOT (not, e.g., when
		# $ROOT is itself on overlayfs inside another container), else vfs.
		p=$ROOT/overlay-probe.$$
		mkdir -p "$p/l" "$p/u" "$p/w" "$p/m"
		if mount -t overlay overlay -o "lowerdir=$p/l,upperdir=$p/u,workdir=$p/w" "$p/m" 2>/dev/null; then
			umount "$p/m"
			driver=overlay
		else
			driver=vfs
		fi
		rm -rf "$p"
	fi
	# A hard limit root cannot raise here makes runc fail ("error setting
	# rlimits"): give containers this machine's own hard limits (capped).
	lim() { # lim "NAME IN /proc/self/limits" CAP: the hard limit, at most CAP
		v=$(awk -v n="$1" 'index($0, n) == 1 { print $(NF - 1) }' /proc/self/limits)
		case $v in '' | unlimited) echo "$2" ;; *) [ "$v" -gt "$2" ] && echo "$2" || echo "$v" ;; esac
	}
	nofile=$(lim "Max open files" 1048576)
	nproc=$(lim "Max processes" 32768)
	cat >"$ROOT/conf/containers.conf" <<-EOF
	# written by deploy/podman-env.sh
	[containers]
	default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
	[engine]
	cgroup_manager = "cgroupfs"
	events_logger = "file"
	events_logfile_path = "$RUN/events.log"
	runtime = "runc"
	tmp_dir = "$RUN/libpod"
	[network]
	network_backend = "cni"
	network_config_dir = "$ROOT/cni"
	cni_plugin_dirs = ["/usr/lib/cni"]
	EOF
	cat >"$ROOT/conf/storage.conf" <<-EOF
	# written by deploy/podman-env.sh
	[storage]
	driver = "$driver"
	graphroot = "$ROOT/storage-$driver"
	runroot = "$RUN/storage-$driver"
	EOF
	cat >"$ROOT/conf/registries.conf" <<-EOF
	# written by deploy/podman-env.sh: images are local only, no registry is searched.
	unqualified-search-registries = []
	EOF
	# The same settings for a person at a shell: `. $ROOT/conf/env`, then podman
	# and podman-compose use this image store (deploy/README-containers.md).
	# DISABLE_HC_SYSTEMD: no systemd to run healthcheck timers, so podman does not
	# try to make them; this script runs the checks itself (podman healthcheck run).
	cat >"$ROOT/conf/env" <<-EOF
	# written by deploy/podman-env.sh
	export CONTAINERS_CONF="$ROOT/conf/containers.conf"
	export CONTAINERS_STORAGE_CONF="$ROOT/conf/storage.conf"
	export CONTAINERS_REGISTRIES_CONF="$ROOT/conf/registries.conf"
	export BUILDAH_ISOLATION=chroot
	export DISABLE_HC_SYSTEMD=true
	EOF
	# shellcheck disable=SC1091
	. "$ROOT/conf/env"
	say "podman $(podman version --format '{{.Client.Version}}'), storage $driver, state in $ROOT"
}

pct_base_image() { # pct_base_image: $BASE, when absent
	if ! podman image exists "$BASE"; then
		say "making $BASE with mmdebstrap"
		# The host's own Debian sources (its mirror), else mmdebstrap's default.
		src=""
		if [ -f /etc/apt/sources.list.d/debian.sources ]; then
			src=/etc/apt/sources.list.d/debian.sources
		elif grep -qs '^deb .*bookworm' /etc/apt/sources.list; then
			src=/etc/apt/sources.list
		fi
		tar=$ROOT/debian-12.tar
		# shellcheck disable=SC2086
		mmdebstrap --quiet --variant=apt \
			--aptopt='Acquire::Check-Valid-Until "false"' \
			--dpkgopt='path-exclude=/usr/share/man/*' \
			--dpkgopt='path-exclude=/usr/share/locale/*' \
			--dpkgopt='path-exclude=/usr/share/doc/*' \
			--dpkgopt='path-include=/usr/share/doc/*/copyright' \
			--dpkgopt='path-exclude=/usr/share/info/*' \
			bookworm "$tar" $src >&2
		podman import --quiet --change 'CMD ["/bin/bash"]' "$tar" "$BASE" >/dev/null
		rm -f "$tar"
	fi
}
