import KeychainCore
import POSIXSupport
import KeychainClient
import KeychainFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// `kc aws-credentials PROFILE`: AWS's `credential_process` (`credential_process = kc
/// aws-credentials PROFILE` in ~/.aws/config). A profile's keys are a generic password with
/// service `aws:PROFILE`, account the access key id, and as its secret the JSON AWS reads
/// (`{"Version":1,"AccessKeyId":…,"SecretAccessKey":…,"SessionToken":…,"Expiration":…}`);
/// an item whose secret is not that JSON is the secret access key itself. `--store` takes
/// the JSON on stdin, `--import` moves the keys out of AWS's shared files. Errors are one
/// line on stderr (AWS shows it) and a nonzero exit; nothing secret is ever on stderr.
enum AWSCredentialProcess {
    enum Mode { case get, store, importKeys }

    /// The arguments after `aws-credentials`, read without ArgumentParser (`KC.main`'s fast
    /// path): keychain options, `--import` or `--store`, and the profile.
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        reporting {
            let (choice, rest) = try HelperInput.options(arguments)
            var mode = Mode.get
            var profiles: [String] = []
            for word in rest {
                if Options.awsImport.isNamed(word[...]) || Options.awsStore.isNamed(word[...]) {
                    guard mode == .get else { throw KeychainError(errSecParam, "aws-credentials: --import and --store exclude each other") }
                    mode = Options.awsImport.isNamed(word[...]) ? .importKeys : .store
                } else if word.hasPrefix("-") && word != "-" {
                    throw KeychainError(
                        errSecParam, "aws-credentials: unknown option \(word)", hint: "kc aws-credentials [-k KEYCHAIN] [--import|--store] PROFILE")
                } else {
                    profiles.append(word)
                }
            }
            guard profiles.count == 1, let profile = profiles.first, !profile.isEmpty else {
                throw KeychainError(errSecParam, "aws-credentials needs one profile name", hint: "kc aws-credentials [-k KEYCHAIN] [--import|--store] PROFILE")
            }
            try checkName(profile, "profile name")
            if let keychain = choice.keychain { try checkName(keychain, "keychain") }
            return try run(mode, choice, profile)
        }
    }

    /// Refuses a name that would change the meaning of the INI line or section it goes into
    /// (`[profile NAME]`, `credential_process = kc aws-credentials NAME`): a line break or
    /// another control character, a bracket, white space at either end. AWS names no
    /// profile so.
    static func checkName(_ name: String, _ what: String) throws {
        let bad = name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) || $0 == "[" || $0 == "]" }
        guard !bad, name.trimmingSpaces == name else {
            throw KeychainError(errSecParam, "aws-credentials: the \(what) holds a control character, a bracket or white space at an end")
        }
    }

    /// `body`'s exit status; an error is one line on stderr (AWS shows it) and its exit code.
    static func reporting(_ body: () throws -> Int32) -> Int32 {
        do {
            return try body()
        } catch let error as KeychainError {
            Report.note("\(error.message)\(error.hint.map { " (\($0))" } ?? "")")
            return exitCode(for: error.status)
        } catch {
            Report.note("\(error)")
            return 1
        }
    }

    static func run(_ mode: Mode, _ choice: KeychainChoice, _ profile: String) throws -> Int32 {
        switch mode {
        case .get:
            let keychain = try Session.open(choice, lockedHint: HelperInput.unlockHint(choice))
            guard let keys = try find(profile, keychain) else {
                throw KeychainError(
                    errSecItemNotFound, "no AWS keys for the profile \(profile) in kc (service aws:\(profile))",
                    hint: "kc aws-credentials --import \(ShellWord.quoted(profile))")
            }
            Report.out(keys.json + "\n")
        case .store:
            var input = try HelperInput.readStdin(stopAtEmptyLine: false)
            defer { for i in input.indices { input[i] = 0 } }
            let document = try input.withUnsafeBytes { try JSONValue.parse($0) }
            guard let keys = AWSKeys(document) else {
                throw KeychainError(errSecParam, "aws-credentials --store: stdin is not AWS's JSON with AccessKeyId and SecretAccessKey")
            }
            try save(keys, profile, Session.open(choice))
            try configure(profile, choice)
        case .importKeys:
            try importKeys(profile, choice)
        }
        return 0
    }

    /// The item's query: a generic password with service `aws:PROFILE`.
    static func query(_ profile: String) -> [String: Any] {
        [kSecClass: kSecClassGenericPassword, kSecAttrService: "aws:" + profile]
    }

    static func find(_ profile: String, _ keychain: KeychainSession) throws -> AWSKeys? {
        var q = query(profile)
        q[kSecReturnAttributes] = true
        q[kSecReturnData] = true
        q[kSecMatchLimit] = kSecMatchLimitOne
        let found: Any?
        do { found = try keychain.copyMatching(q) } catch let e as KeychainError where e.status == errSecItemNotFound { return nil }
        guard let item = found as? [String: Any], let data = item[kSecValueData] as? Data else { return nil }
        let bytes = [UInt8](data)
        if let document = try? bytes.withUnsafeBytes({ try JSONValue.parse($0) }), let keys = AWSKeys(document) { return keys }
        // `kc add -s aws:PROFILE -a KEYID`: the secret is the secret access key.
        let account = item[kSecAttrAccount] as? String ?? ""
        guard !account.isEmpty, let secret = String(validating: bytes, as: UTF8.self) else {
            throw KeychainError(errSecDecode, "the item aws:\(profile) holds neither AWS's JSON nor a secret access key with the key id as its account")
        }
        return AWSKeys(accessKeyId: account, secretAccessKey: secret.trimmingSpaces)
    }

    /// Stores `keys` as the profile's one item (replacing the one there).
    static func save(_ keys: AWSKeys, _ profile: String, _ keychain: KeychainSession) throws {
        let secret = Data(keys.json.utf8)
        do {
            let changed = try keychain.update(query(profile), [kSecAttrAccount: keys.accessKeyId, kSecValueData: secret])
            if changed > 0 { return }
        } catch let e as KeychainError where e.status == errSecItemNotFound {}
        var add = query(profile)
        add[kSecAttrAccount] = keys.accessKeyId
        add[kSecAttrLabel] = "AWS " + profile
        add[kSecValueData] = secret
        _ = try keychain.add(add)
    }

    /// The profile's section in ~/.aws/config: `[default]`, else `[profile NAME]`.
    static func configSection(_ profile: String) -> String { profile == "default" ? "default" : "profile " + profile }

    /// The `credential_process` line's value: this command, with the keychain it was given.
    static func command(_ profile: String, _ choice: KeychainChoice) -> String {
        (["kc", "aws-credentials"] + (choice.keychain.map { ["-k", ShellWord.quoted($0)] } ?? []) + [ShellWord.quoted(profile)])
            .joined(separator: " ")
    }

    /// Puts `credential_process = kc aws-credentials PROFILE` in the profile's section of
    /// ~/.aws/config. - Returns: whether the file changed.
    @discardableResult
    static func configure(_ profile: String, _ choice: KeychainChoice) throws -> Bool {
        var config = try AWSSharedFile(path: AWSSharedFile.configPath)
        guard config.set("credential_process", command(profile, choice), in: configSection(profile)) else { return false }
        try config.write()
        Report.note("\(config.path): credential_process for the profile \(profile) is kc")
        return true
    }

    /// `--import`: the keys of the profile from ~/.aws/credentials (or its section in
    /// ~/.aws/config) into kc, then both files rewritten without them and with the
    /// `credential_process` line. Run again, it finds no keys there and the item in kc, and
    /// changes nothing.
    ///
    /// botocore tries the credentials file, then `credential_process`, then the config
    /// file, and takes all of a profile's keys from the first that names an
    /// `aws_access_key_id`: keys are never mixed across the files. When both files hold
    /// keys for the profile and they differ, kc does not guess which the user meant: it
    /// refuses (errSecDuplicateItem) and changes nothing.
    static func importKeys(_ profile: String, _ choice: KeychainChoice) throws {
        var credentials = try AWSSharedFile(path: AWSSharedFile.credentialsPath)
        var config = try AWSSharedFile(path: AWSSharedFile.configPath)
        let inCredentials = credentials.credentials(in: profile)
        let inConfig = config.credentials(in: configSection(profile))
        guard inCredentials.isEmpty || inConfig.isEmpty || inCredentials == inConfig else {
            throw KeychainError(
                errSecDuplicateItem,
                "\(credentials.path) [\(profile)] and \(config.path) [\(configSection(profile))] hold different keys for the profile; nothing imported, nothing changed",
                hint: "AWS takes them from \(inCredentials["aws_access_key_id"] != nil ? credentials.path : config.path): delete the other set and run again")
        }
        let found = inCredentials.isEmpty ? inConfig : inCredentials
        let keychain = try Session.open(choice)
        if found.isEmpty {
            guard try find(profile, keychain) != nil else {
                throw KeychainError(errSecItemNotFound, "no keys for the profile \(profile) in \(credentials.path) or \(config.path), and none in kc")
            }
            if try !configure(profile, choice) { Report.note("the profile \(profile) already takes its keys from kc; nothing to do") }
            return
        }
        guard let id = found["aws_access_key_id"], !id.isEmpty, let secret = found["aws_secret_access_key"], !secret.isEmpty else {
            throw KeychainError(errSecParam, "the profile \(profile) has no aws_access_key_id and aws_secret_access_key pair; nothing imported")
        }
        let token = found["aws_session_token"] ?? found["aws_security_token"]
        try save(AWSKeys(accessKeyId: id, secretAccessKey: secret, sessionToken: token?.isEmpty == false ? token : nil), profile, keychain)
        let rewriteCredentials = credentials.removeCredentials(in: profile)
        _ = config.removeCredentials(in: configSection(profile))
        // A key left in a form kc did not rewrite (indented, say) would stay in plaintext,
        // and AWS prefers it to credential_process: nothing is written then.
        for (file, section) in [(credentials, profile), (config, configSection(profile))] where file.mentionsCredentials(in: section) {
            throw KeychainError(
                errSecParam, "\(file.path) keeps a credential key of [\(section)] in a form kc does not rewrite; nothing changed in the files",
                hint: "move it by hand, or write it as `key = value` at the start of its line and run again")
        }
        if rewriteCredentials { try credentials.write() }
        _ = config.set("credential_process", command(profile, choice), in: configSection(profile))
        try config.write()
        Report.note("moved the keys of the profile \(profile) (\(id)) into kc, service aws:\(profile)")
    }
}

