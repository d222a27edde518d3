#!/usr/bin/env bash
# `make install` into a temporary prefix, then the installed quire run from / (it must find its
# fonts from its own prefix, with no QUIRE_FONTS), its man page rendered, and `make uninstall`
# leaving none of what it installed.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
make --no-print-directory install-files PREFIX="$prefix" > /dev/null
book=$(pwd)/build/samples/quire-sample.epub
[ -f "$book" ] || sh Samples/build.sh build/samples > /dev/null
(cd / && env -u QUIRE_FONTS "$prefix/bin/quire" render "$book" --out "$work/out" --profile phone --pages 1-2 --quiet)
test -s "$work/out/pages/0001.png" && test -s "$work/out/positions.json"
MANWIDTH=80 man -l "$prefix/share/man/man1/quire.1" 2> "$work/man.err" | grep -q "EXIT STATUS"
! grep -q . "$work/man.err" || { cat "$work/man.err" >&2; exit 1; }
bash -n "$prefix/share/bash-completion/completions/quire"
make --no-print-directory uninstall PREFIX="$prefix" > /dev/null
left=$(find "$prefix" -type f | wc -l)
[ "$left" -eq 0 ] || { echo "check-install: uninstall left $left files" >&2; find "$prefix" -type f >&2; exit 1; }
echo "check-install: installed quire renders from / with its own fonts; man page renders; uninstall removes it all"
