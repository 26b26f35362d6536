#!/bin/bash
# 8 processes write disjoint regions of one shared file at once, 1 MiB
# aligned and unaligned; the bytes and the size come out right.
# timeout: 300
. "$(dirname "$0")/lib.sh"
start_cluster
f=$MNT/shared
ref=$T/ref
for mode in aligned unaligned; do
	rm -f "$f" "$ref"
	touch "$f" "$ref"
	if [ $mode = aligned ]; then bs=1048576; off0=0; else bs=777777; off0=12345; fi
	for p in 0 1 2 3 4 5 6 7; do
		head -c $((bs * 3)) /dev/urandom > "$T/chunk$p"
	done
	pids=""
	for p in 0 1 2 3 4 5 6 7; do
		# process p writes 3 blocks at blocks p, p+8, p+16 (interleaved)
		( for k in 0 1 2; do
			dd if="$T/chunk$p" of="$f" bs=$bs skip=$k seek=$(( (p + 8 * k) * bs + off0 )) \
				count=1 iflag=skip_bytes oflag=seek_bytes conv=notrunc status=none || exit 1
		  done ) &
		pids="$pids $!"
		for k in 0 1 2; do
			dd if="$T/chunk$p" of="$ref" bs=$bs skip=$k seek=$(( (p + 8 * k) * bs + off0 )) \
				count=1 iflag=skip_bytes oflag=seek_bytes conv=notrunc status=none
		done
	done
	for p in $pids; do wait $p || fail "writer $p failed"; done
	want=$((24 * bs + off0))
	[ "$(stat -c %s "$f")" = $want ] || fail "$mode: size $(stat -c %s "$f") != $want"
	cmp "$f" "$ref" || fail "$mode: contents differ"
	sync; echo 3 > /proc/sys/vm/drop_caches
	cmp "$f" "$ref" || fail "$mode: contents differ after drop_caches"
	ok "$mode shared writes"
done
