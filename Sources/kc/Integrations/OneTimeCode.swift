import KeychainCore
import KeychainFormats
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The current one-time code of an item holding an `otpauth://` URI: what `kc totp` prints
/// and a `kc://…?totp` reference gives (`kc read`, `kc run`, `kc inject`).
///
/// Where it looks: for a service or server S, the item `otpauth/S` first (where `kc import`
/// and `kc add --totp` keep a login's seed, beside its password), then S itself. A HOTP
/// item's counter advances by compare-and-swap: the new URI is written only if the item's
/// modification date (which every write moves forward) is still the one read, inside the
/// update's own write transaction; a writer that lost the race reads again. So two
/// concurrent calls never give the same HOTP code.
///
///     let results = try session.copyMany(OneTimeCode.candidates(query))
///     let code = try OneTimeCode.code(results[...], in: session, label: "-s github.com", at: OneTimeCode.now())
enum OneTimeCode {
    /// A code, with what a person may want to know about it.
    struct Code {
        /// The digits (or Steam letters).
        var text: String
        /// Seconds until a TOTP code changes; nil for HOTP.
        var secondsLeft: Int64?
        /// The TOTP time step in seconds; nil for HOTP.
        var period: Int64? = nil
        /// Whether the query matched a second item (the first one's code is given).
        var ambiguous = false
    }

    /// The prefix of the service under which seeds are kept beside a login.
    static let servicePrefix = "otpauth/"
    /// The variable that fixes the time codes are computed for (Unix seconds).
    static let timeVariable = "KC_TOTP_TIME"
    /// How often a HOTP counter update is tried against concurrent writers.
    static let maxAttempts = 200

    /// The searches for an item's seed, in order: `otpauth/S` (a generic password, for a
    /// generic or internet query naming S), then the query itself. Each asks for the data,
    /// the attributes and the persistent reference of at most two items.
    static func candidates(_ query: [String: Any]) -> [[String: Any]] {
        var plain = query
        plain[kSecReturnData] = true
        plain[kSecReturnAttributes] = true
        plain[kSecReturnPersistentRef] = true
        plain[kSecMatchLimit] = 2
        let isInternet = query[kSecClass] as? String == kSecClassInternetPassword
        guard let name = (isInternet ? query[kSecAttrServer] : query[kSecAttrService]) as? String,
            !name.isEmpty, !name.hasPrefix(servicePrefix)
        else { return [plain] }
        var sibling: [String: Any] = [kSecClass: kSecClassGenericPassword, kSecAttrService: servicePrefix + name]
        if isInternet {
            if let account = query[kSecAttrAccount] { sibling[kSecAttrAccount] = account }
            for key in [kSecReturnData, kSecReturnAttributes, kSecReturnPersistentRef, kSecMatchLimit] { sibling[key] = plain[key] }
        } else {
            sibling = plain
            sibling[kSecAttrService] = servicePrefix + name
        }
        return [sibling, plain]
    }

    /// The time codes are for: `KC_TOTP_TIME` (Unix seconds) when set, else the clock.
    /// The variable changes only which code is computed, never what may be read: whoever
    /// can set it can read the seed itself (`kc find -w`) and compute any code from it.
    /// - Throws: errSecParam when the variable is not a whole number of seconds from 0.
    static func now() throws -> Int64 {
        if let fixed = Environment.get(timeVariable) {
            guard let t = Int64(fixed), t >= 0 else {
                throw KeychainError(
                    errSecParam, "\(timeVariable) must be Unix time in whole seconds (0 or more), not \(JSON.string(fixed))",
                    hint: "unset it to use the clock")
            }
            return t
        }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec)
    }

    /// The code of the first candidate that found an item (`candidates` order), advancing
    /// its counter when it is HOTP. - Parameters: `results` answer `candidates(query)`;
    /// `label` names the query in errors.
    /// - Throws: errSecItemNotFound when no candidate matched; errSecParam when the item's
    ///   secret is not a valid otpauth URI (the fault named, never the secret); what the
    ///   keychain throws.
    static func code(
        _ results: ArraySlice<Result<Any?, KeychainError>>, in session: KeychainSession,
        label: String, at time: Int64
    ) throws -> Code {
        var found: [[String: Any]]?
        for result in results {
            switch result {
            case .success(let value):
                found = value as? [[String: Any]] ?? (value as? [String: Any]).map { [$0] }
            case .failure(let error) where error.status == errSecItemNotFound:
                continue
            case .failure(let error):
                throw error
            }
            if found != nil { break }
        }
        guard let items = found, let item = items.first else {
            throw KeychainError(
                errSecItemNotFound, "\(label): no one-time-code seed matches it in \(session.path)",
                hint: "seeds are looked for under service otpauth/SERVICE, then SERVICE; store one with `kc add -s SERVICE -a ACCOUNT --totp`")
        }
        var code = try compute(item, in: session, label: label, at: time)
        code.ambiguous = items.count > 1
        return code
    }

    /// The code of one found item (its data, attributes and persistent reference).
    private static func compute(_ found: [String: Any], in session: KeychainSession, label: String, at time: Int64) throws -> Code {
        var item = found
        for attempt in 0..<maxAttempts {
            var uri = Array(item[kSecValueData] as? Data ?? Data())
            defer { Sodium.wipe(&uri) }
            let seed = try parse(uri, label: label)
            guard case .hotp(let counter) = seed.kind else {
                var period: Int64?
                if case .totp(let step) = seed.kind { period = step }
                return Code(text: seed.code(at: time), secondsLeft: seed.secondsLeft(at: time), period: period)
            }
            guard counter < UInt64.max, let ref = item[kSecValuePersistentRef], let modified = item[kSecAttrModificationDate] else {
                throw KeychainError(errSecParam, "\(label): the HOTP counter cannot advance past \(counter)")
            }
            var next = OneTimeSeed.settingCounter(uri, to: counter + 1)
            defer { Sodium.wipe(&next) }
            do {
                try session.update(
                    [kSecValuePersistentRef: ref, kSecAttrModificationDate: modified],
                    [kSecValueData: Data(next)])
                return Code(text: seed.code(counter: counter), secondsLeft: nil)
            } catch let error as KeychainError where error.status == errSecItemNotFound {
                // Another process used a code meanwhile (or the item went): read it again.
                if attempt > 2 { usleep(useconds_t(1_000 + Int(Sodium.randomBytes(1)[0]) * 40)) }
                let again = try session.copyMatching([
                    kSecValuePersistentRef: ref, kSecReturnData: true,
                    kSecReturnAttributes: true, kSecReturnPersistentRef: true
                ])
                guard let dictionary = again as? [String: Any] else {
                    throw KeychainError(errSecItemNotFound, "\(label): the item went while its HOTP counter was advanced")
                }
                item = dictionary
            }
        }
        throw KeychainError(
            errSecNotAvailable, "\(label): other processes kept changing the HOTP item; its counter was not advanced",
            hint: "try again")
    }

    /// The seed in an item's secret. - Throws: errSecParam naming the fault.
    private static func parse(_ uri: [UInt8], label: String) throws -> OneTimeSeed {
        guard OneTimeSeed.isURI(uri) else {
            throw KeychainError(
                errSecParam, "\(label): the item's secret is not an otpauth:// URI",
                hint: "store a seed with `kc add -s SERVICE -a ACCOUNT --totp` (it is kept as service otpauth/SERVICE)")
        }
        do {
            return try OneTimeSeed(uri: uri)
        } catch let error as KeychainError {
            throw KeychainError(error.status, "\(label): \(error.message)", hint: error.hint)
        }
    }
}
