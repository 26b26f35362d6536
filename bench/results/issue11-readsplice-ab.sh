#!/bin/bash
# ab.sh A_BIN B_BIN ROUNDS: two clusters side by side (A, B), seq/rand files laid once,
# then alternating cold seqread and randread on each; prints raw lines with CPU ticks
# (utime+stime, 1/100 s) of the 4 OSSes and of mount.pfs during each phase.
set -u
A=$1; B=$2; R=${3:-5}
W=/var/tmp/pfs-bench-rp
repo=/work/main
cleanup() {
	PFS_BIN=$A $repo/deploy/pfs-cluster stop $W/a >/dev/null 2>&1
	PFS_BIN=$B $repo/deploy/pfs-cluster stop $W/b >/dev/null 2>&1
	rm -rf $W
}
trap cleanup EXIT
rm -rf $W; mkdir -p $W
ma=$(PFS_BIN=$A $repo/deploy/pfs-cluster start $W/a --oss 4) || exit 1
mb=$(PFS_BIN=$B $repo/deploy/pfs-cluster start $W/b --oss 4) || exit 1
for m in $ma $mb; do
	$A/pfs-bench seqwrite $m --streams 4 --size 256M >/dev/null
	$A/pfs-bench randwrite $m --size 256M --ops 20000 --threads 4 >/dev/null
done
ticks() { # ticks DIR PIDFILES...: sum of utime+stime
	local d=$1 t=0 p; shift
	for f in "$@"; do p=$(cat $d/$f 2>/dev/null) || continue
		t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat))); done
	echo $t
}
oss() { ticks $1 oss0.pid oss1.pid oss2.pid oss3.pid; }
cli() { ticks $1 client.pid; }
drop() { sync; sleep 1; sync; echo 3 > /proc/sys/vm/drop_caches; }
for r in $(seq 1 $R); do
	if [ $((r % 2)) = 1 ]; then order="a b"; else order="b a"; fi
	for x in $order; do
		m=$([ $x = a ] && echo $ma || echo $mb); bin=$([ $x = a ] && echo $A || echo $B)
		d=$W/$x
		drop; o0=$(oss $d); c0=$(cli $d)
		s=$($bin/pfs-bench seqread $m --streams 4 --size 256M | awk '{print $2}')
		o1=$(oss $d); c1=$(cli $d)
		drop; q=$($bin/pfs-bench randread $m --size 256M --ops 20000 --threads 4 | awk '{print $2}')
		o2=$(oss $d); c2=$(cli $d)
		echo "round $r $x seqread $s randread $q seq_oss_ticks $((o1-o0)) seq_cli_ticks $((c1-c0)) rand_oss_ticks $((o2-o1)) rand_cli_ticks $((c2-c1)) load $(cut -d' ' -f1 /proc/loadavg)"
	done
done
