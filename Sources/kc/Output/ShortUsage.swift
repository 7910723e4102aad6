/// What `kc` alone prints: as git and pass do, a short usage on stderr and exit 2 (a
/// script that ran `kc` with its arguments lost fails instead of reading the full help as
/// its output); `kc --help` and `kc help` print the full help and exit 0.
enum ShortUsage {
    /// The common commands, and where the rest are.
    static let text = """
        usage: kc <command> [options]

          kc add -s SERVICE -a ACCOUNT      store a secret (from a prompt or stdin)
          kc find -s SERVICE -a ACCOUNT -w  print a secret
          kc list                           list the items
          kc unlock | kc lock               unlock or lock the keychain

        kc --help lists every command; kc help COMMAND, or kc COMMAND --help, says more.

        """

    /// Prints the short usage on stderr and exits 2.
    static func fail() -> Never {
        Report.err(text)
        Startup.exit(2)
    }
}
