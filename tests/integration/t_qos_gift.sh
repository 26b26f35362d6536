#!/bin/bash
# GIFT live, gift.txt Fig. 6: two OSTs emulated at 100 MB/s, decisions
# every second, B_thres = 0.3.
#   k1: A striped on OST0 only, B on both, both saturating.  GIFT throttles
#       A from its fair 50 % to 35 % on OST0 so B gets 65 % on both OSTs,
#       and gives A a coupon (15 % of an OST per decision).
#   k2: C joins A and B on OST0, D, E, F join B on OST1.  B's fair share is
#       set by OST1 (25 %), leaving 8.3 % of OST0 spare beyond the fair
#       33.3 % of A and C: GIFT gives all of it to A, which redeems its
#       coupon (outstanding worth falls, redeemed worth rises) while C keeps
#       its fair share.
# (Stopping B alone would not redeem anything: A's fair share becomes the
# whole OST, and coupons are redeemed only into bandwidth beyond the fair
# share, Algorithm 1 line 3.)
# Then kill -9 every daemon and restart them: the coupon ledger is intact.
# Layouts are pinned per job (one-stripe files on a chosen OST, B's
# directory striped over both) and checked with getstripe.
# timeout: 150
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qos_lib.sh"

start_cluster --oss 2 --mounts 6 --oss-opt ost_bandwidth=100 \
	--mds-opt qos_policy=gift --mds-opt qos_interval_s=1 --mds-opt qos_param=B_thres=0.3
read -ra M <<<"$MNTS"
[ "$(admin --json qos show | jq -r '.policy')" = gift ] || fail "policy is not gift"
[ "$(admin --json qos show | jq '.params.B_thres')" = 0.3 ] || fail "B_thres not 0.3: $(admin --json qos show | jq -c .params)"

for j in A B C D E F; do
	admin job register "$j" --nodes 1 >/dev/null || fail "register $j"
	mkdir -p "$MNT/$j"
done
for i in 0 1 2 3; do file_on_ost "$MNT/A/load.$i" 0 || fail "A's file on OST0"; done
for i in 0 1; do
	file_on_ost "$MNT/C/load.$i" 0 || fail "C's file on OST0"
	for j in D E F; do file_on_ost "$MNT/$j/load.$i" 1 || fail "$j's file on OST1"; done
done
admin setstripe -c 2 -S 1M "$MNT/B" >/dev/null || fail "setstripe B"
touch "$MNT/B/load.0"
[ "$(admin --json getstripe "$MNT/B/load.0" | jq -c '[.stripes[].ost] | sort')" = "[0,1]" ] ||
	fail "B's file not on both OSTs: $(admin --json getstripe "$MNT/B/load.0")"
[ "$(admin --json getstripe "$MNT/A/load.3" | jq -c '[.stripes[].ost]')" = "[0]" ] || fail "A not on OST0"

coupon() { admin --json qos coupons | jq -r --arg j "$1" --arg f "$2" '.coupons[] | select(.job == $j) | .[$f]'; }

