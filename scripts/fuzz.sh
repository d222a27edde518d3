#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/) and runs each for SECONDS, one after another.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]        (make fuzz SECONDS=600 TARGETS="FuzzCSS FuzzImages")
#   PARALLEL=2 scripts/fuzz.sh 600               (two targets at a time, one core each)
#
# Each target starts from its seed corpus (Fuzz/Seeds/TARGET, plus what this script makes from
# Samples/ and, when it is there, the test corpus: scripts/fuzz-corpus-seeds.py) and keeps what it finds in Fuzz/Corpus/TARGET, so a later run goes on from there.
# Crashes, leaks, timeouts and out-of-memory inputs are written to Fuzz/Artifacts/TARGET/, the
# whole libFuzzer output to Fuzz/Artifacts/TARGET.log. Prints one line per target (seconds, runs,
# exec/s, coverage, finding) and exits 1 if any target found anything.
#
# libFuzzer flags: -timeout=10 (seconds for one input) and -rss_limit_mb=2048 (malloc_limit_mb
# follows it), far above what a tiny input needs; the targets keep books under Fuzz.limits.
set -euo pipefail

# All in a function, read whole before it runs: the script can be edited while it fuzzes.
main() {
seconds=${1:-60}
shift || true
parallel=${PARALLEL:-1}
case "$parallel" in '' | *[!0-9]* | 0) echo "fuzz: PARALLEL must be a whole number of at least 1, not '$parallel'" >&2; exit 2 ;; esac
all_targets=(FuzzContainer FuzzXHTML FuzzCSS FuzzPositions FuzzImages FuzzLayout FuzzFonts)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
case "$seconds" in '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;; esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scratch=.build-fuzz
swift=${SWIFT:-swift}
flags=(-c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing
  -Xcc -fsanitize=fuzzer-no-link,address)

echo "== building ${targets[*]} (scratch path $scratch)"
for target in "${targets[@]}"; do
  case " ${all_targets[*]} " in *" $target "*) ;; *) echo "fuzz: no target $target (${all_targets[*]})" >&2; exit 2 ;; esac
  QUIRE_FUZZ=1 "$swift" build --scratch-path "$scratch" --product "$target" "${flags[@]}"
done
bin=$(QUIRE_FUZZ=1 "$swift" build --scratch-path "$scratch" "${flags[@]}" --show-bin-path)

# Swift's own crash handler would read the crashed process's memory under ASan (a second, bogus
# report): libFuzzer and ASan print the stack instead.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/Fuzz/lsan.supp:print_suppressions=0}