/// A profile's keys, as AWS's `credential_process` JSON names them.
struct AWSKeys {
    var accessKeyId: String
    var secretAccessKey: String
    var sessionToken: String? = nil
    var expiration: String? = nil

    init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil, expiration: String? = nil) {
        (self.accessKeyId, self.secretAccessKey, self.sessionToken, self.expiration) = (accessKeyId, secretAccessKey, sessionToken, expiration)
    }

    /// From AWS's JSON (Version 1 or absent); nil without both keys.
    init?(_ document: JSONValue) {
        if let version = document["Version"], version.text != "1" { return nil }
        guard let id = document["AccessKeyId"]?.string, !id.isEmpty, let secret = document["SecretAccessKey"]?.string, !secret.isEmpty else {
            return nil
        }
        self.init(
            accessKeyId: id, secretAccessKey: secret, sessionToken: document["SessionToken"]?.string.flatMap { $0.isEmpty ? nil : $0 },
            expiration: document["Expiration"]?.string.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// AWS's JSON, in its documented order.
    var json: String {
        var fields = [("Version", "1"), ("AccessKeyId", JSON.string(accessKeyId)), ("SecretAccessKey", JSON.string(secretAccessKey))]
        if let sessionToken { fields.append(("SessionToken", JSON.string(sessionToken))) }
        if let expiration { fields.append(("Expiration", JSON.string(expiration))) }
        return JSON.object(fields)
    }
}
