import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// terraform-credentials-kc through the real binary, started as Terraform and OpenTofu start
/// it: by the absolute path of the link `kc terraform-credentials --install` put in their
/// plugin folders, the block's `args`, then the verb and the host (in svchost's compared
/// form), stdin the credentials object for `store`, stdout a JSON object for `get`, the
/// exit status and one line of stderr on failure. Neither tool is in Debian, so the
/// protocol is driven as its documentation and svchost's helper_program.go call it.
@Suite struct TerraformCredentialsTests {
    /// A fresh home with a keychain (unlocked in the agent unless `unlock` is false) and the
    /// links installed by the documented command.
    func home(unlock: Bool = true) throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        if unlock { #expect(try h.kc(["unlock"], password: KCHome.password).status == 0) }
        let out = try h.kc(["terraform-credentials", "--install"])
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stdout) \(out.stderr)")
        return h
    }

    /// The helper as Terraform runs it (`~/.terraform.d/plugins/terraform-credentials-kc`).
    func helper(_ h: KCHome, _ arguments: [String], stdin: String? = nil, folder: String = "/.terraform.d/plugins") throws -> KCBinary.Output {
        try Spawn.run(
            [h.directory + folder + "/terraform-credentials-kc"] + arguments, environment: h.environment, stdin: stdin.map { Data($0.utf8) }, timeout: 20)
    }

    func object(_ out: KCBinary.Output) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], "\(out.stdout)")
    }

    /// `--install` links into ~/.terraform.d/plugins (Terraform and OpenTofu) and
    /// $XDG_DATA_HOME/opentofu/plugins (OpenTofu); the links lead to this kc and a second
    /// run replaces them; a file that is not a link is left alone.
    @Test func installPutsWorkingLinksWhereBothToolsLook() throws {
        let h = try home()
        let real = URL(fileURLWithPath: KCBinary.path).resolvingSymlinksInPath().path
        for folder in [h.directory + "/.terraform.d/plugins", h.directory + "/data/opentofu/plugins"] {
            let link = folder + "/terraform-credentials-kc"
            let target = try FileManager.default.destinationOfSymbolicLink(atPath: link)
            #expect(URL(fileURLWithPath: target).resolvingSymlinksInPath().path == real, "\(link) -> \(target)")
            let out = try Spawn.run([link, "get", "example.com"], environment: h.environment, timeout: 20)
            #expect(out.status == 0 && out.stdout == "{}\n" && out.stderr.isEmpty, "\(out.stdout) \(out.stderr)")
        }
        var out = try h.kc(["terraform-credentials", "--install"])
        #expect(out.status == 0 && out.stdout.contains(h.directory + "/.terraform.d/plugins/terraform-credentials-kc -> "), "\(out.stdout)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: h.directory + "/.terraform.d/plugins")
        #expect(leftovers == ["terraform-credentials-kc"], "\(leftovers)")
        // The program's own name takes it too; a regular file in the way is refused.
        let other = h.directory + "/data/opentofu/plugins/terraform-credentials-kc"
        try FileManager.default.removeItem(atPath: other)
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: other))
        out = try helper(h, ["--install"])
        #expect(out.status != 0 && out.stderr.contains("is not a link"), "\(out.stdout) \(out.stderr)")
        #expect(try String(contentsOfFile: other, encoding: .utf8) == "#!/bin/sh\n")
    }

    /// get with nothing stored prints `{}`; store, get, store again (replaces), forget, get;
    /// the item is a generic password `terraform:HOST` that kc find shows.
    @Test func storeGetForgetRoundTrip() throws {
        let h = try home()
        var out = try helper(h, ["get", "app.terraform.io"])
        #expect(out.status == 0 && out.stdout == "{}\n" && out.stderr.isEmpty, "\(out.stdout) \(out.stderr)")
        out = try helper(h, ["store", "app.terraform.io"], stdin: #"{"token":"abc123.atlasv1.first"}"#)
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.isEmpty, "\(out.stdout) \(out.stderr)")
        out = try helper(h, ["get", "app.terraform.io"])
        #expect(out.status == 0 && out.stderr.isEmpty)
        #expect(try object(out) as? [String: String] == ["token": "abc123.atlasv1.first"])
        out = try helper(h, ["store", "app.terraform.io"], stdin: #"{"token":"abc123.atlasv1.second \"q\""}"#)
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.isEmpty, "\(out.stderr)")
        out = try helper(h, ["get", "app.terraform.io"])
        #expect(try object(out) as? [String: String] == ["token": "abc123.atlasv1.second \"q\""])
        // An ordinary kc item: the token is the secret.
        out = try h.kc(["find", "-s", "terraform:app.terraform.io", "-w"])
        #expect(out.status == 0 && out.stdout == "abc123.atlasv1.second \"q\"", "\(out.stdout) \(out.stderr)")
        out = try h.kc(["find", "-s", "terraform:app.terraform.io", "--all"])
        #expect(out.stdout.components(separatedBy: "service: terraform:app.terraform.io").count == 2, "\(out.stdout)")
        out = try helper(h, ["forget", "app.terraform.io"])
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.isEmpty, "\(out.stderr)")
        out = try helper(h, ["get", "app.terraform.io"])
        #expect(out.status == 0 && out.stdout == "{}\n")
        out = try helper(h, ["forget", "app.terraform.io"])
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.isEmpty, "nothing stored is success: \(out.stderr)")
        // A token added with kc is given to Terraform too.
        #expect(try h.kc(["add", "-s", "terraform:tfe.example.com", "-a", "ci", "-w", "from-kc-add"]).status == 0)
        out = try helper(h, ["get", "tfe.example.com"])
        #expect(try object(out) as? [String: String] == ["token": "from-kc-add"])
    }

    /// An object with more than a token is kept whole, as the protocol asks; what is not a
    /// credentials object is refused with one line on stderr (never the input), stdin read.
    @Test func otherPropertiesKeptAndBadInputRefused() throws {
        let h = try home()
        var out = try helper(h, ["store", "tfe.example.com:8443"], stdin: #"  {"token":"t0k","extra":{"n":1,"s":"x"}}"# + "\n")
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        out = try helper(h, ["get", "tfe.example.com:8443"])
        let got = try object(out)
        #expect(got["token"] as? String == "t0k" && (got["extra"] as? [String: Any])?["n"] as? Int == 1, "\(out.stdout)")
        for bad in [#"["token"]"#, #"{"token":7}"#, #"{"other":"x"}"#, "secret-not-json"] {
            out = try helper(h, ["store", "bad.example.com"], stdin: bad)
            #expect(out.status != 0 && out.stdout.isEmpty, "\(bad): \(out.stdout)")
            #expect(out.stderr.split(separator: "\n").count == 1 && !out.stderr.contains("secret-not-json"), "\(bad): \(out.stderr)")
        }
        out = try helper(h, ["get", "bad.example.com"])
        #expect(out.stdout == "{}\n")
        // Unknown verbs and missing hosts fail, as the protocol asks for forward compatibility.
        for arguments in [["list", "x.example.com"], ["get"], ["get", "a.example.com", "b.example.com"]] {
            out = try helper(h, arguments)
            #expect(out.status == 2 && out.stdout.isEmpty && out.stderr.split(separator: "\n").count == 1, "\(arguments): \(out.stderr)")
        }
        out = try helper(h, ["get", "https://app.terraform.io/"])
        #expect(out.status != 0 && out.stderr.contains("URL"), "\(out.stderr)")
    }

    /// Hostnames match as svchost.ForComparison normalises them: case, `:443` dropped,
    /// leading zeros of a port, Unicode labels as Punycode (RFC 3492's own examples).
    @Test func hostnamesMatchAsTerraformNormalisesThem() throws {
        let h = try home()
        var out = try helper(h, ["store", "App.Terraform.IO:443"], stdin: #"{"token":"case"}"#)
        #expect(out.status == 0, "\(out.stderr)")
        for form in ["app.terraform.io", "APP.terraform.io", "app.terraform.io:0443"] {
            out = try helper(h, ["get", form])
            #expect(try object(out) as? [String: String] == ["token": "case"], "\(form)")
        }
        out = try helper(h, ["get", "app.terraform.io:8443"])
        #expect(out.stdout == "{}\n", "another port is another host")
        out = try helper(h, ["store", "Bücher.Example:08080"], stdin: #"{"token":"idn"}"#)
        #expect(out.status == 0, "\(out.stderr)")
        out = try helper(h, ["get", "xn--bcher-kva.example:8080"])
        #expect(try object(out) as? [String: String] == ["token": "idn"], "\(out.stdout) \(out.stderr)")
        out = try h.kc(["find", "-s", "terraform:xn--bcher-kva.example:8080", "-w"])
        #expect(out.stdout == "idn", "\(out.stdout) \(out.stderr)")
        out = try helper(h, ["store", "xn--mnchen-3ya.example"], stdin: #"{"token":"muc"}"#)
        out = try helper(h, ["get", "MÜNCHEN.example"])
        #expect(try object(out) as? [String: String] == ["token": "muc"], "\(out.stdout) \(out.stderr)")
        for bad in ["", "a..b", "a b.example", "host:port", "host:70000"] {
            out = try helper(h, ["get", bad])
            #expect(out.status != 0 && out.stdout.isEmpty && out.stderr.split(separator: "\n").count == 1, "\(bad): \(out.stderr)")
        }
    }

    /// The block's `args` come before the verb: `-k` chooses another keychain (as a team
    /// keychain is chosen), through OpenTofu's folder too.
    @Test func argsBeforeTheVerbChooseTheKeychain() throws {
        let h = try home()
        let other = h.directory + "/other.keychain-db"
        #expect(try h.kc(["create", "--kdf", "interactive", other], password: KCHome.password).status == 0)
        #expect(try h.kc(["unlock", "-k", other], password: KCHome.password).status == 0)
        var out = try helper(h, ["-k", other, "store", "registry.example.com"], stdin: #"{"token":"other"}"#, folder: "/data/opentofu/plugins")
        #expect(out.status == 0, "\(out.stderr)")
        out = try helper(h, ["get", "registry.example.com"])
        #expect(out.stdout == "{}\n", "the default keychain holds nothing")
        out = try helper(h, ["--keychain", other, "get", "registry.example.com"], folder: "/data/opentofu/plugins")
        #expect(try object(out) as? [String: String] == ["token": "other"])
        // kc's own place for -k, before the hidden subcommand, works too.
        out = try h.kc(["-k", other, "terraform-credentials", "get", "registry.example.com"])
        #expect(try object(out) as? [String: String] == ["token": "other"], "\(out.stderr)")
    }

    /// Locked, no terminal (Spawn's children have none), no password: each verb fails at
    /// once with one line on stderr naming `kc unlock`, nothing on stdout.
    @Test func lockedKeychainWithoutATerminalFailsAtOnce() throws {
        let h = try home(unlock: false)
        for (verb, input) in [("get", nil), ("store", #"{"token":"x"}"#), ("forget", nil)] as [(String, String?)] {
            let start = Date()
            let out = try Spawn.run(
                [h.directory + "/.terraform.d/plugins/terraform-credentials-kc", verb, "app.terraform.io"], environment: h.environment,
                stdin: input.map { Data($0.utf8) }, timeout: 5)
            let took = Date().timeIntervalSince(start)
            #expect(out.status != 0 && out.stdout.isEmpty, "\(verb): \(out.status) \(out.stdout)")
            #expect(out.stderr.split(separator: "\n").count == 1 && out.stderr.contains("kc unlock"), "\(verb): \(out.stderr)")
            #expect(took < 1, "\(verb) took \(took) s")
        }
    }

    /// Locked, on a terminal: kc asks for the keychain's password, as its other commands
    /// do, then answers Terraform.
    @Test func lockedKeychainOnATerminalAsks() throws {
        let h = try home(unlock: false)
        #expect(try h.kc(["add", "-s", "terraform:app.terraform.io", "-a", "ci", "-w", "typed-then-given"], password: KCHome.password).status == 0)
        let s = try TerminalTests().drive(
            h, ["terraform-credentials", "get", "app.terraform.io"], UnlockOnPromptTests.typeThePassword + [["expect", "typed-then-given"]])
        #expect(s.status == 0 && s.screen.contains(#"{"token":"typed-then-given"}"#), "\(s.screen)")
    }

    /// `--uninstall` removes the links `--install` made, and a link that leads to this kc
    /// through another (as `make install`'s does), and nothing else: a regular file and a
    /// link to another program are left and named on stderr; nothing removed is exit 0.
    @Test func uninstallRemovesOnlyThisKcsLinks() throws {
        let h = try home()
        let terraform = h.directory + "/.terraform.d/plugins/terraform-credentials-kc"
        let tofu = h.directory + "/data/opentofu/plugins/terraform-credentials-kc"
        func exists(_ path: String) -> Bool { (try? FileManager.default.attributesOfItem(atPath: path)) != nil }
        var out = try h.kc(["terraform-credentials", "--uninstall"])
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stdout) \(out.stderr)")
        #expect(out.stdout.contains("removed \(terraform)\n") && out.stdout.contains("removed \(tofu)\n"), "\(out.stdout)")
        #expect(!exists(terraform) && !exists(tofu))
        // Through another link, as make install's terraform-credentials-kc beside kc.
        let beside = h.directory + "/terraform-credentials-kc"
        try FileManager.default.createSymbolicLink(atPath: beside, withDestinationPath: KCBinary.path)
        try FileManager.default.createSymbolicLink(atPath: terraform, withDestinationPath: beside)
        out = try Spawn.run([beside, "--uninstall"], environment: h.environment, timeout: 20)
        #expect(out.status == 0 && out.stdout.contains("removed \(terraform)\n") && !exists(terraform), "\(out.stdout) \(out.stderr)")
        // Not this kc's: left, and named.
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: terraform))
        try FileManager.default.createSymbolicLink(atPath: tofu, withDestinationPath: "/bin/true")
        out = try h.kc(["terraform-credentials", "--uninstall"])
        #expect(out.status == 0 && !out.stdout.contains("removed"), "\(out.stdout)")
        #expect(out.stderr.contains("left \(terraform): it is not a link") && out.stderr.contains("left \(tofu): it leads to /bin/true"), "\(out.stderr)")
        #expect(try String(contentsOfFile: terraform, encoding: .utf8) == "#!/bin/sh\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: tofu) == "/bin/true")
    }
}
