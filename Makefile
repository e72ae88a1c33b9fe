# rChat: two commands on a fresh machine — `make demo` and `make test`.
# (fontconfig and the fonts: FontCoverageTests reads their charsets, so that every glyph the
# view draws is in the monospace fonts Debian installs for terminals; xvfb, xterm,
# imagemagick and x11-utils: XtermScreenshotTests looks at the view in a real xterm.)
PACKAGES := libsodium-dev libncurses-dev libsqlite3-dev pkg-config tmux \
            libjpeg62-turbo-dev libpng-dev libchafa-dev libglib2.0-dev libopus-dev libopusenc-dev libopusfile-dev \
            nats-server libnats-dev
# What tests need beyond that: the fonts whose charsets the view's glyphs must be in
# (FontCoverageTests), a real xterm under Xvfb read back with ImageMagick's import (the
# glyph and sixel screenshots: XtermScreenshotTests, TUIEndToEndTests+Xterm.swift,
# Tests/Scripts/), zsh to load the completion script, and dbus-daemon for the private
# session bus the desktop alert tests run a notification service on (Tests/DesktopBusFixture).
# (The failing-disk tests build Tests/FaultShim with the Swift toolchain's clang and mount a
# tmpfs with util-linux's mount: nothing more to install.)
TEST_PACKAGES := fontconfig fonts-dejavu-core fonts-liberation2 fonts-noto-mono xfonts-base \
                 xvfb xterm imagemagick x11-utils zsh dbus-daemon
# What the relay benchmark's reference needs: the broker, and the library its client
# (Benchmarks/mq_bench.c, built into .build/mq-bench/) links.
BENCH_RELAY_PACKAGES := mosquitto libmosquitto-dev
# The balancer of `make cluster-demo` (its NATS servers, and the libnats that the relay and
# the cluster benchmark's reference client, Benchmarks/js_bench.c, link, are in PACKAGES).
CLUSTER_DEMO_PACKAGES := haproxy
SWIFT    ?= swift

.PHONY: deps build release install install-files uninstall demo test fuzz fuzz-build fuzz-corpus simulate bench-relay bench-cluster cluster-demo bench-engine bench-check bench-requests bench-tui bench-files bench-group clean

# Installs the system packages among $(1) that are missing: as root, through sudo, or else
# says how.
define install-missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update && apt-get install -y $$missing; \
	  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo apt-get update && sudo apt-get install -y $$missing; \
	  else echo "rchat: missing system packages; run: sudo apt-get update && sudo apt-get install -y$$missing" >&2; exit 2; fi; \
	fi
endef

deps:
	$(call install-missing,$(PACKAGES))
	$(call install-missing,$(TEST_PACKAGES))

build: deps
	$(SWIFT) build

# A relay, a demo contact (Sam) and the full-screen view, all in one process, in a
# temporary folder removed on exit (see README "Quick start").
demo: build
	.build/debug/rchat demo

# Deterministic hashing: a simulation seed that fails in the suite replays the same way
# with `make simulate SEED=N` (see README "Deterministic simulation").
# The whole suite, its two halves at once (Tests/Scripts/run-tests.sh says how).
test: build
	Tests/Scripts/run-tests.sh $(SWIFT)

# The fuzz targets: rchat-fuzz (Sources/rchat-fuzz, declared only with RCHAT_FUZZ=1) built with
# libFuzzer and AddressSanitizer into .build/fuzz, then each target run for SECONDS seconds on
# its seeds (Fuzz/Corpus/TARGET), printing runs and executions per second per target and
# ending "N targets, M runs, 0 crashes"; exit 1 on a crash, with its input's path (see README
# "Fuzzing"). ld.gold's "Cannot export local symbol" warnings are harmless and filtered out.
SECONDS ?= 60
FUZZER  := .build/fuzz/debug/rchat-fuzz
fuzz-build: deps
	@mkdir -p .build/fuzz
	@{ RCHAT_FUZZ=1 $(SWIFT) build --scratch-path .build/fuzz --product rchat-fuzz \
	    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING 2>&1; echo $$? > .build/fuzz/status; } \
	  | grep -v -e "Cannot export local symbol" -e "^$$"; exit $$(cat .build/fuzz/status)

fuzz: fuzz-build
	Fuzz/run.sh $(SECONDS) $(FUZZER)

# Writes the seed corpora again from the real encoders (Fuzz/make-corpus.sh).
fuzz-corpus: fuzz-build
	Fuzz/make-corpus.sh $(FUZZER)

# The deterministic simulation (release build): SEEDS seeds from FIRST (default 1,000 from 1)
# on two threads, ending "N seeds, 0 failures …" with steps/s and seeds/min; SEED=N replays one
# seed and prints the end of its trace; HOURS=N runs seeds until N hours have passed.
SEEDS ?= 1000
FIRST ?= 1
simulate: deps
	$(SWIFT) build -c release --product rchat-simulate
	@if [ -n "$(SEED)" ]; then .build/release/rchat-simulate --seed $(SEED) $(if $(GROUPS),--groups)$(if $(ROTATIONS), --rotations); \
	elif [ -n "$(HOURS)" ]; then .build/release/rchat-simulate --hours $(HOURS) --first $(FIRST) --jobs 2 $(if $(GROUPS),--groups)$(if $(ROTATIONS), --rotations); \
	else .build/release/rchat-simulate --seeds $(SEEDS) --first $(FIRST) --jobs 2 $(if $(GROUPS),--groups)$(if $(ROTATIONS), --rotations); fi

