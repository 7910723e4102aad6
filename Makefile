# kc: build, test, install. Every target installs the system packages it needs.
PREFIX ?= /usr/local
SWIFT ?= swift
# libpq-dev: the PostgreSQL client of team keychains, linked into kc-team only (never kc).
# libtss2-dev: tpm2-tss (ESAPI), linked into kc-tpm only (never kc); kc-tpm is built as the
# provider is (PROVIDER_FLAGS): tpm2-tss is shared, and loads its TCTI with dlopen.
APT_PACKAGES := libsodium-dev libsqlite3-dev pkg-config libsystemd-dev libssl-dev libpq-dev libtss2-dev
# The tests also drive sqlite3 (as an attacker editing the file), python3 (a pty), and
# gpg and pass (a real pass store to import), git (the credential helper over HTTP),
# oathtool (one-time codes to compare kc totp with).
TEST_PACKAGES := sqlite3 python3 gpg pass git oathtool
# The Secret Service tests run real clients on a private bus: dbus-daemon, secret-tool,
# Python's secretstorage and keyring, Docker's helper, and git's libsecret helper, built
# from the source Debian's git ships (gcc, libsecret-1-dev); keyring's own backend tests run
# with pytest, from its sdist that pip downloads from PyPI at test time, and SecretStorage's
# own suite with its run_tests.py, from its sdist (3.3.3, pinned by sha256) that pip downloads
# the same way (PyPI must be reachable; the test fails saying so). Debian's diceware package
# has the EFF word list that kc generate --words is checked against.
# The team tests start a throwaway PostgreSQL cluster with Debian's server (postgresql: initdb,
# pg_ctl, psql under /usr/lib/postgresql/N/bin; its own service is not used), and put PgBouncer
# (pgbouncer, in transaction pooling mode, started by the tests on a free port) in front of it.
# The clipboard tests copy on a private X server (Xvfb) with xclip and xsel, on a headless
# Wayland compositor (sway, which has the data-control protocol wl-copy uses), and in tmux.
# Team keychains' vectors are recomputed with Python's hashlib and python3-cryptography
# (X25519, Ed25519, ChaCha20), independently of libsodium.
TEST_DEBS := dbus-daemon libsecret-tools python3-secretstorage python3-keyring python3-pytest python3-pip python3-cryptography \
	golang-docker-credential-helpers diceware \
	gcc libc6-dev make libsecret-1-dev \
	xvfb xclip xsel tmux sway wl-clipboard \
	postgresql pgbouncer
# kc-tpm's TPM (TPMTests): swtpm on a socket with a throwaway state folder; tpm2-tools only in
# the tests, to inspect it (the lockout counter, the SRK) and change its state (extend a PCR,
# clear it), never by kc-tpm itself.
TEST_DEBS += swtpm swtpm-tools tpm2-tools
# AWS's credential_process through Debian's awscli (v2) and boto3 (AWSCredentialsTests).
TEST_DEBS += awscli python3-boto3
# strace kills kc in the middle of a rewrite (AWSCredentialsTests.aKilledRewriteLeavesNoCopyBehind).
TEST_DEBS += strace
# The SSH agent's tests log in to Debian's sshd, started by the tests on 127.0.0.1 (its own
# service is not needed: where a service manager started it on installing, stop it).
TEST_DEBS += openssh-client openssh-server
# A fully static kc: start-up is most of a `kc find` through the agent (docs/performance.md).
RELEASE_FLAGS := -c release --static-swift-stdlib -Xswiftc -static-executable
# The provider links libsystemd, which Debian ships only as a shared library: its own build folder.
# kc-team (team keychains) is built the same way: libpq too is shared-only in Debian; so is
# kc-ssh (the SSH agent), which links libcrypto.
PROVIDER_FLAGS := -c release --static-swift-stdlib --scratch-path .build/provider

.PHONY: all deps build release test test-release test-deps install fuzz stress uninstall clean man bench format format-check

all: build

# $(call apt_install,CHECK,PACKAGES): apt-get install the PACKAGES for which CHECK fails.
apt_install = missing=""; \
	for p in $(2); do $(1) $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "kc: installing$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

## deps: install the build's libraries (libsodium, SQLite, libsystemd, libcrypto, libpq, tpm2-tss) and pkg-config with apt-get when missing
deps:
	@$(call apt_install,dpkg -s,$(APT_PACKAGES))

