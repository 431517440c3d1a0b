#!/bin/sh
# Builds the addon with AddressSanitizer and UndefinedBehaviorSanitizer into
# a separate directory and runs the tap suite against it, so the C code is
# checked under real HTTP traffic and not only by the C unit tests.
#
#   scripts/test-asan.sh [tap arguments...]    (npm run test:asan)
#
# How it works:
#   * binding.gyp and src/ are copied to a temporary directory and built
#     there by node-gyp with the sanitizer flags in CFLAGS/LDFLAGS, so the
#     normal build/ is left alone. gcc is used, because the runtime that is
#     preloaded below is gcc's.
#   * node-gyp-build, which lib/binding.js loads the addon through, honours
#     HTTP_ONESHOT_PREBUILD=<dir> (derived from the package name) and looks
#     in <dir>/build/Release instead of the package root: no loader change
#     is needed.
#   * node itself is not built with ASan, so the ASan runtime has to be in
#     the process before any instrumented code: LD_PRELOAD of gcc's
#     libasan.so (`gcc -print-file-name=libasan.so`). It is inherited by
#     every node process tap and the tests spawn.
#   * ASAN_OPTIONS=detect_leaks=0: V8 and Node keep allocations alive until
#     exit by design, so LeakSanitizer would report them on every exit. Leaks
#     in the C core are covered by `make valgrind` and the C tests' ASan
#     build (Makefile).
#   * -fno-sanitize-recover=all and halt_on_error make any UBSan report abort
#     the process, so a finding fails the test that triggered it.
#
# Environment: ASAN_BUILD_DIR=<dir> builds there and keeps it (the default
# is a temporary directory removed at exit); CC (default gcc).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cc=${CC:-gcc}
libasan=$("$cc" -print-file-name=libasan.so)
if [ ! -e "$libasan" ]; then
  echo "test-asan: $cc has no libasan.so ($libasan)" >&2
  exit 1
fi

if [ -n "${ASAN_BUILD_DIR:-}" ]; then
  dir=$ASAN_BUILD_DIR
  mkdir -p "$dir"
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/http-oneshot-asan.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
fi
rm -rf "$dir/src" "$dir/build"
cp "$root/binding.gyp" "$dir/"
cp -R "$root/src" "$dir/src"

# The headers of the running node, as scripts/build.js finds them: node-gyp
# must never download anything.
nodedir=$(node -p "require('node:path').resolve(process.execPath, '..', '..')")
san='-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g'
start=$(date +%s)
(
  cd "$dir"
  CC=$cc CXX=${CXX:-g++} CFLAGS="$san" CXXFLAGS="$san" LDFLAGS="-fsanitize=address,undefined" \
    node "$(cd "$root" && node -p "require.resolve('node-gyp/bin/node-gyp.js')")" \
    rebuild --nodedir="$nodedir" --jobs=1 >build.log 2>&1
) || { cat "$dir/build.log" >&2; exit 1; }
built=$(date +%s)

addon="$dir/build/Release/http_oneshot.node"
if ! ldd "$addon" | grep -q libasan; then
  echo "test-asan: $addon is not linked against libasan" >&2
  exit 1
fi

export HTTP_ONESHOT_PREBUILD="$dir"
export LD_PRELOAD="$libasan"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

# The suite must really load the sanitized addon, not the normal build.
loaded=$(cd "$root" && node -e "
  const binding = require('./lib/binding.js')
  if (binding === null) throw new Error('the addon did not load')
  if (!require('node:fs').readFileSync('/proc/self/maps', 'latin1').includes('libasan')) {
    throw new Error('the ASan runtime is not mapped')
  }
  process.stdout.write(require('node-gyp-build').path('.'))
")
if [ "$loaded" != "$addon" ]; then
  echo "test-asan: the suite would load $loaded, not $addon" >&2
  exit 1
fi
echo "test-asan: built $addon in $((built - start)) s; running tap with $libasan preloaded"

cd "$root"
status=0
npx tap --disable-coverage "$@" || status=$?
echo "test-asan: tap exited with $status after $(($(date +%s) - built)) s"
exit $status
