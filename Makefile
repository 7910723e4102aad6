# kc: build, test, install. Every target installs the system packages it needs.
PREFIX ?= /usr/local
SWIFT ?= swift
APT_PACKAGES := libsodium-dev libsqlite3-dev pkg-config
# Tests build into their own folder so a release build never invalidates them.
RELEASE_FLAGS := -c release --static-swift-stdlib

.PHONY: all deps build release test install uninstall clean

all: build

## deps: install libsodium-dev, libsqlite3-dev and pkg-config with apt-get when missing
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "kc: installing$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

## build: a debug build
build: deps
	$(SWIFT) build

## release: an optimised kc with the Swift runtime linked in
release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

## test: build and run every test
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-xctest

## install: build a release kc, install it under $(PREFIX)/bin and run it
install: release
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 0755 "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/kc" "$(DESTDIR)$(PREFIX)/bin/kc"
	"$(DESTDIR)$(PREFIX)/bin/kc" --version

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/kc"

clean:
	rm -rf .build
