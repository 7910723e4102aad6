import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// AWS's shared files read as botocore 1.29 reads them (configparser, then
/// build_profile_map), each case checked afterwards with Debian's boto3 reading the files.
extension AWSCredentialsTests {
    /// `boto3` resolving `profile` in the home: (access key, secret, token) or the error.
    func resolved(_ h: KCHome, _ profile: String) throws -> String {
        let r = try client(h, "boto3", profile)
        if let error = r["error"] as? String { return "error: \(error)" }
        return "\(r["key"] as? String ?? "-") \(r["secret"] as? String ?? "-") \(r["token"] as? String ?? "-")"
    }

    /// `[default] ; note` is `[default]` (kc read the keys after it as another profile's
    /// and deleted that one's); `[profile prod] # x` is `[profile prod]` (kc added a second
    /// one, and awscli refused the file); `[profile "q"]` and `[profile  q]` are profile q.
    @Test func headersWithCommentsAndQuotesAreBotocores() throws {
        let h = try home()
        let aws = h.directory + "/.aws"
        try write(
            "[default] ; the main one\naws_access_key_id = AKIADEF\naws_secret_access_key = def-secret-1\n\n[other]\naws_access_key_id = AKIAOTHER\naws_secret_access_key = other-secret-1\n",
            aws + "/credentials")
        try write(
            "[profile prod] # production\nregion = eu-west-1\n[profile \"q\"]\naws_access_key_id = AKIAQ\naws_secret_access_key = q-secret-1\n", aws + "/config"
        )
        var out = try h.kc(["aws-credentials", "--import", "default"])
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["aws-credentials", "--store", "prod"], stdin: Data(#"{"Version":1,"AccessKeyId":"AKIAPROD","SecretAccessKey":"prod-secret-1"}"#.utf8))
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["aws-credentials", "--import", "q"])
        #expect(out.status == 0, "\(out.stderr)")
        let credentials = read(aws + "/credentials"), config = read(aws + "/config")
        #expect(!credentials.contains("def-secret-1") && credentials.contains("other-secret-1"), "\(credentials)")
        #expect(!config.contains("q-secret-1") && config.components(separatedBy: "[profile prod]").count == 2, "\(config)")
        #expect(try resolved(h, "default") == "AKIADEF def-secret-1 -")
        #expect(try resolved(h, "other") == "AKIAOTHER other-secret-1 -")
        #expect(try resolved(h, "prod") == "AKIAPROD prod-secret-1 -")
        #expect(try resolved(h, "q") == "AKIAQ q-secret-1 -")
    }

