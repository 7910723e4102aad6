/// The credential helpers `KC.main` starts before ArgumentParser (they start as fast as `kc
/// find`), in one table read in one place: each by the name of the link kc was started
/// under (`git-credential-kc`), by a subcommand word after `kc` (`kc git-credential`), or
/// both, with what runs before it.
enum CredentialHelpers {
    /// One helper.
    struct Helper: Sendable {
        /// The name of the link to kc that starts it (`make install` makes the link).
        var program: String? = nil
        /// The subcommand of kc that starts it, read after `ArgumentNormaliser` (so a
        /// leading `-k NAME` has moved after it).
        var word: String? = nil
        /// Whether the configuration file is checked before it runs: a bad file stops it,
        /// as it stops every command that reads the file. By its word, kc has checked the
        /// file already unless the line asks for help; then it is checked here.
        var checksConfiguration = true
        /// By its word: not when the line asks for help (`--help`, `-h`), which
        /// ArgumentParser answers from the command's declaration (`kc aws-credentials
        /// --help`, `kc kube-credential --help`).
        var leavesHelpToArgumentParser = false
        /// By its word: only with an argument after it; alone, ArgumentParser says what is
        /// missing.
        var needsAnArgument = false
        /// By its program name with no argument: it prints its own usage, not kc's.
        var ownUsageWhenAlone = false
        /// Runs first, before the configuration file is read (Vault's environment).
        var prepare: (@Sendable () -> Void)? = nil
        /// Runs it on the arguments after the program name or the word; the exit status.
        let run: @Sendable (ArraySlice<String>) -> Int32
    }

    static let table: [Helper] = [
        Helper(program: "git-credential-kc", word: "git-credential", run: GitCredentialHelper.run),
        Helper(program: "docker-credential-kc", word: "docker-credential", run: DockerCredentialHelper.run),
        Helper(program: VaultTokenHelper.program, ownUsageWhenAlone: true, prepare: VaultTokenHelper.recoverEnvironment, run: VaultTokenHelper.run),
        Helper(program: TerraformCredentialsHelper.programName, word: TerraformCredentialsHelper.subcommand, run: TerraformCredentialsHelper.run),
        Helper(word: KubeCredentialHelper.word, leavesHelpToArgumentParser: true, run: KubeCredentialHelper.run),
        Helper(word: "aws-credentials", leavesHelpToArgumentParser: true, needsAnArgument: true, run: AWSCredentialProcess.run)
    ]

    /// The helper started under the program name `name` (the last part of argv[0]).
    static func program(_ name: String) -> Helper? {
        table.first { $0.program == name }
    }

    /// The helper that `kc WORD …` starts, given the normalised words; nil when the
    /// command line is not one (or is left to ArgumentParser).
    static func subcommand(_ arguments: [String], asksForHelp: Bool) -> Helper? {
        guard arguments.count > 1, let helper = table.first(where: { $0.word == arguments[1] }) else { return nil }
        if (helper.leavesHelpToArgumentParser && asksForHelp) || (helper.needsAnArgument && arguments.count < 3) { return nil }
        return helper
    }
}
