#!/usr/bin/env bash
# The library example of docs/library.md, compiled and run as another project would use Quire:
# Examples/reader is a separate package that depends on Quire by path. Checks that the document's
# example is exactly Examples/reader's main.swift, builds the package, and runs it on the sample book.
set -euo pipefail
cd "$(dirname "$0")/.."
example=Examples/reader/Sources/reader/main.swift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The swift block right after the example marker.
awk '/<!-- example: Examples\/reader\/Sources\/reader\/main.swift -->/ {found=1; next}
     found && /^```swift/ {inside=1; next}
     inside && /^```/ {exit}
     inside {print}' docs/library.md > "$work/documented.swift"
if ! diff -u "$example" "$work/documented.swift"; then
  echo "check-example: docs/library.md's example differs from $example" >&2
  exit 1
fi

swift build --package-path Examples/reader
reader=$(swift build --package-path Examples/reader --show-bin-path)/reader

book=build/samples/quire-sample.epub
[ -f "$book" ] || sh Samples/build.sh build/samples > /dev/null
# A CFI of the book: the start of its fifth page at kobo-clara, from the CLI's map.
quire=${QUIRE_BINARY:-.build/release/quire}
"$quire" render "$book" --out "$work/map" --map-only --quiet
cfi=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['pages'][4]['start']['cfi'])" "$work/map/positions.json")
count=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['pageCount'])" "$work/map/positions.json")

"$reader" "$book" "$cfi" "$work/page.png" | tee "$work/out.txt"
grep -q "is on page 5 of $count " "$work/out.txt" || { echo "check-example: the CFI did not land on page 5 of $count (the CLI's page count)" >&2; exit 1; }
grep -q "^on a phone: page " "$work/out.txt" || { echo "check-example: no phone page" >&2; exit 1; }
# The page it wrote is the CLI's page 5, byte for byte.
"$quire" render "$book" --out "$work/pages" --pages 5 --quiet
cmp "$work/page.png" "$work/pages/pages/0005.png"
echo "check-example: docs/library.md's example builds and runs; page 5 is the CLI's, byte for byte"
