/// How many keys `ssh-add` may give one agent. A key it gives is checked as it is decoded
/// (`SSHPrivateKey.read`: an ECDSA point off its curve, or a private half that is not the
/// public half's, is refused with SSH_AGENT_FAILURE, as OpenSSH's agent does when it parses
/// one); without that check such a key is listed, and OpenSSH's clients reject the whole
/// listing ("invalid format"), so every key, keychain keys too, would be unusable.
extension SigningKey {
    /// Most keys `ssh-add` may give one agent; more are refused (FAILURE) until some go.
    public static let maximumHeld = 1024
}
