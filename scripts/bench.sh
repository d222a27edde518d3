#!/usr/bin/env bash
# Benchmarks, run by `make bench` (never by tests). Prints medians; ratios against MuPDF and poppler
# are added here as the layout and PDF stages land.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS="${QUIRE_CORPUS:-../shared/corpus}"
QUIRE=.build/release/quire
if [ ! -d "$CORPUS" ]; then
  echo "bench: corpus not found at $CORPUS (set QUIRE_CORPUS); nothing to measure" >&2
  exit 0
fi
books=(
  "$CORPUS/standardebooks/leo-tolstoy_war-and-peace_louise-maude_aylmer-maude.epub"
  "$CORPUS/idpf-epub3-samples/mahabharata.epub"
  "$CORPUS/standardebooks/herman-melville_moby-dick.epub"
)
echo "== quire info (container, OPF, nav): median of hyperfine runs"
for book in "${books[@]}"; do
  csv=$(mktemp)
  hyperfine -N --warmup 5 --runs 30 --export-csv "$csv" "$QUIRE info --json $book" >/dev/null 2>&1
  median=$(awk -F, 'NR==2 { printf "%.1f", $4 * 1000 }' "$csv")
  rm -f "$csv"
  rss=$( { /usr/bin/time -f "%M" "$QUIRE" info --json "$book" >/dev/null; } 2>&1 | tail -1)
  printf "  %-70s %8s ms  %8s KB peak RSS\n" "$(basename "$book")" "$median" "$rss"
done
