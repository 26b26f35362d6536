#!/bin/bash
# make install / make uninstall into a temporary DESTDIR, from the binaries
# already built in $PFS_BIN (O=its parent, NOBUILD=1: nothing is compiled):
#  - the tree: programs (each answers --help), /sbin/mount.pfs link, man
#    pages (sections present, groff and man render them without warnings),
#    systemd units (systemd-analyze verify when available, else a syntax
#    check; ExecStart= points at PREFIX/bin), bash completion (completes
#    commands and options), Slurm hooks, pfs-sim scenarios;
#  - the example configurations: every key of `pfs-mds --help` and
#    `pfs-oss --help` is in mds.conf / oss.conf and no other, slurm.conf
#    names what the hooks read, and the installed daemons start from them
#    with every commented default switched on (ports and directories
#    overridden) and the OSS's OST shows up in `pfsadmin ost list`;
#  - a second install keeps an edited configuration;
#  - uninstall leaves nothing but that edited configuration;
#  - PREFIX=/usr/local: units and the mount link follow the prefix, and
#    uninstall leaves nothing at all.
# Needs no systemd running and starts nothing outside $T.
# timeout: 120
. "$(dirname "$0")/lib.sh"

O=$(dirname "$PFS_BIN")
R=$T/root
PIDS=""
stop_daemons() {
	local p
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	PIDS=""
}
trap 'rc=$?; stop_daemons; (exit $rc); cleanup' EXIT

# A make of its own: nothing from a calling make (MAKEFLAGS: variables,
# jobserver) leaks in; NOBUILD=1 installs $O/bin as it is.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$REPO" --no-print-directory O="$O" NOBUILD=1 "$@"; }

mk install PREFIX=/usr DESTDIR="$R" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; fail "make install PREFIX=/usr failed"; }
ok "make install PREFIX=/usr DESTDIR=\$T/root from $O"

# --- programs -------------------------------------------------------------
progs=$(cd "$PFS_BIN" && ls)
for p in pfs-mds pfs-oss mount.pfs pfsadmin; do
	[ -x "$PFS_BIN/$p" ] || fail "$p not built in $PFS_BIN"
done
for p in $progs; do
	[ -x "$PFS_BIN/$p" ] || continue
	[ -x "$R/usr/bin/$p" ] || fail "$p not installed in /usr/bin"
	cmp -s "$PFS_BIN/$p" "$R/usr/bin/$p" || fail "/usr/bin/$p differs from $PFS_BIN/$p"
	# The programs with a man page must answer --help (pfs-bench with its
	# usage and status 2); the benchmark helpers are only checked to be there.
	case $p in
	pfs-mds | pfs-oss | mount.pfs | pfsadmin | pfs-sim | pfs-bench) ;;
	*) continue ;;
	esac
	out=$(timeout 10 "$R/usr/bin/$p" --help 2>&1)
	rc=$?
	echo "$out" | grep -qi "usage" || fail "$p --help prints no usage: $out"
	[ $rc -eq 0 ] || [ "$p" = pfs-bench ] || fail "$p --help exits $rc"
done
[ -L "$R/sbin/mount.pfs" ] || fail "/sbin/mount.pfs is not a link"
[ "$(readlink "$R/sbin/mount.pfs")" = /usr/bin/mount.pfs ] ||
	fail "/sbin/mount.pfs -> $(readlink "$R/sbin/mount.pfs")"
ok "programs installed in /usr/bin and answer --help; /sbin/mount.pfs -> /usr/bin/mount.pfs"

