import Foundation
import Testing
import KeychainCore

/// `KeychainAddress`: the one parse of a word naming a keychain (`-k`, `KC_KEYCHAIN`, the
/// default, `kc create`'s and `kc backup`'s arguments) and of the agent's path for it.
@Suite struct KeychainAddressTests {
    /// The data folder of this process (`$XDG_DATA_HOME/kc`, else `~/.local/share/kc`).
    var folder: String { KeychainLocation.directory }

    /// Every spelling of a keychain file: the default, a NAME, a path with a slash
    /// (absolute or relative), a word ending in `.keychain-db`.
    @Test func aWordNamesAFile() throws {
        let cases: [(String?, String)] = [
            (nil, folder + "/login.keychain-db"),
            ("", folder + "/login.keychain-db"),
            ("work", folder + "/work.keychain-db"),
            ("login", folder + "/login.keychain-db"),
            ("/srv/app/app.keychain-db", "/srv/app/app.keychain-db"),
            ("/srv/app/app", "/srv/app/app"),
            ("rel/app", "rel/app"),
            ("./app", "./app"),
            ("app.keychain-db", "app.keychain-db"),
            ("~/x", "~/x"),   // no tilde expansion: the shell does it
            ("team", folder + "/team.keychain-db"),
            ("teams:x", folder + "/teams:x.keychain-db"),
            ("Team:x", folder + "/Team:x.keychain-db")
        ]
        for (word, path) in cases {
            let address = try KeychainAddress(word)
            #expect(address == .file(path), "\(word ?? "nil")")
            #expect(address.description == path, "messages name it by its path")
        }
    }

    /// A file whose name starts with `team:` is a file as soon as the word has a slash:
    /// `./team:x`, or an absolute path.
    @Test func aFileNamedLikeATeamIsAFile() throws {
        #expect(try KeychainAddress("./team:x") == .file("./team:x"))
        #expect(try KeychainAddress("/tmp/team:x.keychain-db") == .file("/tmp/team:x.keychain-db"))
        #expect(try KeychainAddress("dir/team:x") == .file("dir/team:x"))
        #expect(try KeychainAddress(agentPath: "/tmp/team:x") == .file("/tmp/team:x"))
    }

    /// `team:NAME` is a team keychain, by the team name rule: 1 to 64 of a-z, 0-9, `-`, `_`,
    /// starting with a letter or digit. Its message name and agent path are the word itself.
    @Test(arguments: ["infra", "ci-prod_2", "a", "0x", "x-", String(repeating: "a", count: 64)])
    func teamWordNamesATeam(_ name: String) throws {
        let address = try KeychainAddress("team:" + name)
        #expect(address == .team(name))
        #expect(address.description == "team:" + name && address.agentPath == "team:" + name, "sent as it is, never made a path")
        #expect(try KeychainAddress(agentPath: "team:" + name) == address)
        #expect(try KeychainAddress(teamName: name) == address)
    }

    /// `team:` and a malformed name is errSecParam, never a file named `team:…` and never a
    /// NAME in the data folder: the hint says how to name such a file.
    @Test(arguments: [
        "", "-x", "_x", "Infra", "a/b", "a b", "é", "x.keychain-db", "a:b",
        String(repeating: "a", count: 65)
    ])
    func aMalformedTeamNameIsRefused(_ name: String) {
        for parse in [
            { try KeychainAddress("team:" + name) }, { try KeychainAddress(agentPath: "team:" + name) },
            { try KeychainAddress(teamName: name) }
        ] as [() throws -> KeychainAddress] {
            do {
                let address = try parse()
                Issue.record("team:\(name) parsed as \(address)")
            } catch let error as KeychainError {
                #expect(error.status == errSecParam)
                #expect(error.message == "\"\(name)\" is not a team name: use 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit")
                #expect(error.hint?.contains("./team:") == true, "\(error.hint ?? "no hint")")
            } catch {
                Issue.record("\(error)")
            }
        }
        #expect(KeychainLocation.resolve("team:" + name) == "team:" + name, "messages keep the word as typed")
    }

    /// The agent path grammar has no NAMEs and no default: what is not `team:NAME` is the
    /// path it says. A file's agent path is its real, absolute path.
    @Test func anAgentPathIsAPathOrATeam() throws {
        #expect(try KeychainAddress(agentPath: "login") == .file("login"))
        #expect(try KeychainAddress(agentPath: "") == .file(""))
        #expect(try KeychainAddress(agentPath: "/a/b.keychain-db") == .file("/a/b.keychain-db"))
        #expect(KeychainAddress.file("/x.keychain-db").agentPath == "/x.keychain-db")
        let cwd = try #require(realpath(".", nil))
        defer { free(cwd) }
        let here = String(cString: cwd)
        #expect(KeychainAddress.file("rel.keychain-db").agentPath == (here == "/" ? "" : here) + "/rel.keychain-db")
        // A link in the folders is resolved: the agent knows the keychain by one path.
        let base = try #require(realpath(NSTemporaryDirectory(), nil))
        defer { free(base) }
        let folder = String(cString: base) + "/kc-address-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder + "/real", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: folder + "/real")
        let viaLink = KeychainAddress.file(folder + "/link/k.keychain-db")
        #expect(viaLink.agentPath == folder + "/real/k.keychain-db")
        #expect(viaLink.description == folder + "/link/k.keychain-db", "messages name it as chosen")
        #expect(try KeychainAddress(agentPath: viaLink.agentPath) == .file(folder + "/real/k.keychain-db"))
    }
}
