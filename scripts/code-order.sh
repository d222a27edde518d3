#!/bin/bash
# Writes scripts/code-order.txt, the order in which the release link places functions (lld's
# --symbol-ordering-file, see RELEASE_FLAGS in the Makefile): the functions a render and a
# map-only layout run, busiest first, so they share a few megabytes of pages. Without it they are
# spread over the binary's 8 MB of code, and since the kernel maps a file's pages 64 KB at a time
# around each one touched, rendering Moby-Dick kept 7.7 MB of code resident (5-5.5 MB with it).
#
# Usage: scripts/code-order.sh [BINARY]   (default .build/release/quire; needs valgrind)
# Run it again after large changes: a function missing from the list still works, it is only
# placed after the listed ones. The list is a build input, not a result: maps and pages do not
# depend on it.
set -euo pipefail
shopt -s nullglob
BINARY=$(readlink -f "${1:-$(dirname "$0")/../.build/release/quire}")
cd "$(dirname "$0")/.."
OUT=scripts/code-order.txt
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# valgrind cannot read the debug info of a Swift 6 binary: profile a copy without it.
cp "$BINARY" "$WORK/quire"
strip --strip-debug "$WORK/quire"
export QUIRE_FONTS=$PWD/Fonts
GEOMETRY=(--size 800x1067 --dpi 96 --font-size 12 --margin 36)
SAMPLE=build/samples/quire-sample.epub
[ -f "$SAMPLE" ] || sh Samples/build.sh build/samples >/dev/null
runs=("render $SAMPLE --profile kobo-clara" "render build/samples/quire-scripts.epub --profile phone")
CORPUS=../shared/corpus/standardebooks
if [ -d "$CORPUS" ]; then
    # Not the books `make bench` times (Moby-Dick, War and Peace): the order is trained on others.
    runs+=("render $CORPUS/jane-austen_pride-and-prejudice.epub ${GEOMETRY[*]}")
    runs+=("render $CORPUS/walt-whitman_leaves-of-grass.epub --profile kobo-clara")
    runs+=("render $CORPUS/jane-austen_pride-and-prejudice.epub --profile kobo-clara --map-only")
else
    echo "code-order: $CORPUS is missing; profiling the sample books only" >&2
fi
index=0
for run in "${runs[@]}"; do
    # shellcheck disable=SC2086 # each run is a word list
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/cg.$index" \
        "$WORK/quire" $run --out "$WORK/out.$index" --quiet >/dev/null 2>"$WORK/log.$index" ||
        { cat "$WORK/log.$index" >&2; exit 1; }
    index=$((index + 1))
done

# Self cost per function of the binary, summed over the runs; only symbols the binary defines.
nm --defined-only "$WORK/quire" | awk '$2 ~ /^[tTwW]$/ {print $3}' >"$WORK/defined"
# The toolchain's static libraries keep much of their code in one .text section per object (the
# standard library's is 1.6 MB), and so do the C targets: the linker moves such a block whole, so
# their functions go last, and a block is not pulled in between the functions placed one by one.
STATIC_LIBS=$(dirname "$(readlink -f "$(command -v swiftc)")")/../lib/swift_static/linux
OBJECTS=$(dirname "$(readlink -f "$BINARY")")
for file in "$STATIC_LIBS"/*.a "$OBJECTS"/*.build/*.o; do
    # A symbol line: address, flags, section, size, [visibility], name.
    objdump -t "$file" | awk '{ for (i = 2; i < NF; i++) if ($i == ".text") { print $NF; break } }' ||
        echo "code-order: cannot read the symbols of $file" >&2
done | sort -u >"$WORK/in-blocks"
python3 - "$WORK" "$OUT.tmp" <<'EOF'
import re, sys, glob, collections
work, out = sys.argv[1], sys.argv[2]
defined = set(open(f"{work}/defined").read().split())
cost = collections.Counter()
for path in glob.glob(f"{work}/cg.*"):
    objects, names = {}, {}
    obj = fn = None
    calls_pending = False
    for line in open(path):
        line = line.rstrip("\n")
        match = re.match(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line)
        if match:
            kind, number, name = match.groups()
            table = objects if kind.endswith("ob") else names
            if name:
                table[number] = name
            if kind == "ob":
                obj = objects[number]
            elif kind == "fn":
                fn = names[number].split("'")[0]
            continue
        if line.startswith("calls="):
            calls_pending = True  # the next cost line is inclusive cost of a call, not self cost
            continue
        if line and (line[0].isdigit() or line[0] in "+-*"):
            if calls_pending:
                calls_pending = False
                continue
            parts = line.split()
            if obj and obj.endswith("/quire") and fn in defined and len(parts) > 1:
                cost[fn] += int(parts[1])
in_blocks = set(open(f"{work}/in-blocks").read().split())
ordered = [name for name, _ in sorted(cost.items(), key=lambda item: (item[0] in in_blocks, -item[1], item[0]))]
placed = [name for name in ordered if name not in in_blocks]
blocks = [name for name in ordered if name in in_blocks]
with open(out, "w") as handle:
    # The marker names no symbol (lld passes over it): ReleaseLinkTests checks the lines above it.
    handle.write("\n".join(placed + ["# functions in blocks"] + blocks) + "\n")
print(f"code-order: {len(placed)} functions placed one by one, {len(blocks)} in blocks")
EOF
mv "$OUT.tmp" "$OUT"