# --- man pages ------------------------------------------------------------
M=$R/usr/share/man
for pg in man1/pfsadmin.1 man1/pfs-sim.1 man1/pfs-bench.1 man7/pfs.7 \
	man8/pfs-mds.8 man8/pfs-oss.8 man8/mount.pfs.8; do
	f=$M/$pg
	[ -f "$f" ] || fail "man page $pg not installed"
	for s in NAME DESCRIPTION FILES EXAMPLES "SEE ALSO"; do
		grep -q "^\.SH \"\?$s\"\?\$" "$f" || fail "$pg has no $s section"
	done
	case $pg in man7/*) ;; *)
		for s in SYNOPSIS OPTIONS; do
			grep -q "^\.SH $s\$" "$f" || fail "$pg has no $s section"
		done ;;
	esac
	if command -v groff >/dev/null; then
		w=$(groff -ww -z -man "$f" 2>&1)
		[ -z "$w" ] || fail "groff warns on $pg: $w"
	fi
	if command -v man >/dev/null; then
		w=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
		[ -z "$w" ] || fail "man warns on $pg: $w"
	fi
done
if command -v man >/dev/null; then
	txt=$(MANWIDTH=80 man -l "$M/man1/pfsadmin.1" 2>&1)
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS FILES EXAMPLES "SEE ALSO"; do
		echo "$txt" | grep -q "^$s" || fail "man -l pfsadmin.1 shows no $s"
	done
	echo "$txt" | grep -q "qos policy set" || fail "pfsadmin.1 does not render its commands"
	ok "man pages render without warnings (man -l pfsadmin.1: $(echo "$txt" | wc -l) lines)"
else
	ok "man pages present with their sections (man not installed: not rendered)"
fi

# --- systemd units ----------------------------------------------------------
U=$R/usr/lib/systemd/system
UNITS="pfs-mds.service pfs-oss.service pfs-oss@.service"
for u in $UNITS; do
	[ -f "$U/$u" ] || fail "unit $u not installed"
	grep -q '^ExecStart=/usr/bin/pfs-' "$U/$u" || fail "$u: ExecStart not in /usr/bin"
	! grep -v "^#" "$U/$u" | grep -q /usr/local || fail "$u still names /usr/local"
	grep -q '^Restart=on-failure' "$U/$u" || fail "$u: no Restart=on-failure"
	grep -q '^NoNewPrivileges=yes' "$U/$u" || fail "$u: no NoNewPrivileges"
	conf=$(sed -n 's/^ExecStart=.*--config \([^ ]*\).*/\1/p' "$U/$u")
	case $conf in
	*%i*) [ -f "$R${conf/oss-%i/oss}" ] || fail "$u: template of $conf missing" ;;
	*) [ -f "$R$conf" ] || fail "$u: $conf not installed" ;;
	esac
