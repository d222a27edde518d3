#!/usr/bin/env bash
# Quire's pages of one chapter beside headless Chromium's print of it, at the same page box and
# with Quire's bundled fonts mapped in, so that lines break alike and what differs is layout.
#
#   scripts/compare-chromium.sh BOOK.epub SPINE_INDEX OUT_DIR [PROFILE]
#
# PROFILE is a Quire device profile (default kobo-clara). OUT_DIR gets quire-NNNN.png (the
# chapter's pages from `quire render`), chromium-NNNN.png (Chromium's print, rasterised at the
# profile's pixel size) and side-NNNN.png (the two side by side, Quire on the left). Chromium
# gets a copy of the chapter with `@page { size; margin }` set to Quire's page and margins, and
# a private fontconfig file whose serif, sans-serif and monospace are Quire's fonts.
# Exit codes: 64 usage, 66 no such book, 69 chromium or a tool missing (`make setup` installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/compare-chromium.sh BOOK.epub SPINE_INDEX OUT_DIR [PROFILE]" >&2; exit 64; }
[ $# -ge 3 ] && [ $# -le 4 ] || usage
book="$1"; spine="$2"; out="$3"; profile="${4:-kobo-clara}"
[[ "$spine" =~ ^[0-9]+$ ]] || usage
[ -f "$book" ] || { echo "compare-chromium: $book: no such file" >&2; exit 66; }
for tool in chromium pdftocairo convert unzip python3; do
  command -v "$tool" >/dev/null || { echo "compare-chromium: $tool is missing (make setup installs it)" >&2; exit 69; }
done
quire="${QUIRE_BINARY:-$PWD/.build/release/quire}"
[ -x "$quire" ] || { echo "compare-chromium: $quire is not built (make release)" >&2; exit 69; }
fonts="$PWD/Fonts"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# Quire: the map says which pages are the chapter's and what the page box is.
"$quire" render "$book" --out "$work/map" --profile "$profile" --map-only --quiet
read -r first last width height dpi margin_pt < <(python3 - "$work/map/positions.json" "$spine" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1])); spine = int(sys.argv[2])
pages = [p["page"] for p in m["pages"] if p.get("spineIndex") == spine]
if not pages:
    sys.exit(f"compare-chromium: spine item {spine} has no pages (the book has {len(m.get('spine', []))} spine items)")
p = m["profile"]
print(min(pages), max(pages), p["width"], p["height"], p["dpi"], p["margin"])
EOF
)
"$quire" render "$book" --out "$work/quire" --profile "$profile" --pages "$first-$last" --quiet

# The chapter, unpacked beside its resources, with Quire's page box added last in its head.
unzip -q "$book" -d "$work/book"
# Chromium reads no -epub- properties (vertical books often use only those): the standard names,
# as reading systems built on a browser map them.
python3 - "$work/book" <<'EOF'
import os, sys
pairs = [("-epub-text-combine: horizontal", "text-combine-upright: all"), ("-epub-text-combine:horizontal", "text-combine-upright:all"),
         ("-epub-writing-mode", "writing-mode"), ("-epub-text-orientation", "text-orientation"), ("-epub-text-emphasis", "text-emphasis")]
for folder, _, files in os.walk(sys.argv[1]):
    for name in files:
        if name.rsplit(".", 1)[-1].lower() in ("css", "xhtml", "html", "htm"):
            path = os.path.join(folder, name)
            text = open(path, encoding="utf-8", errors="surrogateescape").read()
            mapped = text
            for old, new in pairs:
                mapped = mapped.replace(old, new)
            if mapped != text:
                open(path, "w", encoding="utf-8", errors="surrogateescape").write(mapped)
