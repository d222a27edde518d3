#!/usr/bin/env bash
# The W3C EPUB 3 reading-system suite through Quire, beside the 18 published systems' results.
# usage: scripts/w3c-report.sh [OUT]   (default build/w3c-report; needs ../shared/corpus)
# Prints the Markdown table (also OUT/report.md) and writes a contact sheet per test in OUT/sheets/.
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=${QUIRE_CORPUS:-../shared/corpus}/w3c-epub-tests-suite
OUT=${1:-build/w3c-report}
QUIRE=${QUIRE_BINARY:-.build/release/quire}
if [ ! -d "$SUITE" ]; then
  echo "w3c-report: $SUITE is not here (the suite lives in ../shared/corpus)" >&2
  exit 66
fi
if [ ! -x "$QUIRE" ]; then
  echo "w3c-report: $QUIRE is not built (make release)" >&2
  exit 66
fi
for tool in python3 convert montage; do
  command -v "$tool" >/dev/null || { echo "w3c-report: $tool is missing (make setup installs it)" >&2; exit 69; }
done
mkdir -p "$OUT"
exec python3 scripts/w3c-report.py "$(realpath "$QUIRE")" "$(realpath "$SUITE")" "$OUT"
