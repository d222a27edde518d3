# Quire: the two commands a fresh Debian 12 machine needs are `make demo` and `make test`.
# Both run `make setup` first, which installs any missing system packages.

SWIFT ?= swift
BUILD_DIR := build
SAMPLE := $(BUILD_DIR)/samples/quire-sample.epub
SCRIPTS := $(BUILD_DIR)/samples/quire-scripts.epub
SAMPLE_PDF := $(BUILD_DIR)/samples/quire-sample.pdf
RELEASE_BIN := .build/release/quire
# The release binary carries the Swift runtime inside it: a process starts in about
# 15 ms instead of 25 and takes 6 MB less memory (a short book's layout is a few hundred ms).
# Runtime exclusivity checks are off in the release binary (they cost a few percent of layout
# CPU: War and Peace map-only, --jobs 1, median of 13 alternating runs 1.87 s against 2.02 s).
# The flag is given here, not in Package.swift: a manifest with unsafe flags cannot be a versioned
# dependency of another package. Debug builds and the test suite keep the checks.
# The release binary is linked by lld (shipped with the Swift toolchain) with the functions that
# rendering and layout run placed together, in scripts/code-order.txt's order (written by
# scripts/code-order.sh; each function in its own section: -function-sections), so they share a
# few megabytes of pages instead of being spread over 18 MB; with packed relative relocations
# (DT_RELR: 29,600 of them were 0.7 MB to read at every start); and exporting no symbols (nothing
# loads the executable's own, and their tables were read at every library's symbol lookup).
# nostart-stop-gc: the delay-load stub tables are found through __start_/__stop_ symbols, which
# must keep their sections (GNU ld's rule; lld's default drops them and leaves the tables empty).
# Against gold's link of the same objects, Moby-Dick at 96 dpi (medians of 3 alternating runs):
# resident code 7.7 -> 5.0-5.5 MB, render peak RSS 62.9 -> 61.7 MB, map-only (--jobs 1) 30.9 -> 28.6.
RELEASE_FLAGS := -c release --static-swift-stdlib -Xswiftc -enforce-exclusivity=unchecked \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
	-Xlinker --symbol-ordering-file=$(CURDIR)/scripts/code-order.txt -Xlinker --no-warn-symbol-ordering \
	-Xlinker --no-export-dynamic -Xlinker -z -Xlinker nostart-stop-gc

.PHONY: all setup build release sample demo test test-sanitize bench fuzz w3c-report format clean install install-files uninstall