EOF
chapter=$(python3 - "$work/book" "$spine" <<'EOF'
import os, sys, xml.etree.ElementTree as ET
root, spine = sys.argv[1], int(sys.argv[2])
container = ET.parse(os.path.join(root, "META-INF/container.xml"))
opf = container.find(".//{urn:oasis:names:tc:opendocument:xmlns:container}rootfile").get("full-path")
package = ET.parse(os.path.join(root, opf))
ns = {"opf": "http://www.idpf.org/2007/opf"}
items = {i.get("id"): i.get("href") for i in package.findall(".//opf:manifest/opf:item", ns)}
refs = package.findall(".//opf:spine/opf:itemref", ns)
from urllib.parse import unquote
print(os.path.join(root, os.path.dirname(opf), unquote(items[refs[spine].get("idref")])))
EOF
)
python3 - "$chapter" "$width" "$height" "$dpi" "$margin_pt" <<'EOF'
import sys
path, width, height, dpi, margin_pt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
scale = dpi / 96                                   # device pixels per CSS pixel, as Quire's
# Chromium shrinks a printed page whose content overflows it sideways (a long <pre> line) by up
# to 1.5; clipping the root's overflow, as the page edge clips Quire's, keeps its scale at 1.
margin_px = round(margin_pt * dpi / 72)            # Quire rounds its margin to whole pixels
style = ("<style>@page { size: %.3fpx %.3fpx; margin: %.3fpx } html { -webkit-print-color-adjust: exact } html, body { overflow: clip !important }</style>"
         % (width / scale, height / scale, margin_px / scale))
text = open(path, encoding="utf-8").read()
head = text.lower().rfind("</head>")
text = text[:head] + style + text[head:] if head >= 0 else style + text
open(path, "w", encoding="utf-8").write(text)
EOF

# Quire's fonts for Chromium's generic families, and nothing else from the system.
cat >"$work/fonts.conf" <<EOF
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>$fonts</dir>
  <dir>/usr/share/fonts</dir>
  <cachedir>$work/fontcache</cachedir>
  <alias binding="strong"><family>serif</family><prefer><family>Linux Libertine O</family></prefer></alias>
  <alias binding="strong"><family>sans-serif</family><prefer><family>Linux Biolinum O</family></prefer></alias>
  <alias binding="strong"><family>monospace</family><prefer><family>JetBrains Mono</family></prefer></alias>
</fontconfig>
EOF
FONTCONFIG_FILE="$work/fonts.conf" chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer \
  --user-data-dir="$work/profile" --print-to-pdf="$work/chromium.pdf" "file://$chapter" >/dev/null 2>&1
[ -s "$work/chromium.pdf" ] || { echo "compare-chromium: chromium printed nothing" >&2; exit 70; }
pdftocairo -png -scale-to-x "$width" -scale-to-y "$height" "$work/chromium.pdf" "$work/chromium"

# Quire's pages and Chromium's, numbered from the chapter's first page, side by side.
n=0
for page in $(seq "$first" "$last"); do
  n=$((n + 1))
  number=$(printf "%04d" "$n")
  cp "$work/quire/pages/$(printf "%04d" "$page").png" "$out/quire-$number.png"
done
n=0
for file in $(ls "$work"/chromium-*.png | sort -V); do
  n=$((n + 1))
  cp "$file" "$out/chromium-$(printf "%04d" "$n").png"
done
count=$(( $(ls "$out"/quire-*.png | wc -l) > n ? $(ls "$out"/quire-*.png | wc -l) : n ))
for i in $(seq 1 "$count"); do
  number=$(printf "%04d" "$i")
  left="$out/quire-$number.png"; right="$out/chromium-$number.png"
  [ -f "$left" ] || convert -size "${width}x${height}" xc:'#dddddd' "$left"
  [ -f "$right" ] || convert -size "${width}x${height}" xc:'#dddddd' "$right"
  convert "$left" "$right" -bordercolor '#888888' -border 2 +append "$out/side-$number.png"
done
echo "compare-chromium: spine item $spine is Quire's pages $first–$last ($((last - first + 1))) and Chromium's $n; side by side in $out/side-*.png"
