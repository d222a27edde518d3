#!/bin/sh
# Build the Quire sample books reproducibly.
#
#   Samples/build.sh OUTDIR
#
# Writes OUTDIR/quire-sample.epub, OUTDIR/quire-scripts.epub and OUTDIR/quire-sample.pdf. Two runs over the same source tree
# produce byte-identical files: every file gets a fixed mtime and fixed
# permissions, entries are added in a sorted order, and zip is run with -X
# (no extra attributes such as uid/gid or extended timestamps) under TZ=UTC.
set -eu

usage() {
  echo "usage: $0 OUTDIR" >&2
  exit 2
}

[ "$#" -eq 1 ] || usage
[ -n "$1" ] || usage

if ! command -v zip >/dev/null 2>&1; then
  echo "build.sh: error: 'zip' is required but was not found in PATH (on Debian/Ubuntu: apt-get install zip)" >&2
  exit 1
fi

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
FIXED_DATE='2026-01-01 00:00:00 UTC'

mkdir -p "$1"
OUTDIR=$(cd "$1" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/quire-sample.XXXXXX")
cleanup() {
  rm -rf "$WORK"
  rm -f "$OUTDIR"/.*.tmp.$$
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# build_book NAME: Samples/NAME/ → OUTDIR/NAME.epub
build_book() {
  SRC="$SCRIPT_DIR/$1"
  OUT="$OUTDIR/$1.epub"
  TMPOUT="$OUTDIR/.$1.epub.tmp.$$"
  if [ ! -f "$SRC/mimetype" ]; then
    echo "build.sh: error: source tree not found at $SRC" >&2
    exit 1
  fi
  # Copy only the EPUB content (no hidden files such as editor backups).
  rm -rf "$WORK/book"
  mkdir "$WORK/book"
  cp "$SRC/mimetype" "$WORK/book/mimetype"
  cp -R "$SRC/META-INF" "$SRC/EPUB" "$WORK/book/"
  find "$WORK/book" -name '.*' -exec rm -rf {} + 2>/dev/null || true

  # Normalise metadata that zip records: permissions and modification times.
  find "$WORK/book" -type d -exec chmod 755 {} +
  find "$WORK/book" -type f -exec chmod 644 {} +
  find "$WORK/book" -exec touch -d "$FIXED_DATE" {} +

  rm -f "$TMPOUT"
  (
    cd "$WORK/book"
    export TZ=UTC LC_ALL=C
    # mimetype first, stored uncompressed, no extra fields (OCF requirement).
    zip -q -X -0 "$TMPOUT" mimetype
    # Everything else, compressed, without directory entries, in sorted order.
    find META-INF EPUB -type f | LC_ALL=C sort | zip -q -X -9 -D "$TMPOUT" -@
  )
  mv -f "$TMPOUT" "$OUT"
  echo "built $OUT"
}

build_book quire-sample
build_book quire-scripts
# The sample PDF is committed as made by make-assets.py (it is plain bytes; nothing to pack).
cp "$SCRIPT_DIR/quire-sample.pdf" "$OUTDIR/.quire-sample.pdf.tmp.$$"
mv -f "$OUTDIR/.quire-sample.pdf.tmp.$$" "$OUTDIR/quire-sample.pdf"
echo "copied $OUTDIR/quire-sample.pdf"