done
EX=$R/usr/share/doc/pfs/examples/mnt-pfs.mount
[ -f "$EX" ] || fail "example mount unit not installed"
# Copies whose ExecStart= points into $R, so the binaries are found.
mkdir -p "$T/units"
for u in $UNITS; do sed "s|/usr/bin/|$R/usr/bin/|g" "$U/$u" >"$T/units/$u"; done
cp "$EX" "$T/units/"
if command -v systemd-analyze >/dev/null &&
	out=$(MANPATH=$M systemd-analyze verify "$T"/units/* 2>&1) && [ -z "$out" ]; then
	ok "systemd-analyze verify: units and mnt-pfs.mount clean (Documentation= man pages found)"
elif command -v systemd-analyze >/dev/null && [ -n "${out-}" ]; then
	fail "systemd-analyze verify: $out"
else
	for f in "$T"/units/*; do
		awk -v f="$f" '
			/^[ \t]*($|[#;])/ { next }
			/^\[(Unit|Service|Install|Mount)\]$/ { sec = 1; next }
			/^\[/ { print f ": unknown section " $0; bad = 1; next }
			!sec { print f ": setting before any section"; bad = 1; next }
			!/^[A-Z][A-Za-z]*=/ { print f ": not Key=value: " $0; bad = 1 }
			END { exit bad }' "$f" || fail "unit syntax"
		sed -n 's/^Exec[A-Za-z]*=[-@!+]*\([^ ]*\).*/\1/p' "$f" | while read -r b; do
			[ -x "$b" ] || { echo "$(basename "$f"): $b not executable"; exit 1; }
		done || fail "unit programs"
	done
	ok "units: syntax checked (systemd-analyze not available)"
fi

# --- bash completion ----------------------------------------------------------
C=$R/usr/share/bash-completion/completions/pfsadmin
[ -f "$C" ] || fail "bash completion not installed"
compl() {
	PATH="$R/usr/bin:$PATH" bash -c '
		. "$1"; line=$2
		read -r -a COMP_WORDS <<<"$line"
		[[ $line == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE=$line; COMP_POINT=${#line}
		_pfsadmin pfsadmin "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		echo "${COMPREPLY[*]}"' _ "$C" "$1"
}
check_compl() {
	local got
	got=$(compl "$1")
	for w in $2; do
		[[ " $got " == *" $w "* ]] || fail "completing '$1': no '$w' in '$got'"
	done
}
bash -n "$C" || fail "completion: syntax"
check_compl "pfsadmin " "ost df setstripe getstripe ping help"
check_compl "pfsadmin --mds h:1 df -" "-h --mds --json"
check_compl "pfsadmin setstripe -" "-c -S"
# The job and QoS commands, where this pfsadmin has them.
if "$R/usr/bin/pfsadmin" help | grep -q '^  job register'; then
	check_compl "pfsadmin " "job jobstats qos nrs"
	check_compl "pfsadmin job " "register end list show"
	check_compl "pfsadmin job register 7 --" "--nodes --priority --uid --limit --no-throttle --mds --json"
	check_compl "pfsadmin --json qos policy " "set show"
	check_compl "pfsadmin qos policy set " "gift adaptbf B_thres="
	check_compl "pfsadmin nrs tbf rule " "start change stop list"
	check_compl "pfsadmin nrs tbf rule list -" "--ost"
fi
ok "bash completion: commands, subcommands, options"

# --- the rest of the tree -------------------------------------------------------
for f in usr/lib/pfs/slurm/prolog usr/lib/pfs/slurm/epilog; do
	[ -x "$R/$f" ] || fail "/$f not installed executable"
done
[ -n "$(ls "$R"/usr/share/pfs/scenarios/*.json 2>/dev/null)" ] || fail "no pfs-sim scenarios"
"$R/usr/bin/pfs-sim" run "$R/usr/share/pfs/scenarios/tiny.json" --policy gift --json |
	grep -q mean_io_time || fail "pfs-sim cannot run the installed tiny.json"
ok "Slurm hooks, pfs-sim scenarios (tiny.json runs)"

# --- configurations ---------------------------------------------------------------
E=$R/etc/pfs
for f in mds.conf oss.conf slurm.conf; do [ -f "$E/$f" ] || fail "/etc/pfs/$f not installed"; done
# keys DAEMON: the keys of DAEMON --help, sorted.
keys() { "$R/usr/bin/$1" --help | sed -n 's/^  --\([a-z_0-9]*\)=.*/\1/p' | sort; }
# conf_keys FILE: keys set or commented out ("#key = value") in FILE, sorted.
conf_keys() { sed -n 's/^#\{0,1\}\([a-z_][a-z_0-9]*\) *=.*/\1/p' "$1" | sort -u; }
for d in mds oss; do
	diff <(keys "pfs-$d") <(conf_keys "$E/$d.conf") >"$T/keys.diff" ||
		fail "/etc/pfs/$d.conf and pfs-$d --help differ in keys ('<' missing from the file, '>' unknown): $(tr '\n' ' ' <"$T/keys.diff")"
	grep -q "^\[$d\]" "$E/$d.conf" || fail "$d.conf has no [$d] section"
done
# shellcheck disable=SC2016 # a literal $( in the pattern
hook_keys=$(sed -n 's/^[a-z]*=$(setting \([A-Z_]*\) .*/\1/p' "$R/usr/lib/pfs/slurm/prolog")
[ "$(echo "$hook_keys" | wc -w)" -ge 3 ] || fail "cannot find the prolog's settings: '$hook_keys'"
for k in $hook_keys; do
	grep -q "^#\{0,1\}$k=" "$E/slurm.conf" || fail "slurm.conf does not document $k"
done
ok "mds.conf and oss.conf list exactly the daemons' keys; slurm.conf the hooks' settings"

# Metadata leases are on by default on both sides (mds/README.md "Metadata
# leases"): the daemons' defaults, the example's commented default and the
# man pages say the same.
help_default() { "$R/usr/bin/$1" --help 2>&1 | sed -n "s/^  \(--\)\{0,1\}$2=\([^ ]*\) .*/\2/p"; }
[ "$(help_default pfs-mds md_lease_s)" = 10 ] ||
	fail "pfs-mds --help: md_lease_s default '$(help_default pfs-mds md_lease_s)', not 10"
[ "$(help_default mount.pfs md_lease_s)" = 30 ] ||
	fail "mount.pfs --help: md_lease_s default '$(help_default mount.pfs md_lease_s)', not 30"
grep -qx '#md_lease_s = 10' "$E/mds.conf" || fail "mds.conf: md_lease_s's commented default is not 10"
zcat -f "$R"/usr/share/man/man8/pfs-mds.8* | grep -q '(default 10; 0 = off' ||
	fail "pfs-mds(8) does not give md_lease_s's default 10"
zcat -f "$R"/usr/share/man/man8/mount.pfs.8* | grep -q '(default 30, so' ||
	fail "mount.pfs(8) does not give md_lease_s's default 30"
ok "metadata leases on by default: pfs-mds md_lease_s=10, mount.pfs md_lease_s=30, mds.conf and man pages agree"

# Every commented default switched on: the installed daemons must accept
# them.  Ports, directories and addresses are overridden on the command line.
for d in mds oss; do
	sed 's/^#\([a-z_][a-z_0-9]*\) =/\1 =/' "$E/$d.conf" >"$T/$d.all.conf"
done
# Keys made by the installed pfsadmin (auth=on is the default), 0600.
K=$T/keys
mkdir -m 700 "$K" && "$R/usr/bin/pfsadmin" key gen --role mds "$K/mds.key" >/dev/null &&
	"$R/usr/bin/pfsadmin" key gen --role oss --master "$K/mds.key" "$K/oss.key" >/dev/null &&
	"$R/usr/bin/pfsadmin" key gen --role admin --master "$K/mds.key" "$K/admin.key" >/dev/null ||
	fail "installed pfsadmin key gen"
"$R/usr/bin/pfs-mds" --config "$T/mds.all.conf" --auth_key="$K/mds.key" --db="$T/db" --listen=127.0.0.1:0 \
	--port_file="$T/mds.port" 2>"$T/mds.log" &
PIDS="$PIDS $!"
for _ in $(seq 50); do [ -s "$T/mds.port" ] && break; sleep 0.1; done
[ -s "$T/mds.port" ] || fail "pfs-mds did not start from mds.conf: $(cat "$T/mds.log")"
mport=$(sed -n 's/^port=//p' "$T/mds.port")
"$R/usr/bin/pfs-oss" --config "$T/oss.all.conf" --auth_key="$K/oss.key" --mds="127.0.0.1:$mport" --osts="$T/ost0" \
	--listen_host=127.0.0.1 --port_file="$T/oss.port" 2>"$T/oss.log" &
PIDS="$PIDS $!"
up=""
for _ in $(seq 100); do
	up=$("$R/usr/bin/pfsadmin" --key "$K/admin.key" --mds "127.0.0.1:$mport" ost list 2>/dev/null | awk 'NR > 1 && / up /')
	[ -n "$up" ] && break
	sleep 0.1
done
[ -n "$up" ] || fail "no OST up from oss.conf: $(cat "$T/oss.log")"
stop_daemons
ok "installed pfs-mds and pfs-oss start from the configurations with every default on"

# --- reinstall keeps edited configurations; uninstall ------------------------------
echo "# site edit" >>"$E/oss.conf"
cp "$E/oss.conf" "$T/oss.edited"
mk install PREFIX=/usr DESTDIR="$R" >"$T/install2.log" 2>&1 ||
	{ cat "$T/install2.log"; fail "second make install failed"; }
cmp -s "$E/oss.conf" "$T/oss.edited" || fail "make install overwrote an edited oss.conf"
grep -q "keeping .*oss.conf" "$T/install2.log" || fail "install did not say it kept oss.conf"
ok "a second install keeps the edited oss.conf"

mk uninstall PREFIX=/usr DESTDIR="$R" >"$T/uninstall.log" 2>&1 ||
	{ cat "$T/uninstall.log"; fail "make uninstall failed"; }
left=$(cd "$R" && find . \( -type f -o -type l \) | sort)
[ "$left" = "./etc/pfs/oss.conf" ] || fail "after uninstall, left: $left"
cmp -s "$E/oss.conf" "$T/oss.edited" || fail "uninstall changed the edited oss.conf"
for d in usr/lib/pfs usr/share/pfs usr/share/doc/pfs; do
	[ ! -e "$R/$d" ] || fail "uninstall left /$d"
done
ok "uninstall removed everything but the edited /etc/pfs/oss.conf"

# --- the default prefix -------------------------------------------------------------
R2=$T/root2
mk install DESTDIR="$R2" >"$T/install3.log" 2>&1 ||
	{ cat "$T/install3.log"; fail "make install (default PREFIX) failed"; }
[ -x "$R2/usr/local/bin/pfs-mds" ] || fail "default PREFIX is not /usr/local"
[ "$(readlink "$R2/sbin/mount.pfs")" = /usr/local/bin/mount.pfs ] || fail "mount.pfs link with PREFIX=/usr/local"
grep -q '^ExecStart=/usr/local/bin/pfs-mds ' "$R2/usr/local/lib/systemd/system/pfs-mds.service" ||
	fail "pfs-mds.service under /usr/local does not run /usr/local/bin/pfs-mds"
[ -f "$R2/etc/pfs/mds.conf" ] || fail "configurations not in /etc/pfs with PREFIX=/usr/local"
mk uninstall DESTDIR="$R2" >"$T/uninstall2.log" 2>&1 ||
	{ cat "$T/uninstall2.log"; fail "make uninstall (default PREFIX) failed"; }
left=$(cd "$R2" && find . \( -type f -o -type l \) | sort)
[ -z "$left" ] || fail "after uninstall (default PREFIX), left: $left"
[ ! -e "$R2/etc/pfs" ] || fail "uninstall left an empty /etc/pfs"
ok "PREFIX=/usr/local: units and link follow the prefix; unedited configurations go too"
