#!/bin/bash
# A/B of cold pfs-bench seqread (4 x 256 MiB; randread too with a third
# argument, KS=randread for it alone): two 4-OSS clusters, A (bin dir $ABIN,
# mount option $AOPT) and B ($BBIN), and the FUSE passthrough, in rotating
# order; CPU ticks of mount.pfs and of the 4 OSSes apart per phase.
# Usage: ABIN=... BBIN=... [AOPT=...] issue11-sr-ab.sh ROUNDS OUT [randread]
set -u
ROUNDS=$1 OUT=$2 RR=${3:-}
ABIN=${ABIN:-/tmp/old-sr/build/bin} BBIN=${BBIN:-/tmp/new-sr-bin}
repo=/work/main
A=/var/tmp/pfs-sr-A B=/var/tmp/pfs-sr-B PT=/var/tmp/pfs-sr-pt
cleanup() {
	PFS_BIN=$ABIN $repo/deploy/pfs-cluster stop $A >/dev/null 2>&1
	PFS_BIN=$BBIN $repo/deploy/pfs-cluster stop $B >/dev/null 2>&1
	fusermount3 -u $PT/mnt 2>/dev/null; [ -n "${PTPID:-}" ] && kill $PTPID 2>/dev/null; wait 2>/dev/null
}
trap cleanup EXIT
for d in $A $B; do [ -f $d/cluster.env ] && $repo/deploy/pfs-cluster stop $d >/dev/null 2>&1; rm -rf $d; done
fusermount3 -u $PT/mnt 2>/dev/null; rm -rf $PT; mkdir -p $PT/src $PT/mnt
PFS_BIN=$ABIN $repo/deploy/pfs-cluster start $A --oss 4 --mount-opt log_level=info ${AOPT:+--mount-opt $AOPT} >/dev/null || exit 1
PFS_BIN=$BBIN $repo/deploy/pfs-cluster start $B --oss 4 --mount-opt log_level=info >/dev/null || exit 1
$ABIN/pfs-passthrough $PT/src $PT/mnt -f & PTPID=$!
sleep 1
declare -A dir=([A]=$A/mnt [B]=$B/mnt [P]=$PT/mnt) cl=([A]=$A [B]=$B [P]=)
for t in A B P; do
	$ABIN/pfs-bench seqwrite ${dir[$t]} --streams 4 --size 256M >/dev/null
	[ -n "$RR" ] && $ABIN/pfs-bench randwrite ${dir[$t]} --size 256M --ops 2000 --threads 4 >/dev/null
done
ticks() { # ticks PIDFILE...: utime+stime
	local s=0 f
	for f in "$@"; do s=$((s + $(awk '{print $14 + $15}' /proc/$(cat $f)/stat))); done
	echo $s
}
drop() { sync; sleep 1; sync; echo 3 > /proc/sys/vm/drop_caches; }
: > $OUT
for r in $(seq 1 $ROUNDS); do
	case $((r % 4)) in 0) order="A B P";; 1) order="B A P";; 2) order="P A B";; 3) order="P B A";; esac
	for t in $order; do
		for k in ${KS:-seqread ${RR:+randread}}; do
			drop
			if [ $t != P ]; then m0=$(ticks ${cl[$t]}/client.pid); o0=$(ticks ${cl[$t]}/oss*.pid); fi
			if [ $k = seqread ]; then
				v=$($ABIN/pfs-bench seqread ${dir[$t]} --streams 4 --size 256M | awk '{print $2}')
			else
				v=$($ABIN/pfs-bench randread ${dir[$t]} --size 256M --ops 20000 --threads 4 | awk '{print $2}')
			fi
			m=0 o=0
			if [ $t != P ]; then m=$(( $(ticks ${cl[$t]}/client.pid) - m0 )); o=$(( $(ticks ${cl[$t]}/oss*.pid) - o0 )); fi
			echo "round $r $t $k $v mount $m oss $o load $(cut -d' ' -f1 /proc/loadavg)" | tee -a $OUT
		done
	done
done
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for t in A B P; do for k in ${KS:-seqread ${RR:+randread}}; do
	L=$(grep -E "^round [0-9]+ $t $k " $OUT)
	echo "$t $k median $(echo "$L" | awk '{print $5}' | med) mount $(echo "$L" | awk '{print $7}' | med) oss $(echo "$L" | awk '{print $9}' | med) n $(echo "$L" | wc -l)"
done; done | tee -a $OUT
