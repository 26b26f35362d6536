#!/bin/sh
# Build the libFuzzer targets with clang (ASan + UBSan, coverage in the pfs
# libraries too) and run each for a bounded time: `make fuzz FUZZ_SECONDS=60`
# splits the seconds among the targets (at least 5 s each).
#
#   fuzz_frame  the frame header decoder and the shared value decoders
#   fuzz_msg    msg.c, qosmsg.c, layout.c codecs: decode, re-encode, round trip
#   fuzz_mds    mds_server_dispatch on a temporary LMDB namespace
#   fuzz_oss    the OSS data-port decoder (oss/req.c) and the control port
#               (oss_ctl_execute) on a temporary OST
#
# The libraries are built by the top Makefile in build-fuzz-lib (CC=clang
# -fsanitize=fuzzer-no-link, SAN=1), so they track the source list;
# seeds are whole v3 requests written by tests/fuzz/mkseed.c with the real
# encoders.  A crash leaves its input in build-fuzz/artifacts/ (re-run one:
# build-fuzz/fuzz_NAME build-fuzz/artifacts/NAME-crash-...) and makes the
# script fail after the other targets have run.  Set FUZZ_TARGETS to run a
# subset, e.g. FUZZ_TARGETS="mds oss".
set -e
secs=${1:-30}
[ -n "$secs" ] || secs=30
out=build-fuzz
lib=build-fuzz-lib
CLANG=${CLANG:-clang}
JOBS=${JOBS:-2}
targets=${FUZZ_TARGETS:-frame msg mds oss}
mkdir -p "$out/artifacts"

# clang warns where gcc does not (the tree is -Werror for gcc): a wrapper
# puts the coverage flag and -Wno-error after the Makefile's flags.
printf '#!/bin/sh\nexec %s "$@" -fsanitize=fuzzer-no-link -Wno-error\n' "$CLANG" >"$out/cc"
chmod +x "$out/cc"
make -s --no-print-directory O="$lib" SAN=1 CC="$PWD/$out/cc" -j"$JOBS" \
	"$lib/lib/libpfsmds.a" "$lib/lib/libpfsoss.a" "$lib/lib/libpfsqos.a" \
	"$lib/lib/libpfscommon.a" >"$out/lib-build.log" 2>&1 ||
	{ tail -n 30 "$out/lib-build.log"; exit 1; }
LIBS_COMMON="$lib/lib/libpfscommon.a"
PKG_LIBS=$(pkg-config --libs libevent libevent_pthreads jansson inih libsodium)
SYS_LIBS="$PKG_LIBS -llmdb -lglpk -lz -lm -lpthread"
FLAGS="-g -O1 -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I. -Wall -Wextra -Werror \
	-Wno-unused-parameter -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"

build() { # name, libraries...
	name=$1
	shift
	# shellcheck disable=SC2086
	$CLANG $FLAGS "tests/fuzz/fuzz_$name.c" "$@" $SYS_LIBS -o "$out/fuzz_$name"
}

# Seeds, from the real encoders (plain clang, no instrumentation).
$CLANG -O1 -std=c11 -D_GNU_SOURCE -I. -Wall -Wextra -Werror tests/fuzz/mkseed.c \
	common/proto.c common/buf.c -o "$out/mkseed"
rm -rf "$out/seeds"
"$out/mkseed" "$out/seeds"

n=0
for t in $targets; do n=$((n + 1)); done
each=$((secs / n))
[ "$each" -ge 5 ] || each=5
failed=""
for t in $targets; do
	case $t in
	frame | msg) build "$t" "$LIBS_COMMON" ;;
	mds) build mds "$lib/lib/libpfsmds.a" "$lib/lib/libpfsqos.a" "$LIBS_COMMON" ;;
	oss) build oss "$lib/lib/libpfsoss.a" "$lib/lib/libpfsqos.a" "$LIBS_COMMON" ;;
	*) echo "fuzz: unknown target $t" >&2; exit 2 ;;
	esac
	mkdir -p "$out/corpus/$t"
	echo "fuzz: $t for ${each}s"
	if "$out/fuzz_$t" -max_total_time="$each" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$out/artifacts/$t-" \
		"$out/corpus/$t" "$out/seeds/$t" >"$out/$t.log" 2>&1; then
		grep -E '^stat::(number_of_executed_units|peak_rss_mb|new_units_added)' \
			"$out/$t.log" | tr '\n' ' '
		echo
	else
		tail -n 40 "$out/$t.log"
		echo "fuzz: $t FAILED; log $out/$t.log, reproducer in $out/artifacts/" >&2
		failed="$failed $t"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz: failures in:$failed" >&2
	exit 1
fi
echo "fuzz: $targets ran ${each}s each without a crash"
