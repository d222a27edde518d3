#!/usr/bin/env bash
# Batch throughput, run by `make bench`: `quire batch` over 20 corpus books against GNU parallel
# -j2 running mutool on the same books at the same page and font size, runs alternating. Both
# sides use both cores. Each line gives the median wall time, the CPU time (user+sys of the whole
# process tree), peak RSS, books/s and pages/s.
#
# The same work on both sides:
#   map-only  quire lays every book out and writes its position map; mutool lays every book
#             out and draws its last page (MuPDF lays out every chapter to find it);
#   PNG       both paint every page at 96 dpi.
# Peak RSS is quire's one process (both workers) against the larger of the two mutool processes.
# Both start cold: quire with --no-cache, mutool with its accelerator files removed before each
# run (MuPDF keeps each EPUB's chapter page counts in /var/tmp/<path>.accel, and with one there it
# draws the last page of War and Peace in 30 ms without laying the book out). The line after the
# comparison shows what quire's layout cache gives a second profile that differs only in theme.
#
# Then the figures docs/scaling.md's capacity model uses: pages per CPU-second for map-only and
# PNG at three device profiles (two e-ink readers in grey, a phone in colour), and bytes per page.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS="${QUIRE_CORPUS:-../shared/corpus}"
QUIRE="$PWD/.build/release/quire"
RUNS="${BENCH_BATCH_RUNS:-3}"
if [ ! -d "$CORPUS" ]; then
  echo "bench-batch: corpus not found at $CORPUS (set QUIRE_CORPUS); nothing to measure" >&2
  exit 0