# Seeds made from the samples (not kept in git: they follow Samples/).
generated=Fuzz/Corpus/.seeds
rm -rf "$generated"
mkdir -p "$generated"/{FuzzContainer,FuzzXHTML,FuzzCSS,FuzzPositions,FuzzImages,FuzzLayout,FuzzFonts}
# The font target starts from the bundled fonts (OpenType CFF and TrueType, GSUB and GPOS).
cp Fonts/*.otf Fonts/*.ttf "$generated/FuzzFonts/"
sh Samples/build.sh "$generated/samples" >/dev/null
cp "$generated"/samples/*.epub "$generated/FuzzContainer/"
# The container target's other form: container.xml, OPF, nav, NCX [, encryption.xml] cut by NULs.
container='<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>'
encryption='<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/><enc:CipherData><enc:CipherReference URI="OEBPS/fonts/a.otf"/></enc:CipherData></enc:EncryptedData></encryption>'
for book in quire-sample quire-scripts; do
  source=Samples/$book/EPUB
  ncx=$source/toc.ncx
  [ -f "$ncx" ] || ncx=/dev/null
  { printf '%s\0' "$container"; cat "$source/package.opf"; printf '\0'; cat "$source/nav.xhtml"; printf '\0'; cat "$ncx"; } \
    >"$generated/FuzzContainer/$book-parts"
  { cat "$generated/FuzzContainer/$book-parts"; printf '\0%s' "$encryption"; } >"$generated/FuzzContainer/$book-parts-obfuscated"
  for file in "$source"/text/*.xhtml "$source/nav.xhtml"; do
    cp "$file" "$generated/FuzzXHTML/$book-$(basename "$file")"
    { cat "$file"; printf '\0'; cat "$source"/css/*.css; } >"$generated/FuzzLayout/$book-$(basename "$file")"
  done
  cp "$source"/css/*.css "$generated/FuzzCSS/$book.css"
  cp "$source"/images/* "$generated/FuzzImages/"
done
cp Fuzz/Seeds/FuzzXHTML/* "$generated/FuzzLayout/"
# The test corpus, when it is there (as the tests find it): its small books and the files in them.
corpus_dir=${QUIRE_CORPUS:-$root/../shared/corpus}
if [ -f "$corpus_dir/MANIFEST.md" ]; then
  echo "== seeds from the test corpus $corpus_dir: $(python3 scripts/fuzz-corpus-seeds.py "$corpus_dir" "$generated")"
fi
# The positions target writes its book's map and the CFIs, XPointers and Locators of its pages.
# (Only when it runs: it is built only then.)
if [[ " ${targets[*]} " == *" FuzzPositions "* ]]; then
  : >"$generated/empty"
  QUIRE_FUZZ_SEEDS="$generated/FuzzPositions" "$bin/FuzzPositions" "$generated/empty" >"$generated/FuzzPositions.log" 2>&1 || {
    echo "fuzz: FuzzPositions failed making its seeds (see $generated/FuzzPositions.log)" >&2
    exit 1
  }
  rm "$generated/empty"
fi

# One target's run: its summary line goes to $generated/TARGET.summary, so targets can run side by
# side (PARALLEL) and still be reported in their order.
fuzz_one() {
  local target=$1 corpus artifacts log status runs rate took cov finding artifact
  local dictionary=()
  corpus=Fuzz/Corpus/$target
  artifacts=Fuzz/Artifacts/$target
  log=Fuzz/Artifacts/$target.log
  mkdir -p "$corpus" "$artifacts"
  echo "== $target: ${seconds}s (log $log)"
  # Words of the text formats (Fuzz/Dictionaries): the layout target takes both.
  case $target in
    FuzzCSS) dictionary=(-dict=Fuzz/Dictionaries/css.dict) ;;
    FuzzXHTML) dictionary=(-dict=Fuzz/Dictionaries/xhtml.dict) ;;
    FuzzLayout)
      cat Fuzz/Dictionaries/css.dict Fuzz/Dictionaries/xhtml.dict >"$generated/layout.dict"
      dictionary=(-dict="$generated/layout.dict")
      ;;
  esac
  # Hand-made seeds where the target has them (git keeps no empty folder).
  local seeds=()
  [ -d "Fuzz/Seeds/$target" ] && seeds=("Fuzz/Seeds/$target")
  status=0
  "$bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dictionary[@]}" \
    -artifact_prefix="$artifacts/" "$corpus" "${seeds[@]}" "$generated/$target" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  took=$(sed -n 's/.*Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 || true)
  finding=none
  if grep -q 'ERROR: LeakSanitizer' "$log"; then finding=leak
  elif grep -q 'ERROR: libFuzzer: timeout' "$log"; then finding=timeout
  elif grep -q 'ERROR: libFuzzer: out-of-memory\|allocation-size-too-big\|requested allocation size' "$log"; then finding=out-of-memory
  elif grep -q 'ERROR: AddressSanitizer\|ERROR: libFuzzer: deadly signal\|Fatal error' "$log"; then finding=crash
  elif [ "$status" -ne 0 ]; then finding="exit $status"
  fi
  if [ "$finding" != none ]; then
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    finding="$finding ${artifact:-(no artifact: see the log)}"
  fi
  printf '%-14s %5ss %11s runs %8s exec/s  %-20s %s\n' "$target" "${took:-?}" "${runs:-?}" "${rate:-?}" "${cov:-cov: ?}" "$finding" \
    | tee "$generated/$target.summary"
}

# PARALLEL targets at once (default 1): each libFuzzer process uses one core.
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$parallel" ]; then wait -n || true; running=$((running - 1)); fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait || true

summary=()
failed=0
for target in "${targets[@]}"; do
  line=$(cat "$generated/$target.summary" 2>/dev/null || printf '%-14s did not report' "$target")
  summary+=("$line")
  case $line in *" none") ;; *) failed=1 ;; esac
done

echo "== summary"
printf '%s\n' "${summary[@]}"
return "$failed"
}

main "$@"