    /// `[default]` and `[profile default]` in the config: botocore reads the later, so kc
    /// moves its keys (and removes the dead earlier ones); a bare CR ends a line (kc left a
    /// session token hidden after one).
    @Test func laterDefaultAndBareCarriageReturnsAreBotocores() throws {
        let h = try home()
        let aws = h.directory + "/.aws"
        try write(
            "[default]\naws_access_key_id = AKIAEARLY\naws_secret_access_key = early-secret\n[profile default]\naws_access_key_id = AKIALATE\naws_secret_access_key = late-secret\n",
            aws + "/config")
        try write("[cr]\raws_access_key_id = AKIACR\raws_secret_access_key = cr-secret\raws_session_token = cr-token-1\r", aws + "/credentials")
        #expect(try resolved(h, "default") == "AKIALATE late-secret -")
        var out = try h.kc(["aws-credentials", "--import", "default"])
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["aws-credentials", "--import", "cr"])
        #expect(out.status == 0, "\(out.stderr)")
        let credentials = read(aws + "/credentials"), config = read(aws + "/config")
        #expect(!config.contains("secret") && !credentials.contains("cr-secret") && !credentials.contains("cr-token-1"), "\(config) \(credentials)")
        #expect(try resolved(h, "default") == "AKIALATE late-secret -")
        #expect(try resolved(h, "cr") == "AKIACR cr-secret cr-token-1")
    }

    /// A line botocore reads otherwise than kc could rewrite: a key indented with U+00A0
    /// (Python's strip takes it: the line continues the secret's value), a line that is
    /// neither a header nor `key = value`. Refused, files unchanged, nothing stored.
    @Test func linesKcCannotPlaceAreRefused() throws {
        let h = try home()
        let aws = h.directory + "/.aws"
        for text in [
            "[nb]\naws_access_key_id = AKIANB\naws_secret_access_key = nb-secret\n\u{00A0}aws_session_token = nb-token\n",
            "[nb]\naws_access_key_id = AKIANB\naws_secret_access_key = nb-secret\nnot a setting\n"
        ] {
            try write(text, aws + "/credentials")
            let out = try h.kc(["aws-credentials", "--import", "nb"])
            #expect(out.status == 206 && !out.stderr.contains("nb-secret"), "\(out.status) \(out.stderr)")
            #expect(read(aws + "/credentials") == text)
            #expect(try h.kc(["find", "-s", "aws:nb"]).status != 0, "nothing stored")
        }
    }

    /// `KC_KEYCHAIN=work kc aws-credentials --store P` wrote `credential_process = kc
    /// aws-credentials P`, which AWS runs without KC_KEYCHAIN: the default keychain, not
    /// the one the keys went into. The keychain named by the environment is written with
    /// `-k`, for AWS and in kubectl's exec stanza, and each client reaches the keys.
    @Test func aKeychainFromTheEnvironmentIsWrittenIntoTheClientsFile() throws {
        let h = try home()
        #expect(try h.kc(["create", "-k", "work", "--kdf", "interactive"], password: "work pw").status == 0)
        #expect(try h.kc(["unlock", "-k", "work"], password: "work pw").status == 0)
        let json = #"{"Version":1,"AccessKeyId":"AKIAWORK","SecretAccessKey":"work-secret-1"}"#
        var out = try h.kc(["aws-credentials", "--store", "wk"], stdin: Data(json.utf8), extra: ["KC_KEYCHAIN": "work"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(
            read(h.directory + "/.aws/config") == "[profile wk]\ncredential_process = kc aws-credentials -k work wk\n", "\(read(h.directory + "/.aws/config"))")
        #expect(try resolved(h, "wk") == "AKIAWORK work-secret-1 -")
        let kube = h.directory + "/kube/config"
        try write("users:\n- name: dev\n  user:\n    token: WORKTOKEN\n", kube)
        out = try h.kc(["kube-credential", "--import", kube, "dev"], extra: ["KC_KEYCHAIN": "work"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(read(kube).contains("- \"--keychain\"\n      - \"work\"") && !read(kube).contains("WORKTOKEN"), "\(read(kube))")
        #expect(try h.kc(["find", "-k", "work", "-s", "kube:dev", "-w"]).stdout == "WORKTOKEN")
    }

    /// Found by attacking the helper: with stdout closed it wrote nothing and exited 0 (AWS
    /// or a script went on without keys); `--store` on a locked keychain suggested
    /// --password-stdin, though stdin is the JSON; a key given twice in the JSON was read
    /// as its first value, where AWS's Python and Go read the last. Now: exit 220 with one
    /// line; the hint is `kc unlock`; a key given twice is refused (exit 206), nothing stored.
    @Test func closedStdoutLockedStoreAndDuplicateKeysAreRefused() throws {
        let h = try home()
        let json = #"{"Version":1,"AccessKeyId":"AKIAOUT","SecretAccessKey":"out-secret-1"}"#
        #expect(try h.kc(["aws-credentials", "--store", "out"], stdin: Data(json.utf8)).status == 0)
        var out = try Spawn.run(["/bin/sh", "-c", "exec \"$0\" aws-credentials out >&-", KCBinary.path], environment: h.environment, timeout: 20)
        #expect(out.status == 220 && out.stderr.split(separator: "\n").count == 1 && !out.stderr.contains("out-secret-1"), "\(out.status) \(out.stderr)")
        let twice = #"{"Version":1,"AccessKeyId":"AKIAFIRST","SecretAccessKey":"dup-secret","\u0041ccessKeyId":"AKIALAST"}"#
        out = try h.kc(["aws-credentials", "--store", "dup"], stdin: Data(twice.utf8))
        #expect(out.status == 206 && out.stderr.contains("twice"), "\(out.status) \(out.stderr)")
        #expect(try h.kc(["find", "-s", "aws:dup"]).status != 0, "nothing stored")
        #expect(try h.kc(["lock"]).status == 0)
        out = try h.kc(["aws-credentials", "--store", "out"], stdin: Data(json.utf8))
        #expect(out.status == 36 && out.stderr.contains("kc unlock") && !out.stderr.contains("password-stdin"), "\(out.status) \(out.stderr)")
    }
}

/// Found attacking the INI reader a second time: kc compared Swift characters where Python
/// compares code points, let a backslash in double quotes escape `$` as a shell does (Python's
/// shlex does not), and forgot the keys of one `[DEFAULT]` at the next.
extension AWSCredentialsTests {
    /// `[profile` + U+0301 + ` p2]` is profile p2 to botocore (shlex splits code points), and
    /// the later section of a profile is the one it reads: kc moved the earlier section's
    /// nothing, said "moved", and botocore kept the plaintext keys. Now kc either leaves
    /// botocore reading the keys from kc, or refuses with the files unchanged.
    @Test func profileNamesAreComparedAsCodePoints() throws {
        let h = try home()
        let aws = h.directory + "/.aws"
        let config = "[profile p2]\nregion = us-east-1\n[profile\u{0301} p2]\naws_access_key_id = AKIAPLAIN\naws_secret_access_key = plainsecret\n"
        try write(config, aws + "/config")
        #expect(try resolved(h, "p2") == "AKIAPLAIN plainsecret -", "botocore reads the later section")
        let out = try h.kc(["aws-credentials", "--import", "p2"])
        if out.status == 0 {
            #expect(!read(aws + "/config").contains("plainsecret"), "\(read(aws + "/config"))")
            #expect(try resolved(h, "p2") == "AKIAPLAIN plainsecret -")
        } else {
            #expect(out.status == 206 && read(aws + "/config") == config, "\(out.status) \(out.stderr)")
        }
    }

    /// `[profile "a\$b"]` is profile `a\$b` to botocore (Python's shlex keeps the backslash
    /// before `$` in double quotes), not `a$b`: `--store 'a$b'` must write into `[profile
    /// a$b]`, the section botocore reads for it.
    @Test func aBackslashInDoubleQuotesEscapesOnlyQuotesAndBackslashes() throws {
        let h = try home()
        let aws = h.directory + "/.aws"
        let config = "[profile a$b]\nregion = x\n[profile \"a\\$b\"]\nregion = y\n"
        try write(config, aws + "/config")
        let json = #"{"Version":1,"AccessKeyId":"AKIADOLLAR","SecretAccessKey":"dollar-secret"}"#
        let out = try h.kc(["aws-credentials", "--store", "a$b"], stdin: Data(json.utf8))
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try resolved(h, "a$b") == "AKIADOLLAR dollar-secret -", "\(read(aws + "/config"))")
    }

    /// A key given in two `[DEFAULT]` sections: configparser refuses the file (one section),
    /// so kc refuses it too, changing nothing (kc rewrote a file botocore then refused).
    @Test func aKeyRepeatedAcrossDefaultSectionsIsRefused() throws {
        let h = try home()
        let aws = h.directory + "/.aws"
        let config = "[DEFAULT]\nregion = a\n[profile x]\noutput = json\n[DEFAULT]\nregion = b\n"
        try write(config, aws + "/config")
        let json = #"{"Version":1,"AccessKeyId":"AKIAX","SecretAccessKey":"x-secret"}"#
        let out = try h.kc(["aws-credentials", "--store", "x"], stdin: Data(json.utf8))
        #expect(out.status == 206 && read(aws + "/config") == config, "\(out.status) \(out.stderr)")
    }
}
