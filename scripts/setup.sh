#!/usr/bin/env bash
# Installs the Debian 12 packages Quire needs, and only the missing ones. Idempotent.
# As root it runs apt-get itself; otherwise through `sudo -n`; otherwise it prints the command and stops.
set -euo pipefail

# C libraries the package links (headers + pkg-config files).
BUILD_PACKAGES=(
  pkg-config libzip-dev libdeflate-dev libxml2-dev libfreetype-dev libharfbuzz-dev libicu-dev libfontconfig-dev
  libfribidi-dev libglib2.0-dev libcairo2-dev libpoppler-glib-dev libjpeg62-turbo-dev libpng-dev librsvg2-dev
  libwebp-dev libavif-dev libjxl-dev libhyphen-dev libchafa-dev
)
# Fonts and hyphenation dictionaries used at run time.
RUNTIME_PACKAGES=(
  fontconfig fonts-noto-core fonts-noto-cjk hyphen-en-us hyphen-en-gb hyphen-fr hyphen-de hyphen-es hyphen-it
)
# Tools the tests, the sample build and the benchmarks call.
TOOL_PACKAGES=(
  zip unzip libxml2-utils poppler-utils mupdf-tools tmux qpdf hyperfine time bc python3 binutils man-db gcc
  xvfb xterm imagemagick fonts-dejavu-core kitty libgl1-mesa-dri libglx-mesa0 slurm-wlm munge parallel chromium
)

packages=("${BUILD_PACKAGES[@]}" "${RUNTIME_PACKAGES[@]}" "${TOOL_PACKAGES[@]}")
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: error: the Swift 6 toolchain is not on PATH (install it from swift.org; it is not a Debian package)" >&2
  exit 1
fi
# The release binary is linked by lld, which swift.org's toolchains carry beside swiftc.
if [ ! -x "$(dirname "$(readlink -f "$(command -v swiftc)")")/ld.lld" ] && ! command -v ld.lld >/dev/null 2>&1; then
  echo "setup: error: ld.lld is not beside swiftc (a swift.org toolchain has it in usr/bin)" >&2
  exit 1
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} system packages are present"
  exit 0
fi

command_line="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
echo "setup: installing ${#missing[@]} missing packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  runner=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  runner=(sudo -n)
else
  echo "setup: error: not root and no password-less sudo; run this as root, then re-run make:" >&2
  echo "  $command_line" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${runner[@]}" apt-get update -qq
"${runner[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
