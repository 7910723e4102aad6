import Foundation
import KeychainCore
import KCTestSupport
import TeamCore
@testable import TeamStore

/// A team keychain on a fresh database of the test cluster, opened in this process: an
/// admin (its root), and members added as a real admin adds them (join request, fingerprint
/// checked, master key delivered). Each member has its own connection and checkpoint folder.
final class TeamFixture {
    let name: String
    let dsn: String
    let keychainID: [UInt8]
    let admin: Member
    let folder: String

    /// One member: its keys and its keychain opened in this process.
    final class Member {
        let keys: MemberKeys
        let name: String
        let opened: TeamKeychains.Opened
        var keychain: Keychain { opened.keychain }
        var authority: TeamAuthority { opened.authority }
        init(keys: MemberKeys, name: String, opened: TeamKeychains.Opened) {
            self.keys = keys
            self.name = name
            self.opened = opened
        }
    }

    init(name: String = "infra", cluster: TestPostgres = .shared) throws {
        self.name = name
        dsn = try cluster.newDatabase()
        folder = NSTemporaryDirectory() + "/kc-team-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keys = try MemberKeys.generate()
        keychainID = try TeamAdmin.createOnServer(name: name, dsn: dsn, memberName: "root-admin", member: keys)
        admin = Member(
            keys: keys, name: "root-admin", opened: try Self.open(name: name, keychainID: keychainID, dsn: dsn, keys: keys, folder: folder + "/root-admin"))
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// Opens the keychain as `keys`' member with its own checkpoint folder.
    static func open(name: String, keychainID: [UInt8], dsn: String, keys: MemberKeys, folder: String) throws -> TeamKeychains.Opened {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return try TeamKeychains.connect(name: name, keychainID: keychainID, dsn: dsn, insecure: false, member: keys, checkpoints: folder)
    }

    /// Opens the keychain again as an existing member (a restarted agent): same checkpoint folder.
    func reopen(_ keys: MemberKeys, as memberName: String) throws -> Member {
        Member(keys: keys, name: memberName, opened: try Self.open(name: name, keychainID: keychainID, dsn: dsn, keys: keys, folder: folder + "/" + memberName))
    }

    /// A device joins (its request on the server), the admin adds it with its fingerprint,
    /// and it opens the keychain.
    func addMember(_ memberName: String, role: MemberRole = .writer) throws -> Member {
        let keys = try MemberKeys.generate()
        _ = try TeamAdmin.requestToJoin(JoinString(keychainID: keychainID, dsn: dsn), memberName: memberName, member: keys)
        _ = try TeamAdmin.add(admin.opened, memberName: memberName, fingerprint: keys.fingerprint, role: role)
        return try reopen(keys, as: memberName)
    }

    /// A connection for playing the server with real SQL.
    func server() throws -> PostgresConnection { try PostgresConnection(dsn: dsn) }
}

/// A generic-password query.
func genp(_ extra: [String: Any]) -> [String: Any] {
    var q: [String: Any] = [kSecClass: kSecClassGenericPassword]
    for (k, v) in extra { q[k] = v }
    return q
}

/// The status a throwing call ends with (errSecSuccess when it returns).
func status(_ body: () throws -> Any?) -> OSStatus {
    do {
        _ = try body()
        return errSecSuccess
    } catch let e as KeychainError {
        return e.status
    } catch {
        return errSecInternalError
    }
}

/// The error a call throws, or nil.
func failure(_ body: () throws -> Any?) -> KeychainError? {
    do {
        _ = try body()
        return nil
    } catch let e as KeychainError {
        return e
    } catch {
        return KeychainError(errSecInternalError, "\(error)")
    }
}