# `make install` puts the release binary, the bundled fonts, the man page and the shell completions
# under $(DESTDIR)$(PREFIX). The binary finds its fonts at <its directory>/../share/quire/fonts.
PREFIX ?= /usr/local
DESTDIR ?=
FONT_FILES := $(sort $(wildcard Fonts/*))

all: build

setup:
	@bash scripts/setup.sh

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build $(RELEASE_FLAGS)

sample: setup
	@sh Samples/build.sh $(BUILD_DIR)/samples

# The main job on the bundled sample book: what is inside it, then its pages and position map.
demo: release sample
	@echo "== quire info $(SAMPLE)"
	@$(RELEASE_BIN) info $(SAMPLE)
	@echo "== quire render $(SAMPLE) --out $(BUILD_DIR)/demo --profile kobo-clara"
	@rm -rf $(BUILD_DIR)/demo
	@$(RELEASE_BIN) render $(SAMPLE) --out $(BUILD_DIR)/demo --profile kobo-clara --quiet
	@echo "pages: $(BUILD_DIR)/demo/pages/ ($$(ls $(BUILD_DIR)/demo/pages | wc -l) PNG files)"
	@echo "map:   $(BUILD_DIR)/demo/positions.json"
	@$(RELEASE_BIN) locate $(BUILD_DIR)/demo/positions.json --toc "Chapter Two: Weather and Its Moods" | head -1 | sed 's/^/"Chapter Two" opens on page /'
	@echo "== quire render $(SCRIPTS) --out $(BUILD_DIR)/demo-scripts --profile phone (pictures, Japanese, Hebrew, Arabic)"
	@rm -rf $(BUILD_DIR)/demo-scripts
	@$(RELEASE_BIN) render $(SCRIPTS) --out $(BUILD_DIR)/demo-scripts --profile phone --quiet
	@echo "pages: $(BUILD_DIR)/demo-scripts/pages/ ($$(ls $(BUILD_DIR)/demo-scripts/pages | wc -l) PNG files)"
	@echo "== quire render $(SAMPLE_PDF) --out $(BUILD_DIR)/demo-pdf --profile kobo-clara --split ltr"
	@rm -rf $(BUILD_DIR)/demo-pdf
	@$(RELEASE_BIN) render $(SAMPLE_PDF) --out $(BUILD_DIR)/demo-pdf --profile kobo-clara --split ltr --quiet
	@echo "pages: $(BUILD_DIR)/demo-pdf/pages/ ($$(ls $(BUILD_DIR)/demo-pdf/pages | wc -l) PNG files from 4 PDF pages; the spread is split)"

# The release binary is built too: the tests that run the CLI use it (QUIRE_BINARY), the
# corpus-wide ones being much faster with it. Before the test suite, the library example
# (docs/library.md) is built as a separate package and run, and the install is tried into a
# temporary prefix.
test: setup
	$(SWIFT) build $(RELEASE_FLAGS)
	$(SWIFT) build --build-tests
	QUIRE_BINARY=$(abspath $(RELEASE_BIN)) bash scripts/check-example.sh
	bash scripts/check-install.sh
	QUIRE_BINARY=$(abspath $(RELEASE_BIN)) $(SWIFT) test --skip-build

# The suite under AddressSanitizer, then ThreadSanitizer (scripts/test-sanitize.sh; not part of
# `make test`: it takes longer than CI allows). `make test-sanitize SANITIZER=asan` runs one.
SANITIZER ?= both
test-sanitize: setup
	bash scripts/test-sanitize.sh $(SANITIZER)

bench: release
	@bash scripts/bench.sh

# libFuzzer targets (Fuzz/): each runs SECONDS (default 60) from its seed corpus, PARALLEL at a time
# (default 1); fails if any found a crash, leak, timeout or out-of-memory input (Fuzz/Artifacts/).
# TARGETS picks some.
SECONDS ?= 60
TARGETS ?=
PARALLEL ?= 1
fuzz: setup
	@PARALLEL=$(PARALLEL) bash scripts/fuzz.sh $(SECONDS) $(TARGETS)

# The W3C reading-system suite: verdicts, contact sheets and the 18 systems' results (build/w3c-report/).
w3c-report: release
	@bash scripts/w3c-report.sh build/w3c-report

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift

clean:
	rm -rf .build .build-fuzz $(BUILD_DIR)

# The files are installed by a second make once the release build is done (safe under make -j).
install: release
	@$(MAKE) --no-print-directory install-files

# No Swift build: installs $(RELEASE_BIN) as it is (`make install-files RELEASE_BIN=path` for a test).
install-files:
	@test -f $(RELEASE_BIN) || { echo "install: $(RELEASE_BIN) is missing (run make release first)" >&2; exit 1; }
	install -Dm755 $(RELEASE_BIN) $(DESTDIR)$(PREFIX)/bin/quire
	install -d $(DESTDIR)$(PREFIX)/share/quire/fonts
	install -m644 $(FONT_FILES) $(DESTDIR)$(PREFIX)/share/quire/fonts/
	install -Dm644 docs/quire.1 $(DESTDIR)$(PREFIX)/share/man/man1/quire.1
	install -Dm644 scripts/completions/quire.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/quire
	install -Dm644 scripts/completions/_quire $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_quire

# Removes what install-files wrote. Of the directories only share/quire, Quire's own, goes.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/quire
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/share/quire/fonts/,$(notdir $(FONT_FILES)))
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/quire.1
	rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/quire
	rm -f $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_quire
	rm -rf $(DESTDIR)$(PREFIX)/share/quire