# ---- k1 ----
t0=$(date +%s.%N)
load A write "${M[0]}/A" --streams 4 --seconds 16 --direct --size 32M --interval-ms 1000 --csv "$T/rates.csv" >"$T/A" &
load B write "${M[1]}/B" --streams 4 --seconds 16 --direct --size 32M --interval-ms 1000 --csv "$T/rates.csv" >"$T/B" &
sleep 6
a=$(alloc_mbps A 0); b0=$(alloc_mbps B 0); b1=$(alloc_mbps B 1)
echo "k1 allocations (MB/s): A@OST0 $a, B@OST0 $b0, B@OST1 $b1"
near_abs "$a" 35 2 || fail "k1: A on OST0 allocated $a MB/s, want 35 (0.35 of 100)"
near_abs "$b0" 65 2 || fail "k1: B on OST0 allocated $b0 MB/s, want 65"
near_abs "$b1" 65 2 || fail "k1: B on OST1 allocated $b1 MB/s, want 65"
t1=$(date +%s.%N)
ra=$(csv_mbps "$T/rates.csv" A "$(awk -v t="$t0" 'BEGIN { printf "%.3f", t + 3 }')" "$t1"); rb=$(csv_mbps "$T/rates.csv" B "$(awk -v t="$t0" 'BEGIN { printf "%.3f", t + 3 }')" "$t1")
echo "k1 client-side rates: A $ra MB/s, B $rb MB/s"
near "$ra" 35 10 || fail "k1: A wrote at $ra MB/s, want 35 +- 10 %"
near "$rb" 130 10 || fail "k1: B wrote at $rb MB/s, want 130 (65 on each OST) +- 10 %"
out1=$(coupon A outstanding_bytes); n1=$(coupon A coupons)
echo "k1 coupons of A: $n1, outstanding $out1 bytes"
gt "${n1:-0}" 0 || fail "k1: no coupon for A: $(admin --json qos coupons)"
gt "$out1" 0 || fail "k1: A's coupons are worth nothing"
[ -z "$(coupon B coupons)" ] || [ "$(coupon B outstanding_bytes)" = 0 ] || fail "k1: B got a coupon"
ok "k1: A 0.35 / B 0.65 on the shared OST, A holds $n1 coupon(s)"

# ---- k2 ----
k=2
for j in C D E F; do
	load "$j" write "${M[$k]}/$j" --streams 2 --seconds 8 --direct --size 32M >"$T/$j" &
	k=$((k + 1))
done
sleep 4
a=$(alloc_mbps A 0); c=$(alloc_mbps C 0); b0=$(alloc_mbps B 0); b1=$(alloc_mbps B 1)
echo "k2 allocations (MB/s): A@OST0 $a, C@OST0 $c, B@OST0 $b0, B@OST1 $b1"
near_abs "$b1" 25 1.5 || fail "k2: B on OST1 allocated $b1 MB/s, want 25"
near_abs "$c" 33.3 1.5 || fail "k2: C allocated $c MB/s, want its fair 33.3"
near_abs "$a" 41.7 1.5 || fail "k2: A allocated $a MB/s, want 41.7 (fair 33.3 + the 8.3 spare)"
out2=$(coupon A outstanding_bytes); red2=$(coupon A redeemed_bytes)
sleep 2
out3=$(coupon A outstanding_bytes); red3=$(coupon A redeemed_bytes)
echo "k2 A's coupons: outstanding $out1 -> $out2 -> $out3, redeemed $red2 -> $red3 bytes"
gt "$red2" 0 || fail "k2: A redeemed nothing"
gt "$out1" "$out2" || fail "k2: A's outstanding worth did not fall ($out1 -> $out2)"
gt "$out2" "$out3" || gt "$red3" "$red2" || [ "$out3" = 0 ] || fail "k2: redemption stopped ($out2 -> $out3)"
ok "k2: A redeems into OST0's spare bandwidth, C keeps its fair share"
wait

# ---- the ledger survives kill -9 ----
qos_wait_decisions $(($(qos_decisions) + 2)) 10 || fail "no decisions after the loads ended"
before=$(admin --json qos coupons | jq -c '.coupons[] | select(.job == "A") | del(.rate)')
regret=$(admin --json qos regret | jq -c '{coupons_issued, worth_issued_bytes, worth_redeemed_bytes}')
"$REPO/deploy/pfs-cluster" crash "$CLUSTER"
"$REPO/deploy/pfs-cluster" revive "$CLUSTER" >/dev/null || fail "revive"
after=$(admin --json qos coupons | jq -c '.coupons[] | select(.job == "A") | del(.rate)')
regret2=$(admin --json qos regret | jq -c '{coupons_issued, worth_issued_bytes, worth_redeemed_bytes}')
echo "ledger before: $before $regret"
echo "ledger after:  $after $regret2"
[ -n "$before" ] && [ "$before" = "$after" ] || fail "A's coupons changed across the crash"
[ "$regret" = "$regret2" ] || fail "regret ledger changed across the crash"
[ "$(admin --json qos show | jq -r '.policy')" = gift ] || fail "policy after revive"
ok "coupon and regret ledgers intact after kill -9 and restart"