fi
command -v parallel >/dev/null || { echo "bench-batch: GNU parallel is missing (make setup installs it)" >&2; exit 69; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

books=(
  standardebooks/herman-melville_moby-dick.epub standardebooks/jane-austen_pride-and-prejudice.epub
  standardebooks/leo-tolstoy_war-and-peace_louise-maude_aylmer-maude.epub
  standardebooks/lewis-carroll_alices-adventures-in-wonderland.epub standardebooks/walt-whitman_leaves-of-grass.epub
  misc-epubs/epubjs-alice.epub misc-epubs/thorium-large-tables.epub
  idpf-epub3-samples/GhV-oeb-page.epub idpf-epub3-samples/childrens-literature.epub
  idpf-epub3-samples/cole-voyage-of-life.epub idpf-epub3-samples/epub30-spec.epub idpf-epub3-samples/georgia-cfi.epub
  idpf-epub3-samples/hefty-water.epub idpf-epub3-samples/internallinks.epub idpf-epub3-samples/israelsailing.epub
  idpf-epub3-samples/linear-algebra.epub idpf-epub3-samples/moby-dick.epub idpf-epub3-samples/regime-anticancer-arabic.epub
  idpf-epub3-samples/trees.epub idpf-epub3-samples/wasteland.epub
)
: >"$WORK/books.txt"
for book in "${books[@]}"; do
  [ -f "$CORPUS/$book" ] || { echo "bench-batch: $CORPUS/$book is missing" >&2; exit 66; }
  realpath "$CORPUS/$book" >>"$WORK/books.txt"
done
count=${#books[@]}

# Same geometry for both: a 600×800 pt page at 96 dpi (800×1067 px), 12 pt text, 36 pt margins (MuPDF's).
GEOMETRY="--size 800x1067 --dpi 96 --font-size 12 --margin 36"
MUPDF="mutool draw -q -r 96 -W 600 -H 800 -S 12"

# One timed run of a shell command: "wall cpu peak_kb". Wall from bash's microsecond clock; CPU
# (user+sys of every process it waited for) and peak RSS (of the largest) from GNU time.
measure() {
  local start end
  start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S %M" -o "$WORK/time" bash -c "$1" >/dev/null 2>"$WORK/stderr" || {
    echo "bench-batch: failed: $1" >&2; cat "$WORK/stderr" >&2; exit 70; }
  end=$EPOCHREALTIME
  read -r user sys rss <"$WORK/time"
  echo "$(echo "$end - $start" | bc -l) $(echo "$user + $sys" | bc -l) $rss"
}
# MuPDF's accelerator file for a document: in /var/tmp, the path without its first / and with
# the others made %.
accelerator() { local name=${1#/}; echo "/var/tmp/${name//\//%}.accel"; }
remove_accelerators() {
  local book
  while read -r book; do rm -f "$(accelerator "$book")"; done <"$WORK/books.txt"
}
# That name is right for this MuPDF, or the runs below would not be cold.
first=$(head -1 "$WORK/books.txt")
$MUPDF -o "$WORK/probe.png" "$first" N 2>/dev/null
[ -f "$(accelerator "$first")" ] || { echo "bench-batch: MuPDF's accelerator for $first is not $(accelerator "$first")" >&2; exit 70; }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
column_median() { cut -d' ' -f"$2" "$1" | median; }

# quire batch exits 75 when a book fails; none of these may.
quire_batch() { echo "$QUIRE batch @$WORK/books.txt --out $1 $GEOMETRY --no-cache --quiet --json-log $1.log ${*:2}; test \$? = 0"; }
pages_of() { python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])['pages'])" "$1"; }

report() {
  local label="$1" file="$2" pages="$3"
  local wall cpu rss
  wall=$(column_median "$file" 1); cpu=$(column_median "$file" 2); rss=$(column_median "$file" 3)
  printf "   %-34s %6d pages %7.2f s wall %7.2f s CPU %7d KB | %5.2f books/s %7.1f pages/s %7.1f pages/CPU-s\n" \
    "$label" "$pages" "$wall" "$cpu" "$rss" "$(echo "$count / $wall" | bc -l)" "$(echo "$pages / $wall" | bc -l)" "$(echo "$pages / $cpu" | bc -l)"
  echo "$wall" >"$file.wall"
}

# MuPDF's page count for the map-only line: it draws one page per book there, but lays out all of
# them, so its pages/s counts the pages its PNG run drew (which runs first).
mupdf_png_pages=0
compare() {
  local kind="$1" quire_cmd="$2" mupdf_cmd="$3"
  : >"$WORK/q-$kind"; : >"$WORK/m-$kind"
  for _ in $(seq "$RUNS"); do
    rm -rf "$WORK/q-root" "$WORK/q-root.log" "$WORK/m-out"
    measure "$quire_cmd" >>"$WORK/q-$kind"
    mkdir -p "$WORK/m-out"
    remove_accelerators
    measure "$mupdf_cmd" >>"$WORK/m-$kind"
  done
  local quire_pages mupdf_pages
  quire_pages=$(pages_of "$WORK/q-root.log")
  mupdf_pages=$(find "$WORK/m-out" -name '*.png' | wc -l)
  if [ "$mupdf_pages" -gt "$count" ]; then mupdf_png_pages=$mupdf_pages; else mupdf_pages=$mupdf_png_pages; fi
  echo "== $kind: $count books, median of $RUNS alternating runs"
  report "quire batch (--jobs 2)" "$WORK/q-$kind" "$quire_pages"
  report "parallel -j2 mutool" "$WORK/m-$kind" "$mupdf_pages"
  printf "   wall time ratio quire/mutool %.2f\n" "$(echo "$(cat "$WORK/q-$kind.wall") / $(cat "$WORK/m-$kind.wall")" | bc -l)"
}

compare "PNG, every page" \
  "$(quire_batch "$WORK/q-root")" \
  "parallel -j2 $MUPDF -o $WORK/m-out/{#}-%05d.png {} :::: $WORK/books.txt"
compare "map-only (mutool: layout and the last page; pages are those it laid out)" \
  "$(quire_batch "$WORK/q-root" --map-only)" \
  "parallel -j2 $MUPDF -o $WORK/m-out/{#}.png {} N :::: $WORK/books.txt"

# The layout cache: the same books again in the dark theme, into the same root.
rm -rf "$WORK/c-root" "$WORK/c-root.log"
bash -c "$(quire_batch "$WORK/c-root" | sed 's/ --no-cache//')"
: >"$WORK/c"
for _ in $(seq "$RUNS"); do
  rm -rf "$WORK/c-root/"*/*/  # the finished items, not .cache
  measure "$(quire_batch "$WORK/c-root" --theme dark | sed 's/ --no-cache//')" >>"$WORK/c"
done
echo "== a second profile, only the theme apart, from the layout cache"
report "quire batch --theme dark, cached" "$WORK/c" "$(pages_of "$WORK/c-root.log")"
python3 -c "import json,sys; s=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print('   chapters laid out %d, from the cache %d' % (s['chaptersLaidOut'], s['chaptersFromCache']))" "$WORK/c-root.log"

# Capacity inputs: one process, one worker, so CPU-seconds are per core.
echo "== capacity inputs: one worker (--jobs 1), per CPU-second, the same $count books"
for profile in eink-6 kobo-clara phone; do
  for mode in map-only png; do
    rm -rf "$WORK/k-root" "$WORK/k-root.log"
    flags="--profile $profile --jobs 1 --no-cache --quiet --json-log $WORK/k-root.log"
    [ "$mode" = map-only ] && flags="$flags --map-only"
    [ "$mode" = png ] && [ "$profile" != phone ] && flags="$flags --gray"  # e-ink is grey
    read -r wall cpu rss <<<"$(measure "$QUIRE batch @$WORK/books.txt --out $WORK/k-root $flags")"
    pages=$(pages_of "$WORK/k-root.log")
    bytes=$(du -sb --exclude=.cache "$WORK/k-root" | cut -f1)
    printf "   %-8s %-8s %6d pages %7.2f CPU-s %7.1f pages/CPU-s %8.0f bytes/page %7d KB peak\n" \
      "$profile" "$mode" "$pages" "$cpu" "$(echo "$pages / $cpu" | bc -l)" "$(echo "$bytes / $pages" | bc -l)" "$rss"
  done
done
