#!/usr/bin/env bash
# `make test-sanitize`: the whole test suite under AddressSanitizer, then under ThreadSanitizer,
# each built in a scratch path of its own (.build-asan, .build-tsan) with optimisation on (the
# debug build under ASan takes well over an hour on two cores), and each CLI run by the tests is
# that build's sanitized `quire`. Usage: scripts/test-sanitize.sh [asan|tsan|both]
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-both}
root=$PWD

run() {
  local name=$1 sanitizer=$2
  local scratch=$root/.build-$name started
  started=$(date +%s)
  echo "== test-sanitize: $name: building ($scratch)"
  # -enable-testing: the tests' @testable imports in an optimised build.
  swift build -c release --sanitize="$sanitizer" --build-tests --scratch-path "$scratch" -Xswiftc -enable-testing
  echo "== test-sanitize: $name: running the suite"
  # QUIRE_SANITIZER: the hostile suite allows for the sanitizer's shadow memory in its bound.
  QUIRE_SANITIZER=$sanitizer QUIRE_BINARY=$scratch/release/quire swift test -c release --sanitize="$sanitizer" --skip-build --scratch-path "$scratch" -Xswiftc -enable-testing
  echo "test-sanitize: $name passed in $(($(date +%s) - started)) s (build and suite)"
}

# Leak checking is off: LeakSanitizer finds a pointer only where it is stored as a plain address,
# and Swift keeps the case of a multi-payload enum in the spare bits of its payload's pointer, so
# every object reachable only through such an enum (Pagination's engine, a :not() selector of the
# user-agent sheet) is reported as leaked. The fuzz targets check leaks on their own inputs.
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:detect_stack_use_after_return=0
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/sanitizers/tsan.supp"

case $which in
  asan) run asan address ;;
  tsan) run tsan thread ;;
  both) run asan address && run tsan thread ;;
  *) echo "usage: $0 [asan|tsan|both]" >&2; exit 64 ;;
esac
