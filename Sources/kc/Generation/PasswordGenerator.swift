import KeychainCore

/// Draws a secret from a recipe with libsodium's CSPRNG. Every choice is
/// `randombytes_uniform` (no modulo bias); requirements are met by drawing whole
/// candidates and keeping the first that meets them, so the result is uniform over
/// exactly the strings the rules allow (adjusting single characters would favour some).
///
///     let recipe = try GenerationRequest().recipe()
///     let secret = try PasswordGenerator.generate(recipe)    // SecureBytes: wiped on release
///
/// The secret lives only in the returned `SecureBytes` and in buffers wiped before they
/// are released; the caller prints, stores or copies it and lets it go.
enum PasswordGenerator {
    /// A new secret. - Throws: errSecParam when the recipe's rules were not met within the
    ///   bound (100 times the draws they need on average, so the chance is below e^-100:
    ///   printable ASCII allows no rules that need more than about 4,000), errSecAllocate.
    static func generate(_ recipe: PasswordRecipe) throws -> SecureBytes {
        switch recipe {
        case .characters(let recipe): return try characters(recipe)
        case .words(let recipe): return try words(recipe)
        }
    }

    /// `length` characters, redrawn whole until every required class is present.
    private static func characters(_ recipe: CharacterRecipe) throws -> SecureBytes {
        let secret = try SecureBytes(count: recipe.length)
        let alphabet = recipe.alphabet
        let size = UInt32(alphabet.count)
        let fraction = recipe.satisfyingFraction
        let attempts = fraction >= 1 ? 1 : Int(min(1e8, (100 / max(fraction, 1e-9)).rounded(.up))) + 100
        for _ in 0..<attempts {
            let met = try secret.withUnsafeMutableBytes { buffer in
                for i in 0..<buffer.count { buffer[i] = alphabet[Int(try Sodium.randomUniform(size))] }
                return recipe.isSatisfied(by: UnsafeRawBufferPointer(buffer))
            }
            if met { return secret }
        }
        throw KeychainError(
            errSecParam, "no secret met the rules in \(attempts) draws",
            hint: "make the secret longer or require fewer classes")
    }

    /// `count` words from the EFF list, joined by the separator.
    private static func words(_ recipe: WordRecipe) throws -> SecureBytes {
        let list = EFFWordList.words
        var picks = [Int](repeating: 0, count: recipe.count)
        defer { _ = picks.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        for i in picks.indices { picks[i] = Int(try Sodium.randomUniform(UInt32(list.count))) }
        let length = picks.reduce(0) { $0 + list[$1].count } + recipe.separator.count * (recipe.count - 1)
        let secret = try SecureBytes(count: length)
        secret.withUnsafeMutableBytes { buffer in
            var at = 0
            for (n, pick) in picks.enumerated() {
                if n > 0 {
                    for byte in recipe.separator { buffer[at] = byte; at += 1 }
                }
                for byte in list[pick] { buffer[at] = byte; at += 1 }
            }
        }
        return secret
    }
}
