#!/usr/bin/env bash
# PDF benchmark, run by `make bench` (through scripts/bench.sh): every page to PNG at 150 dpi,
# Quire against pdftocairo and MuPDF (mutool), alternating runs, medians, ratios and peak RSS (GNU time).
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS="${QUIRE_CORPUS:-../shared/corpus}"
QUIRE="$PWD/.build/release/quire"
RUNS="${BENCH_PDF_RUNS:-3}"
if [ ! -d "$CORPUS" ]; then
  echo "bench-pdf: corpus not found at $CORPUS (set QUIRE_CORPUS); nothing to measure" >&2
  exit 0
fi
[ -x "$QUIRE" ] || swift build -c release --static-swift-stdlib -j 1
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# One timed run: prints "seconds peak_kb cpu_seconds" (CPU = user + system, which other load on
# a shared machine disturbs less than wall time).
measure() {
  /usr/bin/time -f "%e %M %U %S" -o "$WORK/time" bash -c "$1" >/dev/null 2>&1
  awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }' "$WORK/time"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "== PDF: every page to PNG at 150 dpi (median of $RUNS alternating runs; quire uses every core, the others one)"
echo "   load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for pdf in "$CORPUS/pdfjs-test-pdfs/freeculture.pdf" "$CORPUS/debian-doc-pdfs/gnuplot.pdf"; do
  name="$(basename "$pdf" .pdf)"
  pages="$(pdfinfo "$pdf" 2>/dev/null | awk '/^Pages:/ { print $2 }')"
  : >"$WORK/q"; : >"$WORK/c"; : >"$WORK/m"
  for _ in $(seq "$RUNS"); do
    measure "rm -rf '$WORK/q-out' && '$QUIRE' render '$pdf' --out '$WORK/q-out' --dpi 150 --quiet" >>"$WORK/q"
    measure "rm -rf '$WORK/c-out' && mkdir '$WORK/c-out' && pdftocairo -png -r 150 '$pdf' '$WORK/c-out/out'" >>"$WORK/c"
    measure "rm -rf '$WORK/m-out' && mkdir '$WORK/m-out' && mutool draw -q -r 150 -o '$WORK/m-out/out%04d.png' '$pdf'" >>"$WORK/m"
  done
  qt=$(cut -d' ' -f1 "$WORK/q" | median); qm=$(cut -d' ' -f2 "$WORK/q" | median)
  ct=$(cut -d' ' -f1 "$WORK/c" | median); cm=$(cut -d' ' -f2 "$WORK/c" | median)
  mt=$(cut -d' ' -f1 "$WORK/m" | median); mm=$(cut -d' ' -f2 "$WORK/m" | median)
  printf "%-12s %4s pages | quire %6.2f s %7d KB | pdftocairo %6.2f s %7d KB | mutool %6.2f s %7d KB\n" \
    "$name" "$pages" "$qt" "$qm" "$ct" "$cm" "$mt" "$mm"
  qc=$(cut -d' ' -f3 "$WORK/q" | median); cc=$(cut -d' ' -f3 "$WORK/c" | median); mc=$(cut -d' ' -f3 "$WORK/m" | median)
  printf "%-12s            time ratio vs pdftocairo %.3f (target <= 0.07), vs mutool %.2f (target <= 0.5); RSS ratio vs mutool %.2f\n" \
    "" "$(echo "$qt / $ct" | bc -l)" "$(echo "$qt / $mt" | bc -l)" "$(echo "$qm / $mm" | bc -l)"
  printf "%-12s            CPU seconds: quire %.2f, pdftocairo %.2f, mutool %.2f (ratios %.3f, %.2f)\n" \
    "" "$qc" "$cc" "$mc" "$(echo "$qc / $cc" | bc -l)" "$(echo "$qc / $mc" | bc -l)"
  echo "             output: quire $(ls "$WORK/q-out/pages" | wc -l) files $(du -sk "$WORK/q-out/pages" | cut -f1) KB, pdftocairo $(du -sk "$WORK/c-out" | cut -f1) KB, mutool $(du -sk "$WORK/m-out" | cut -f1) KB"
done