# The relay beside mosquitto 2.0 QoS 1 (a benchmark, not a test; see README "Relay benchmark").
bench-relay: deps
	$(call install-missing,$(BENCH_RELAY_PACKAGES))
	$(SWIFT) build -c release
	.build/release/rchat-bench relay

# The relay cluster (3 nats-servers, 2 relay nodes) beside the single-process relay with
# --persist and beside JetStream itself (a benchmark, not a test; see README "Cluster benchmark").
bench-cluster: deps
	$(SWIFT) build -c release
	.build/release/rchat-bench cluster

# A relay cluster on loopback: 3 nats-servers, 2 relay nodes, haproxy in front; prints the
# ADDRESS, Ctrl-C stops it all (see README "Running a relay cluster").
cluster-demo: deps
	$(call install-missing,$(CLUSTER_DEMO_PACKAGES))
	$(SWIFT) build -c release --product rchat-relay
	Deploy/cluster-demo.sh .build/release/rchat-relay

# The engine: receive throughput and send→Sent/Delivered latency through a real relay
# (a benchmark, not a test; see README "Engine benchmark").
bench-engine: deps
	$(SWIFT) build -c release
	.build/release/rchat-bench engine

# Groups: one account sending to groups of 20 and 100 in-process engines through a real
# relay, sender CPU per message per member beside one-to-one (a benchmark, not a test).
bench-group: deps
	$(SWIFT) build -c release
	.build/release/rchat-bench group

# The background check: a whole `rchat check` process collecting 1,000 held messages.
bench-check: deps
	$(SWIFT) build -c release
	.build/release/rchat-bench check

# Message requests: what taking in one costs with none and with 10,000 already stored.
bench-requests: deps
	$(SWIFT) build -c release
	.build/release/rchat-bench requests

# A file sent through a real relay, beside a plain TCP copy of the same bytes (a
# benchmark, not a test; see README "File benchmark").
bench-files: deps
	$(SWIFT) build -c release
	.build/release/rchat-bench files

# The full-screen view: first frame of a 100,000-message conversation and memory over
# 1,000,000 messages (a benchmark, not a test; see README "View benchmark").
bench-tui: deps
	$(SWIFT) build -c release
	.build/release/rchat-bench tui

# `make install [PREFIX=/usr/local] [DESTDIR=]`: the release binaries, the man pages, the
# relay's systemd units (pointed at $(BINDIR)), sample relay configurations, and bash and
# zsh completions made by the built `rchat completion`; `make uninstall` removes exactly
# those files. `install-files` installs what BUILT holds without building.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
UNITDIR    ?= $(PREFIX)/lib/systemd/system
DOCDIR     ?= $(PREFIX)/share/doc/rchat
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
BUILT      ?= .build/release
INSTALLED  := $(BINDIR)/rchat $(BINDIR)/rchat-relay $(MANDIR)/man1/rchat.1 $(MANDIR)/man8/rchat-relay.8 \
              $(UNITDIR)/rchat-relay.service $(UNITDIR)/rchat-relay@.service \
              $(DOCDIR)/rchat-relay.conf $(DOCDIR)/rchat-relay-node.conf \
              $(BASHCOMPDIR)/rchat $(BASHCOMPDIR)/rchat-relay $(ZSHCOMPDIR)/_rchat

release: deps
	$(SWIFT) build -c release --product rchat
	$(SWIFT) build -c release --product rchat-relay

install: release
	$(MAKE) install-files BUILT=.build/release

install-files:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR) \
	  $(DESTDIR)$(DOCDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0755 $(BUILT)/rchat $(BUILT)/rchat-relay $(DESTDIR)$(BINDIR)/
	install -m 0644 Resources/rchat.1 $(DESTDIR)$(MANDIR)/man1/rchat.1
	install -m 0644 Resources/rchat-relay.8 $(DESTDIR)$(MANDIR)/man8/rchat-relay.8
	sed 's|/usr/local/bin|$(BINDIR)|g' Resources/rchat-relay.service > $(DESTDIR)$(UNITDIR)/rchat-relay.service
	sed 's|/usr/local/bin|$(BINDIR)|g' Deploy/systemd/rchat-relay@.service > $(DESTDIR)$(UNITDIR)/rchat-relay@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/rchat-relay.service $(DESTDIR)$(UNITDIR)/rchat-relay@.service
	install -m 0644 Resources/rchat-relay.conf $(DESTDIR)$(DOCDIR)/rchat-relay.conf
	install -m 0644 Deploy/rchat-relay-node.conf $(DESTDIR)$(DOCDIR)/rchat-relay-node.conf
	$(BUILT)/rchat completion bash > $(DESTDIR)$(BASHCOMPDIR)/rchat
	install -m 0644 $(DESTDIR)$(BASHCOMPDIR)/rchat $(DESTDIR)$(BASHCOMPDIR)/rchat-relay
	$(BUILT)/rchat completion zsh > $(DESTDIR)$(ZSHCOMPDIR)/_rchat
	chmod 0644 $(DESTDIR)$(BASHCOMPDIR)/rchat $(DESTDIR)$(ZSHCOMPDIR)/_rchat

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null

clean:
	rm -rf .build
