# rChat: two commands on a fresh machine — `make demo` and `make test`.
PACKAGES := libsodium-dev libncurses-dev libsqlite3-dev pkg-config tmux
SWIFT    ?= swift

.PHONY: deps build test bench-relay bench-engine bench-check clean

# Installs the system packages that are missing: as root, through sudo, or else says how.
deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update && apt-get install -y $$missing; \
	  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo apt-get update && sudo apt-get install -y $$missing; \
	  else echo "rchat: missing system packages; run: sudo apt-get update && sudo apt-get install -y$$missing" >&2; exit 2; fi; \
	fi

build: deps
	$(SWIFT) build

test: build
	$(SWIFT) test --disable-swift-testing

# The relay beside mosquitto 2.0 QoS 1 (a benchmark, not a test; see README "Relay benchmark").
bench-relay: deps
	$(SWIFT) build -c release
	.build/release/rchat-bench relay

# The engine: receive throughput and send→Sent/Delivered latency through a real relay
# (a benchmark, not a test; see README "Engine benchmark").
bench-engine: deps
	$(SWIFT) build -c release
	.build/release/rchat-bench engine

# The background check: a whole `rchat check` process collecting 1,000 held messages.
bench-check: deps
	$(SWIFT) build -c release
	.build/release/rchat-bench check

clean:
	rm -rf .build
