// swift-tools-version: 6.0
import PackageDescription

// The targets are the layers of docs/design.md ("Targets and layers"); a target may import
// only what it lists here, and LayerTests fails when a source file imports anything else
// (LayerMapTests, when docs/design.md's table and this file disagree). A target imports only
// targets on rows below its own:
//
//   kc (links TeamCore: runner tokens)   kc-team   kc-secret-service   kc-ssh   kc-tpm   kc-bench   kc-team-bench   kc-loadgen
//   Security   SecretService ─► CSystemd (sd-bus), COpenSSL (libcrypto)   SSHAgent ─► COpenSSL   TPMSeal ─► CTSS2 (tpm2-tss)
//   KeychainClient   KeychainAgent   TeamStore ─► CPostgres (libpq)   KeychainFuzz   KCTestSupport
//   AgentWire   KeychainFormats   TeamCore ─► CSodium
//   KeychainCore ─► CSodium, CSQLite   POSIXSupport   BenchSupport
//   KeychainStatus (KeychainError) ─► SecurityVocabulary (OSStatus, errSec…, kSec…)     the floor
//
// kc links neither libpq nor D-Bus nor OpenSSL nor tpm2-tss: `kc team`, `kc secret-service` and
// `kc ssh` exec kc-team, kc-secret-service and kc-ssh; the TPM is kc-tpm's. KeychainCore re-exports the floor; Security re-exports
// SecurityVocabulary only.
let package = Package(
    name: "kc",
    products: [
        .executable(name: "kc", targets: ["kc"]),
        .library(name: "KeychainCore", targets: ["KeychainCore"]),
        .library(name: "KeychainClient", targets: ["KeychainClient"]),
        // Apple's SecItem API with Apple's signatures, for code written for Apple platforms
        // (Linux only: depend on it with `condition: .when(platforms: [.linux])`).
        .library(name: "Security", targets: ["Security"]),
        // The freedesktop.org Secret Service provider (docs/secret-service.md), installed
        // beside kc; `kc secret-service` execs it, so kc itself links no D-Bus.
        .executable(name: "kc-secret-service", targets: ["kc-secret-service"]),
        // Team keychains on PostgreSQL (docs/team.md): the team agent and the team commands,
        // installed beside kc; `kc team` execs it, so kc itself links no libpq.
        .executable(name: "kc-team", targets: ["kc-team"]),
        // The SSH agent and `kc ssh …` (docs/ssh.md), installed beside kc; `kc ssh` and
        // `kc ssh-agent` exec it, so kc itself links no libcrypto.
        .executable(name: "kc-ssh", targets: ["kc-ssh"]),
        // Sealing a key to the machine's TPM through tpm2-tss (docs/tpm.md), installed
        // beside kc, so kc itself links no tpm2-tss.
        .executable(name: "kc-tpm", targets: ["kc-tpm"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // libpq, the PostgreSQL client: linked only into kc-team (team keychains), never kc.
        .systemLibrary(
            name: "CPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // tpm2-tss's ESAPI, TCTI loader and marshalling: linked only into kc-tpm, never kc.
        .systemLibrary(
            name: "CTSS2",
            pkgConfig: "tss2-esys",
            providers: [.apt(["libtss2-dev"])]
        ),
        // The floor, part one: Apple's vocabulary (OSStatus, the errSec… codes and their
        // messages, SecCopyErrorMessageString, the kSec… keys and values, kc's kcAttr… keys).
        // Names only: no dependency at all. Security re-exports it whole.
        .target(
            name: "SecurityVocabulary",
            dependencies: []
        ),
        // The floor, part two: KeychainError, the one error type (an OSStatus with a message
        // and a hint), and the exit code of a status. Kept out of the vocabulary so that the
        // Security module does not hand kc's error type to Apple code.
        .target(
            name: "KeychainStatus",
            dependencies: ["SecurityVocabulary"]
        ),
        // The keychain itself: the file format, crypto, the Store seam and its SQLite
        // implementation, schema, queries and the SecItem operations. Nothing about sockets,
        // processes or terminals. Re-exports the floor, in whose terms its interface is written.
        .target(
            name: "KeychainCore",
            dependencies: ["KeychainStatus", "CSodium", "CSQLite"]
        ),
        // Unix plumbing both sides of the agent use: sockets with deadlines, peer
        // credentials, spawning with close-on-exec and a clean signal state; and the one
        // escaping of text for a terminal (TerminalSafe) every program here writes through.
        .target(
            name: "POSIXSupport",
            dependencies: ["KeychainStatus"]
        ),
        // The agent protocol (docs/protocol.md): frames, the value codec, every typed
        // request and reply, the agent folder and how a peer is established as the agent.
        .target(
            name: "AgentWire",
            dependencies: ["KeychainCore", "POSIXSupport"]
        ),
        // The agent's server side: `kc agent` holds unlocked keychains and serves requests.
        .target(
            name: "KeychainAgent",
            dependencies: ["KeychainCore", "POSIXSupport", "AgentWire"]
        ),
        // The one client path: the agent when it holds the keychain, else the keychain
        // opened here with a password; used by kc, the Security module and other front ends.
        .target(
            name: "KeychainClient",
            dependencies: ["KeychainCore", "POSIXSupport", "AgentWire"]
        ),
        // Import and export formats: kc's own JSON, CSV (Bitwarden, 1Password, KeePassXC,
        // browsers), Bitwarden JSON, pass, git-credentials.
        .target(
            name: "KeychainFormats",
            dependencies: ["KeychainCore", "POSIXSupport"]
        ),
        .target(
            name: "Security",
            dependencies: ["SecurityVocabulary", "KeychainCore", "KeychainClient"]
        ),
        // The Secret Service provider: D-Bus through sd-bus, the DH session through libcrypto,
        // every keychain operation through the agent (KeychainClient). Never linked into kc.
        .target(
            name: "SecretService",
            dependencies: ["KeychainCore", "POSIXSupport", "AgentWire", "KeychainClient", "CSystemd", "COpenSSL"]
        ),
        // The SSH agent protocol (draft-miller-ssh-agent with OpenSSH's extensions), SSH keys
        // (Ed25519 through libsodium, ECDSA and RSA through libcrypto), the OpenSSH key file
        // format, and the keys kc keeps as key items. Never linked into kc.
        .target(
            name: "SSHAgent",
            dependencies: ["KeychainCore", "POSIXSupport", "AgentWire", "KeychainClient", "CSodium", "COpenSSL"]
        ),
        // Team keychains' records and cryptography (docs/team.md): members' keys, the signed
        // roster and log, the set hash, MK delivery, runner tokens. libsodium only.
        .target(
            name: "TeamCore",
            dependencies: ["KeychainCore", "CSodium"]
        ),
        // Team keychains on PostgreSQL through libpq: the connection, the schema, the Store
        // and the team operations. Linked into kc-team only.
        .target(
            name: "TeamStore",
            dependencies: ["KeychainCore", "POSIXSupport", "KeychainFormats", "TeamCore", "CPostgres"]
        ),
        // A 32-byte key sealed to the TPM (docs/tpm.md): the storage primary, the sealed
        // object, its PIN and PCR policy, parameter-encrypted sessions, the blob. kc-tpm only.
        .target(
            name: "TPMSeal",
            dependencies: ["KeychainStatus", "CSodium", "CTSS2"]
        ),
        // `kc-tpm seal` / `unseal`, installed beside kc.
        .executableTarget(
            name: "kc-tpm",
            dependencies: ["KeychainCore", "POSIXSupport", "TPMSeal"]
        ),
        // The team agent and the team commands; `kc team …` execs it.
        .executableTarget(
            name: "kc-team",
            dependencies: [
                "KeychainCore", "POSIXSupport", "AgentWire", "KeychainAgent", "KeychainClient", "KeychainFormats", "TeamCore", "TeamStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
        ),
        // The SSH agent and the `kc ssh …` commands; `kc ssh` and `kc ssh-agent` exec it.
        .executableTarget(
            name: "kc-ssh",
            // No ArgumentParser: swift-argument-parser's manual plugin (`make man`) runs every
            // executable that links it with --experimental-dump-help, and kc's man page is kc's.
            dependencies: ["KeychainCore", "POSIXSupport", "AgentWire", "KeychainClient", "SSHAgent"]
        ),
        .executableTarget(
            name: "kc-secret-service",
            dependencies: ["KeychainCore", "POSIXSupport", "KeychainClient", "SecretService"]
        ),
        .executableTarget(
            name: "kc",
            dependencies: [
                "KeychainCore", "POSIXSupport", "KeychainClient", "KeychainAgent", "KeychainFormats", "TeamCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
        ),
        // A load generator for the concurrency tests and `make stress`; not installed.
        .executableTarget(
            name: "kc-loadgen",
            dependencies: ["KeychainCore"]
        ),
        // What the benchmark programs share: their JSON output, clock and order statistics.
        .target(
            name: "BenchSupport",
            dependencies: []
        ),
        // The in-process half of `make bench` (bench/bench.sh); not installed.
        .executableTarget(
            name: "kc-bench",
            dependencies: ["KeychainCore", "BenchSupport"]
        ),
        // The team keychain half of `make bench` (bench/team.sh): readers through the team
        // agent, writers as other members with their own connections; not installed.
        .executableTarget(
            name: "kc-team-bench",
            dependencies: ["KeychainCore", "KeychainClient", "TeamCore", "TeamStore", "BenchSupport"]
        ),
        // The decoders of untrusted bytes as fuzz targets (`make fuzz`, FuzzTests); reaches
        // them through `package` access, so nothing of it is in the production library.
        .target(
            name: "KeychainFuzz",
            dependencies: ["KeychainCore", "AgentWire", "SSHAgent"],
            path: "fuzz/Targets"
        ),
        // Test helpers: running the real kc binary with a deadline, a seeded generator.
        .target(
            name: "KCTestSupport",
            dependencies: ["KeychainCore", "POSIXSupport"],
            path: "Tests/KCTestSupport"
        ),
        .testTarget(
            name: "KeychainCoreTests",
            dependencies: ["KeychainCore", "AgentWire", "KeychainClient", "KeychainFuzz", "kc-loadgen", "KCTestSupport"]
        ),
        .testTarget(
            name: "kcTests",
            dependencies: ["KeychainCore", "POSIXSupport", "AgentWire", "KeychainClient", "kc", "KCTestSupport"],
            exclude: ["pty_session.py", "git_http_server.py", "kube_https_server.py", "aws_client.py", "Fixtures"]
        ),
        // The import and export formats on fixture bytes (Tests/KeychainFormatsTests/Fixtures).
        .testTarget(
            name: "KeychainFormatsTests",
            dependencies: ["KeychainCore", "KeychainFormats", "KCTestSupport"],
            exclude: ["Fixtures"]
        ),
        // Real Secret Service clients (secret-tool, secretstorage, keyring, Docker's and git's
        // helpers) against kc-secret-service on a private dbus-daemon.
        .testTarget(
            name: "SecretServiceTests",
            dependencies: ["KeychainCore", "AgentWire", "kc", "kc-secret-service", "KCTestSupport"]
        ),
        // Team keychains against a throwaway PostgreSQL cluster (KCTestSupport.TestPostgres):
        // the store, the records, the agent and kc, and the hostile server.
        .testTarget(
            name: "TeamTests",
            dependencies: ["KeychainCore", "POSIXSupport", "AgentWire", "TeamCore", "TeamStore", "kc", "kc-team", "KCTestSupport"]
        ),
        // The SSH agent against Debian's OpenSSH: ssh-add, ssh-keygen -Y, ssh to a loopback
        // sshd, git commit signing.
        .testTarget(
            name: "SSHAgentTests",
            dependencies: ["KeychainCore", "POSIXSupport", "AgentWire", "KeychainClient", "CSodium", "COpenSSL", "SSHAgent", "kc", "kc-ssh", "KCTestSupport"]
        ),
        // kc-tpm against swtpm, started by each test on a throwaway state folder; tpm2-tools
        // only to inspect it (the lockout counter, the SRK) and change its state (extend a
        // PCR, clear it), never to seal.
        .testTarget(
            name: "TPMTests",
            dependencies: ["KeychainCore", "POSIXSupport", "TPMSeal", "AgentWire", "kc", "kc-tpm", "KCTestSupport"]
        ),
        // Keychain code written for Apple platforms, built against the Security module.
        .testTarget(
            name: "SecurityTests",
            dependencies: ["Security", "kc", "KCTestSupport"]
        )
    ],
    swiftLanguageModes: [.v6]
)
