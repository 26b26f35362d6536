#!/bin/sh
# Build the libFuzzer target for the frame decoder with clang (ASan+UBSan)
# and run it for a bounded time: `make fuzz FUZZ_SECONDS=60`.
set -e
secs=${1:-30}
[ -n "$secs" ] || secs=30
out=build-fuzz
mkdir -p "$out/corpus"
CLANG=${CLANG:-clang}
$CLANG -g -O1 -std=c11 -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined \
  tests/fuzz/fuzz_frame.c common/proto.c common/buf.c common/msg.c common/layout.c \
  -o "$out/fuzz_frame"
# Seed corpus: a valid header with a small payload.
# seed: a v2 MDS_LOOKUP header (80 bytes) and an 8-byte payload
printf 'PFS1\002\000d\000\000\000\000\000\000\000\000\000\001\000\000\000\000\000\000\000\002\000\000\000\000\000\000\000\010\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000jobA\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' > "$out/corpus/seed1"
"$out/fuzz_frame" -max_total_time="$secs" -max_len=4096 -print_final_stats=1 "$out/corpus" 2>&1 | tail -n 12
echo "fuzz: frame decoder ran ${secs}s without a crash"
