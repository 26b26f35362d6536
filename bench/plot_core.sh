#!/bin/bash
# bench/plot_core.sh — bar charts of the core benchmark: for every workload,
# pfs and the local disk as a ratio to the FUSE passthrough, one PNG per tool.
#
#   bench/plot_core.sh [TSV [OUTDIR]]     default bench/results/core.tsv, its directory
#
# TSV is what bench/run.sh writes (suite, workload, unit, local, passthrough,
# pfs: medians).  Writes OUTDIR/ratio-pfs-bench.png, ratio-fio.png and
# ratio-ior-mdtest.png (each only when that tool has numbers).  Bars start at
# 1 (the passthrough, dashed line) and go up when faster than it, down when
# slower, on a log scale so 2x and 0.5x look alike.  TITLE_NOTE (environment)
# is added under each title (e.g. "noisy shared machine").  Installs Debian's
# gnuplot-nox when gnuplot is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tsv=${1:-$here/results/core.tsv}
out=${2:-$(dirname "$tsv")}
[ -r "$tsv" ] || { echo "plot_core: no $tsv (run bench/run.sh first)" >&2; exit 1; }
mkdir -p "$out"

if ! command -v gnuplot >/dev/null; then
	echo "plot_core: installing gnuplot-nox (Debian)" >&2
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends gnuplot-nox >/dev/null 2>&1 ||
		{ $sudo apt-get -o DPkg::Lock::Timeout=120 update -qq >/dev/null 2>&1 &&
		  $sudo apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends gnuplot-nox >/dev/null 2>&1; } ||
		{ echo "plot_core: gnuplot is missing and apt-get could not install gnuplot-nox" >&2; exit 1; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stamp=$(date -u -r "$tsv" '+%Y-%m-%d %H:%M UTC')

plot_suite() { # plot_suite SUITE PNG-NAME TITLE
	local suite=$1 png=$out/$2 title=$3 dat=$tmp/$1.dat n lo hi
	# index, workload (unit), pfs/pt, local/pt; "-" where a value is missing
	awk -F'\t' -v s="$suite" '
		function num(v) { return v ~ /^[0-9.]+([eE][-+]?[0-9]+)?$/ }
		NR > 1 && $1 == s && num($5) && $5 > 0 && (num($4) || num($6)) {
			n++
			printf "%d\t%s\\n(%s)\t%s\t%s\n", n, $2, $3,
				num($6) ? $6 / $5 : "-", num($4) ? $4 / $5 : "-"
		}' "$tsv" >"$dat"
	n=$(wc -l <"$dat")
	# No numbers for this tool (not run): no chart, and none left from a
	# run that had them.
	[ "$n" -gt 0 ] || { rm -f "$png"; return 0; }
	# y range: every ratio and 1, with room for the labels
	read -r lo hi < <(awk -F'\t' '{for (i = 3; i <= 4; i++) if ($i != "-") {
			if (lo == "" || $i < lo) lo = $i; if (hi == "" || $i > hi) hi = $i }}
		END {if (lo > 1) lo = 1; if (hi < 1) hi = 1; print lo / 1.8, hi * 1.8}' "$dat")
	gnuplot <<EOF
set terminal pngcairo size $(( n < 4 ? 640 : 200 + 115 * n )),540 font "DejaVu Sans,10"
set output "$png"
set title "$title: ratio to the FUSE passthrough (medians; $stamp)${TITLE_NOTE:+\\n$TITLE_NOTE}"
set datafile separator "\t"
set datafile missing "-"
set logscale y
set yrange [$lo:$hi]
set ytics ("0.01" 0.01, "0.02" 0.02, "0.05" 0.05, "0.1" 0.1, "0.2" 0.2, "0.5" 0.5, "1" 1, "2" 2, "5" 5, "10" 10, "20" 20, "50" 50, "100" 100)
set ylabel "ratio to passthrough (log scale)"
set xrange [0.4:$n.6]
set xtics scale 0 nomirror
set grid ytics lc rgb "#dddddd"
set key outside bottom center horizontal
set bmargin 5.5
set style fill solid 0.85 border -1
set arrow from 0.4,1 to $n.6,1 nohead dt 2 lw 1.5 lc rgb "#444444" front
lab(y) = sprintf("%.2f", y)
ly(y) = y >= 1 ? y * 1.12 : y / 1.12
plot "$dat" using 1:(1):(\$1-0.38):(\$1-0.02):(1):3:xtic(2) with boxxyerror lc rgb "#d9534f" title "pfs (4 OSS)", \
     ""     using 1:(1):(\$1+0.02):(\$1+0.38):(1):4 with boxxyerror lc rgb "#5b8fc7" title "local disk", \
     ""     using (\$1-0.2):(ly(\$3)):(lab(\$3)) with labels font ",9" notitle, \
     ""     using (\$1+0.2):(ly(\$4)):(lab(\$4)) with labels font ",9" notitle, \
     NaN with lines dt 2 lw 1.5 lc rgb "#444444" title "FUSE passthrough = 1"
EOF
	echo "plot_core: $png" >&2
}

plot_suite core ratio-pfs-bench.png "pfs-bench"
plot_suite fio ratio-fio.png "fio"
plot_suite ior ratio-ior-mdtest.png "IOR and mdtest"