## build: a debug build
build: deps
	$(SWIFT) build

## release: an optimised, fully static kc (Swift runtime, libsodium and SQLite linked in), the
## Secret Service provider, kc-team, kc-tpm and kc-ssh (static Swift runtime; libsystemd, libcrypto, libpq and tpm2-tss are shared)
release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product kc
	$(SWIFT) build $(PROVIDER_FLAGS) --product kc-tpm
	$(SWIFT) build $(PROVIDER_FLAGS) --product kc-secret-service
	$(SWIFT) build $(PROVIDER_FLAGS) --product kc-team
	$(SWIFT) build $(PROVIDER_FLAGS) --product kc-ssh

## test-deps: what the tests run besides kc
test-deps: deps
	@$(call apt_install,command -v,$(TEST_PACKAGES))
	@$(call apt_install,dpkg -s,$(TEST_DEBS))
	@python3 -c 'import ensurepip' >/dev/null 2>&1 || { $(call apt_install,dpkg -s,python3-venv); }
	@command -v kubectl >/dev/null 2>&1 || { $(call apt_install,dpkg -s,kubernetes-client); }   # kubectl (kube-credential tests)
	@$(call apt_install,command -v,openssl)   # throwaway certificates (kube-credential tests)

## test: build and run every test
test: test-deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-xctest

## format: format the Swift sources in place with swift-format, by the rules in .swift-format
# SWIFT_FORMAT_FILES: every Swift file of the package and the fuzz harness but EFFWordList.swift,
# which is data (the EFF's 7,776 words in a string literal, as published: re-indenting it would
# rewrite every line and make the copy harder to compare with the original). Examples/ is a
# separate package written as an app's would be (its shared files are in Tests/SecurityTests/AppleStyle).
SWIFT_FORMAT_FILES = $(shell find Package.swift Sources Tests fuzz -name '*.swift' ! -path Sources/kc/Generation/EFFWordList.swift | sort)
format:
	@$(SWIFT) format format --configuration .swift-format --in-place --parallel $(SWIFT_FORMAT_FILES)

## format-check: fail, naming each place, where a Swift source is not as `make format` writes it (CI runs it before the tests)
format-check:
	@$(SWIFT) format lint --configuration .swift-format --strict --parallel $(SWIFT_FORMAT_FILES)

## test-release: the command-line tests against the static release binary that `make install` installs
test-release: test-deps release
	$(SWIFT) build --build-tests
	KC_TEST_BINARY="$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/kc" $(SWIFT) test --skip-build --disable-xctest --filter kcTests

