#!/usr/bin/env bash
# Benchmarks, run by `make bench` (never by tests): Quire against MuPDF (mutool) on the same books,
# page size and font size, alternating runs, medians and ratios, peak RSS from GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS="${QUIRE_CORPUS:-../shared/corpus}"
QUIRE="$PWD/.build/release/quire"
RUNS="${BENCH_RUNS:-5}"
RENDER_RUNS="${BENCH_RENDER_RUNS:-5}"
if [ ! -d "$CORPUS" ]; then
  echo "bench: corpus not found at $CORPUS (set QUIRE_CORPUS); nothing to measure" >&2
  exit 0
fi
WP="$CORPUS/standardebooks/leo-tolstoy_war-and-peace_louise-maude_aylmer-maude.epub"
MD="$CORPUS/standardebooks/herman-melville_moby-dick.epub"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# One timed run: prints "wall_seconds cpu_seconds peak_kb". Wall time from bash's microsecond clock
# (GNU time's %e has 10 ms steps, 7% of a 0.15 s run); CPU time (user+sys, the process and its
# children) and peak RSS from GNU time. CPU is what a server busy with a book per core pays.
measure() {
  local start end
  start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S %M" -o "$WORK/time" "$@" >/dev/null 2>&1
  end=$EPOCHREALTIME
  read -r user sys peak <"$WORK/time"
  echo "$(echo "$end - $start" | bc -l) $(echo "$user + $sys" | bc -l) $peak"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Same geometry for both: a 600×800 pt page at 96 dpi (800×1067 px), 12 pt text, 36 pt margins (MuPDF's).
QUIRE_GEOMETRY=(--size 800x1067 --dpi 96 --font-size 12 --margin 36)

# compare LABEL RUNS QUIRE_COMMAND MUPDF_COMMAND: alternating runs, the median of each measure, and
# Quire's ratio to MuPDF for each (below 1: Quire takes less).
compare() {
  local label="$1" runs="$2" quire_cmd="$3" mupdf_cmd="$4"
  : >"$WORK/q"; : >"$WORK/m"
  for _ in $(seq "$runs"); do
    measure bash -c "$quire_cmd" >>"$WORK/q"
    measure bash -c "$mupdf_cmd" >>"$WORK/m"
  done
  local qw qc qm mw mc mm
  qw=$(cut -d' ' -f1 "$WORK/q" | median); qc=$(cut -d' ' -f2 "$WORK/q" | median); qm=$(cut -d' ' -f3 "$WORK/q" | median)
  mw=$(cut -d' ' -f1 "$WORK/m" | median); mc=$(cut -d' ' -f2 "$WORK/m" | median); mm=$(cut -d' ' -f3 "$WORK/m" | median)
  printf "%-34s quire %6.3f s wall %6.3f s CPU %7d KB | mupdf %6.3f s wall %6.3f s CPU %7d KB | ratio wall %.2f CPU %.2f RSS %.2f\n" \
    "$label" "$qw" "$qc" "$qm" "$mw" "$mc" "$mm" \
    "$(echo "$qw / $mw" | bc -l)" "$(echo "$qc / $mc" | bc -l)" "$(echo "$qm / $mm" | bc -l)"
}

# The same work on both sides: MuPDF lays out the whole book and produces its last page only
# (page "N": text of one page, so its cost is the layout); Quire lays out the whole book and writes
# the map. Quire once on one thread (the CPU a server busy with a book per core pays) and once at
# its default (every core: the wall time a single user waits).
echo "== layout without painting: MuPDF's last page only (median of $RUNS alternating runs)"
for book in "$WP" "$MD"; do
  name=$(basename "$book" .epub | cut -c1-22)
  for jobs in 1 default; do
    jobs_flag=""
    [ "$jobs" = default ] || jobs_flag="--jobs $jobs"
    compare "layout $name, jobs $jobs" "$RUNS" \
      "$QUIRE render '$book' --out '$WORK/q-out' ${QUIRE_GEOMETRY[*]} --map-only --quiet $jobs_flag" \
      "mutool draw -a -F txt -o /dev/null -W 600 -H 800 -S 12 '$book' N"
  done
done

# Quire at its default (every core) and, like MuPDF, on one thread: peak RSS grows with the
# workers (each has its page surface and PNG buffers), so the one-thread row is the like-for-like.
echo "== render every page to PNG at 96 dpi (median of $RENDER_RUNS alternating runs)"
for jobs in default 1; do
  jobs_flag=""
  [ "$jobs" = default ] || jobs_flag="--jobs $jobs"
  compare "render $(basename "$MD" .epub | cut -c1-22), jobs $jobs" "$RENDER_RUNS" \
    "rm -rf '$WORK/q-png' && $QUIRE render '$MD' --out '$WORK/q-png' ${QUIRE_GEOMETRY[*]} --quiet $jobs_flag" \
    "rm -rf '$WORK/m-png' && mkdir -p '$WORK/m-png' && mutool draw -a -r 96 -W 600 -H 800 -S 12 -o '$WORK/m-png/out%04d.png' '$MD'"
done
echo "   pages: quire $(ls "$WORK/q-png/pages" | wc -l), mupdf $(ls "$WORK/m-png" | wc -l)"

# Scaling: the same measures per book for books from tens to thousands of pages, one render each
# (PNG) or the median of three (map-only), at the default number of workers. Cost per page stays
# flat as books grow; peak RSS grows with the workers and the largest chapter, not the length.
echo "== scaling: map-only (median of 3) and PNG (one run) at 96 dpi, default workers"
printf "   %-24s %7s | %-38s | %-38s\n" "book" "pages" "map-only: wall, CPU, CPU ms/page, RSS" "PNG: wall, CPU, CPU ms/page, RSS"
for book in "$CORPUS/standardebooks/lewis-carroll_alices-adventures-in-wonderland.epub" \
  "$CORPUS/standardebooks/jane-austen_pride-and-prejudice.epub" "$MD" "$WP" "$CORPUS/idpf-epub3-samples/mahabharata.epub"; do
  : >"$WORK/scale-times"
  for _ in 1 2 3; do measure "$QUIRE" render "$book" --out "$WORK/scale" "${QUIRE_GEOMETRY[@]}" --map-only --quiet >>"$WORK/scale-times"; done
  pages=$(python3 -c "import json; print(json.load(open('$WORK/scale/positions.json'))['pageCount'])")
  sw=$(cut -d' ' -f1 "$WORK/scale-times" | median); sc=$(cut -d' ' -f2 "$WORK/scale-times" | median); sm=$(cut -d' ' -f3 "$WORK/scale-times" | median)
  rm -rf "$WORK/scale-png"
  read -r pw pc pm <<<"$(measure "$QUIRE" render "$book" --out "$WORK/scale-png" "${QUIRE_GEOMETRY[@]}" --quiet)"
  rm -rf "$WORK/scale-png"
  printf "   %-24s %7d | %6.2f s %7.2f s %6.2f ms %5d MB | %7.2f s %7.2f s %6.2f ms %5d MB\n" "$(basename "$book" .epub | cut -c1-24)" "$pages" \
    "$sw" "$sc" "$(echo "$sc * 1000 / $pages" | bc -l)" "$((sm / 1024))" "$pw" "$pc" "$(echo "$pc * 1000 / $pages" | bc -l)" "$((pm / 1024))"
done

echo "== typography: inter-word space / natural space width on justified lines of Moby-Dick"
"$QUIRE" render "$MD" --out "$WORK/q-stats" "${QUIRE_GEOMETRY[@]}" --align justify --map-only --quiet --stats "$WORK/stats.json"
quire_sd=$(python3 -c "import json; s=json.load(open('$WORK/stats.json'))['justifiedSpaces']; print(s['count'], s['mean'], s['standardDeviation'])")
echo 'p, div, blockquote, li { text-align: justify; }' >"$WORK/justify.css"
mutool draw -U "$WORK/justify.css" -F stext -o "$WORK/md.stext" -W 600 -H 800 -S 12 "$MD" 2>/dev/null
mupdf_sd=$(python3 scripts/spacing_metric.py "$WORK/md.stext")
read -r qc qmean qsd <<<"$quire_sd"
read -r mc mmean msd <<<"$mupdf_sd"
printf "   quire: %d spaces, mean %.3f, std dev %.3f | mupdf: %d spaces, mean %.3f, std dev %.3f | ratio %.2f\n" \
  "$qc" "$qmean" "$qsd" "$mc" "$mmean" "$msd" "$(echo "$qsd / $msd" | bc -l)"

echo "== settling: map-only layout with the full-extent guard vs the same layout given every image size up front"
for book in "$CORPUS/idpf-epub3-samples/GhV-oeb-page.epub" "$CORPUS/misc-epubs/epubjs-alice.epub" \
  "$CORPUS/standardebooks/lewis-carroll_alices-adventures-in-wonderland.epub" \
  "$CORPUS/tdpf-epub3guide-zh-hant/04_Image_Table_And_Footnote.epub" "$CORPUS/jagat-epub-css-test/02_EPUB_exprssn_test_03ver.epub"; do
  "$QUIRE" render "$book" --out "$WORK/s" --map-only --quiet --stats "$WORK/settle.json"
  python3 -c "import json; s=json.load(open('$WORK/settle.json')); json.dump(s['imageSizes'], open('$WORK/sizes.json','w')); print(s['imagesMeasured'], s['settlePasses'])" >"$WORK/counts"
  read -r measured passes <"$WORK/counts"
  : >"$WORK/g"; : >"$WORK/k"
  for _ in $(seq "$RUNS"); do
    measure "$QUIRE" render "$book" --out "$WORK/s" --map-only --quiet >>"$WORK/g"
    measure "$QUIRE" render "$book" --out "$WORK/s" --map-only --quiet --image-sizes "$WORK/sizes.json" >>"$WORK/k"
  done
  gt=$(cut -d' ' -f1 "$WORK/g" | median); kt=$(cut -d' ' -f1 "$WORK/k" | median)
  printf "   %-46s %4d images measured, %3d passes: guarded %.3f s, sizes known %.3f s, ratio %.2f\n" \
    "$(basename "$book" | cut -c1-46)" "$measured" "$passes" "$gt" "$kt" "$(echo "$gt / $kt" | bc -l)"
done
echo "== quire locate: map load time and page lookups per second (War and Peace, kobo-clara)"
"$QUIRE" render "$WP" --out "$WORK/wp-map" --profile kobo-clara --map-only --quiet
"$QUIRE" locate "$WORK/wp-map/positions.json" --bench-lookups 5000000 | sed 's/^/   /'

echo "== quire view, live War and Peace in a 160x50 pseudo-terminal (symbols; no anchor: no other viewer paginates EPUB live)"
python3 scripts/bench-viewer.py "$QUIRE" "$WP" --cols 160 --rows 50 --runs "$RUNS" --turns 20

bash scripts/bench-pdf.sh

bash scripts/bench-batch.sh