## install: build a release kc, install it with its man page and shell completions, and run it
install: release
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/man/man1" \
	  "$(DESTDIR)$(PREFIX)/share/bash-completion/completions" "$(DESTDIR)$(PREFIX)/share/zsh/site-functions" \
	  "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d"
	install -m 0755 "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/kc" "$(DESTDIR)$(PREFIX)/bin/kc"
	install -m 0755 "$$($(SWIFT) build $(PROVIDER_FLAGS) --show-bin-path)/kc-tpm" "$(DESTDIR)$(PREFIX)/bin/kc-tpm"
	install -m 0755 "$$($(SWIFT) build $(PROVIDER_FLAGS) --show-bin-path)/kc-secret-service" "$(DESTDIR)$(PREFIX)/bin/kc-secret-service"
	install -m 0755 "$$($(SWIFT) build $(PROVIDER_FLAGS) --show-bin-path)/kc-team" "$(DESTDIR)$(PREFIX)/bin/kc-team"
	install -m 0755 "$$($(SWIFT) build $(PROVIDER_FLAGS) --show-bin-path)/kc-ssh" "$(DESTDIR)$(PREFIX)/bin/kc-ssh"
	install -d "$(DESTDIR)$(PREFIX)/share/dbus-1/services" "$(DESTDIR)$(PREFIX)/lib/systemd/user"
	sed 's|@BINDIR@|$(PREFIX)/bin|' integrations/secret-service/org.freedesktop.secrets.service > "$(DESTDIR)$(PREFIX)/share/dbus-1/services/org.freedesktop.secrets.service"
	sed 's|@BINDIR@|$(PREFIX)/bin|' integrations/secret-service/kc-secret-service.service > "$(DESTDIR)$(PREFIX)/lib/systemd/user/kc-secret-service.service"
	sed 's|@BINDIR@|$(PREFIX)/bin|' integrations/ssh-agent/kc-ssh-agent.service > "$(DESTDIR)$(PREFIX)/lib/systemd/user/kc-ssh-agent.service"
	sed 's|@BINDIR@|$(PREFIX)/bin|' integrations/tpm/kc-tpm-unlock.service > "$(DESTDIR)$(PREFIX)/lib/systemd/user/kc-tpm-unlock.service"
	ln -sf kc "$(DESTDIR)$(PREFIX)/bin/git-credential-kc"
	ln -sf kc "$(DESTDIR)$(PREFIX)/bin/docker-credential-kc"
	ln -sf kc "$(DESTDIR)$(PREFIX)/bin/kc-vault-token-helper"
	ln -sf kc "$(DESTDIR)$(PREFIX)/bin/terraform-credentials-kc"
	install -m 0644 docs/man/kc.1 "$(DESTDIR)$(PREFIX)/share/man/man1/kc.1"
	install -d "$(DESTDIR)$(PREFIX)/share/doc/kc"
	install -m 0644 docs/third-party.md "$(DESTDIR)$(PREFIX)/share/doc/kc/third-party.md"
	"$(DESTDIR)$(PREFIX)/bin/kc" --generate-completion-script bash > "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/kc"
	"$(DESTDIR)$(PREFIX)/bin/kc" --generate-completion-script zsh > "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_kc"
	"$(DESTDIR)$(PREFIX)/bin/kc" --generate-completion-script fish > "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/kc.fish"
	"$(DESTDIR)$(PREFIX)/bin/kc" --version

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/kc" "$(DESTDIR)$(PREFIX)/bin/git-credential-kc" "$(DESTDIR)$(PREFIX)/bin/docker-credential-kc" \
	  "$(DESTDIR)$(PREFIX)/bin/kc-secret-service" "$(DESTDIR)$(PREFIX)/bin/kc-team" "$(DESTDIR)$(PREFIX)/share/dbus-1/services/org.freedesktop.secrets.service" \
	  "$(DESTDIR)$(PREFIX)/lib/systemd/user/kc-secret-service.service" \
	  "$(DESTDIR)$(PREFIX)/bin/kc-ssh" "$(DESTDIR)$(PREFIX)/lib/systemd/user/kc-ssh-agent.service" \
	  "$(DESTDIR)$(PREFIX)/bin/kc-vault-token-helper" \
	  "$(DESTDIR)$(PREFIX)/share/man/man1/kc.1" "$(DESTDIR)$(PREFIX)/share/doc/kc/third-party.md" \
	  "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/kc" "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_kc" \
	  "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/kc.fish"
	rm -f "$(DESTDIR)$(PREFIX)/bin/terraform-credentials-kc" "$(DESTDIR)$(PREFIX)/bin/kc-tpm" "$(DESTDIR)$(PREFIX)/lib/systemd/user/kc-tpm-unlock.service"

## bench: hyperfine timings of kc find through the agent, in-process finds, unlock, the Secret Service
## against gnome-keyring, the credential helpers beside kc find -w (bench/helpers.sh), team keychains on a
## throwaway PostgreSQL, and the SSH agent against OpenSSH's (bench/bench.sh, bench/team.sh, bench/ssh.sh)
bench: deps
	bash bench/bench.sh

## stress: the long reliability suite: load, kill -9, disk full, read-only, then fuzz (STRESS_QUICK=1: ~3 min)
stress: test-deps
	bash stress/stress.sh

## fuzz: libFuzzer + AddressSanitizer on the query, agent-protocol, row, DER (names, keys) and SSH agent decoders (FUZZ_SECONDS per target, default 60)
fuzz: deps
	bash fuzz/fuzz.sh

## man: regenerate docs/man/kc.1 from the commands' help (swift-argument-parser's plugin, then docs/man/layout.awk)
# SCRATCH: the build folder the plugin builds kc in (another than .build for a second checkout).
SCRATCH ?= .build
man: deps
	$(SWIFT) package --scratch-path $(SCRATCH) plugin --allow-writing-to-package-directory generate-manual
	install -d docs/man
	awk -v sections=docs/man/sections.mdoc -f docs/man/layout.awk $(SCRATCH)/plugins/GenerateManual/outputs/kc/kc.1 > docs/man/kc.1

clean:
	rm -rf .build
