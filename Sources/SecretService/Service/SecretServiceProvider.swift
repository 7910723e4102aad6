import KeychainCore
import KeychainClient
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// The Secret Service provider (freedesktop.org Secret Service API 0.2) on one bus
/// connection: it owns `org.freedesktop.secrets`, serves the Service, Collection, Item,
/// Session and Prompt objects under `/org/freedesktop/secrets`, and answers every call from
/// the kc agent's keychains through `SecretStore`. It holds no keys. Single-threaded: every
/// call, signal and prompt runs on the thread that calls `run`.
package final class SecretServiceProvider {
    /// The well-known name of the Secret Service.
    package static let busName = "org.freedesktop.secrets"
    static let serviceInterface = "org.freedesktop.Secret.Service"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let itemInterface = "org.freedesktop.Secret.Item"
    static let sessionInterface = "org.freedesktop.Secret.Session"
    static let promptInterface = "org.freedesktop.Secret.Prompt"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let introspectableInterface = "org.freedesktop.DBus.Introspectable"

    let bus: BusConnection
    let store: SecretStore
    var collections = KeychainCollections()
    var sessions: [String: ClientSession] = [:]
    var prompts: [String: PendingPrompt] = [:]
    /// Searches that met a locked keychain, by the id of the placeholder item returned for
    /// them in `locked`: unlocking it completes with the items the search then finds.
    var lockedSearches: [String: (collection: String, attributes: [String: String])] = [:]
    /// Keychains whose kept password the agent refused lately, and when to try again
    /// (`PendingPrompt.now()`): each try costs the agent an Argon2, and waiting prompts
    /// would try at every tick (`unlockFromDefault`).
    var refusedUntil: [String: Double] = [:]
    private var counter: UInt64 = 0
    /// How long a prompt waits for the keychain to be unlocked before it is dismissed.
    let promptTimeout: Double
    /// How prompts reach the user: pinentry's program and the terminal it draws on (nil:
    /// a desktop's pinentry window when DISPLAY or WAYLAND_DISPLAY is set). No program,
    /// or neither a terminal nor a display: prompts wait for `kc unlock` only.
    let pinentry: (program: String, tty: String?)?
    /// Why nobody can answer a prompt (`NobodyToAsk`): prompts are then dismissed at once.
    /// nil when pinentry can reach someone, or when prompts wait for `kc unlock` by choice.
    let nobodyToAsk: String?
    /// Whether the provider has said once on stderr why it dismissed a prompt at once.
    private var saidNobodyToAsk = false
    private var stopping = false

    /// A provider on `bus`; nothing is served before `start`.
    package init(
        bus: BusConnection, store: SecretStore = SecretStore(), promptTimeout: Double = 60,
        pinentry: String? = nil, tty: String? = nil
    ) {
        self.bus = bus
        self.store = store
        self.promptTimeout = promptTimeout
        var display = false
        for name in ["DISPLAY", "WAYLAND_DISPLAY"] {
            if let value = getenv(name), value.pointee != 0 { display = true }
        }
        if let pinentry, tty != nil || display { self.pinentry = (pinentry, tty) } else { self.pinentry = nil }
        nobodyToAsk = NobodyToAsk.reason(pinentry: pinentry, tty: tty)
    }

    /// Owns the name and starts serving. - Throws: AddressInUse naming the current owner
    /// when another provider has the name (and `replace` is false or not allowed).
    package func start(replace: Bool) throws(BusError) {
        // Every path, so that one naming nothing is NoSuchObject, as clients expect (sd-bus's
        // own reply, UnknownObject, is no error SecretStorage or libsecret looks for).
        try bus.serve(under: "/") { [unowned self] call in self.handle(call) }
        try bus.watch(
            name: Self.busName, departed: { [unowned self] name in self.clientLeft(name) },
            lost: { [unowned self] in self.stopping = true })
        try bus.requestName(Self.busName, replace: replace)
    }

    /// Serves until the bus goes away or another provider takes the name.
    package func run() throws(BusError) {
        try bus.run(
            interval: { prompts.values.contains { $0.dialog != nil } ? 0.05 : prompts.values.contains { $0.deadline != nil } ? 0.2 : 30 },
            tick: { tickPrompts() }, stop: { stopping })
    }

    /// A fresh path element for a session or prompt.
    func nextID() -> String {
        counter += 1
        return String(counter)
    }

    /// Whether the path element `a` was handed out before `b` (`nextID`, with or without a
    /// prefix such as `locked`): shorter first, then by text.
    static func isOlder(_ a: String, than b: String) -> Bool { a.count < b.count || a.count == b.count && a < b }

    // MARK: Dispatch

    private func handle(_ call: BusCall) {
        do {
            bus.reply(call, try route(call))
        } catch {
            bus.replyError(call, error)
        }
    }

    private func route(_ call: BusCall) throws(BusError) -> [BusValue] {
        let target = ObjectPath(call.path)
        if call.member == "Introspect", call.interface.isEmpty || call.interface == Self.introspectableInterface {
            return [.string(Introspection.xml(for: target, children: children(of: call.path)))]
        }
        if call.interface == Self.propertiesInterface {
            guard let target else { throw .noSuchObject("no object at \(call.path)") }
            return try properties(call, target)
        }
        switch target {
        case .service?:
            try expect(call, Self.serviceInterface)
            return try serviceMethod(call)
        case .collection(let id)?:
            try expect(call, Self.collectionInterface)
            return try collectionMethod(call, try collection(id))
        case .alias(let name)?:
            try expect(call, Self.collectionInterface)
            guard let found = collections.alias(name) else { throw .noSuchObject("no collection has the alias \(name)") }
            return try collectionMethod(call, found)
        case .item(let collectionID, let id)?:
            try expect(call, Self.itemInterface)
            return try itemMethod(call, try item(collectionID, id))
        case .session(let id)?:
            try expect(call, Self.sessionInterface)
            guard call.member == "Close" else { throw .unknownMethod("Session has no method \(call.member)") }
            if let session = sessions[id], session.owner == call.sender { sessions[id] = nil }
            return []
        case .prompt(let id)?:
            try expect(call, Self.promptInterface)
            return try promptMethod(call, id)
        case nil:
            throw .noSuchObject("no object at \(call.path)")
        }
    }

    private func expect(_ call: BusCall, _ interface: String) throws(BusError) {
        guard call.interface.isEmpty || call.interface == interface else {
            throw .unknownMethod("\(call.path) has no interface \(call.interface)")
        }
    }

    /// Child nodes for introspection (so `busctl tree` and d-feet can walk the objects).
    private func children(of path: String) -> [String] {
        switch path {
        case "/": return ["org"]
        case "/org": return ["freedesktop"]
        case "/org/freedesktop": return ["secrets"]
        case ObjectPath.root: return ["collection", "aliases"]
        case ObjectPath.root + "/collection": return collections.all.map(\.id)
        case ObjectPath.root + "/aliases": return ["default"]
        default: return []
        }
    }

    /// The collection with `id`. - Throws: NoSuchObject.
    func collection(_ id: String) throws(BusError) -> KeychainCollections.Collection {
        if let found = collections.collection(id: id) { return found }
        collections.refresh()
        guard let found = collections.collection(id: id) else { throw .noSuchObject("no collection \(id)") }
        return found
    }

    /// The path of a collection's object.
    func path(of collection: KeychainCollections.Collection) -> String { ObjectPath.collection(collection.id).text }

    /// The path of an item's object.
    func path(of ref: [UInt8], in collection: KeychainCollections.Collection) -> String {
        ObjectPath.item(collection: collection.id, id: ObjectPath.hex(ref)).text
    }

    /// A client's session at `path`. - Throws: NoSession when it is not one of the caller's.
    func session(_ path: String, for caller: String) throws(BusError) -> ClientSession {
        guard case .session(let id)? = ObjectPath(path), let session = sessions[id], session.owner == caller else {
            throw .noSession("no session \(path) is open for this client; call OpenSession first")
        }
        return session
    }

    // MARK: Clients and prompts

    private func clientLeft(_ name: String) {
        sessions = sessions.filter { $0.value.owner != name }
        prompts = prompts.filter { $0.value.owner != name }
    }

    /// Completes the prompts whose keychains are now unlocked (unlocking those the default
    /// keychain keeps the password of), and dismisses those whose time is up. Asks the agent
    /// once, only while some prompt waits.
    private func tickPrompts() {
        let waiting = prompts.values.filter { $0.deadline != nil }
        guard !waiting.isEmpty else { return }
        var held = store.heldPaths()
        let now = PendingPrompt.now()
        for prompt in waiting {
            if let dialog = prompt.dialog, let keychain = prompt.dialogKeychain {
                switch dialog.poll() {
                case .waiting: break
                case .cancelled:
                    complete(prompt, dismissed: true)
                    continue
                case .entered(var typed):
                    prompt.dialog = nil
                    prompt.attempts += 1
                    switch unlock(keychain, typed: &typed) {
                    case .accepted: held.insert(keychain)
                    case .wrong where prompt.attempts < 3: openDialog(prompt, held: held, error: "Wrong password, try again")
                    case .wrong, .unusable: prompt.attempts = 3
                    }
                }
            }
            for keychain in prompt.keychains where !held.contains(keychain) {
                if unlockFromDefault(keychain, held: held) { held.insert(keychain) }
            }
            if prompt.dialog == nil, prompt.attempts > 0, prompt.attempts < 3, !prompt.keychains.allSatisfy(held.contains) {
                openDialog(prompt, held: held, error: nil)
            }
            if prompt.keychains.allSatisfy(held.contains) {
                complete(prompt, dismissed: false)
            } else if let deadline = prompt.deadline, now >= deadline {
                complete(prompt, dismissed: true)
            }
        }
    }

    /// Keeps a new prompt for its client, who has at most `maxPromptsPerClient` waiting:
    /// the oldest is dismissed first (with `Completed`, so nobody waits on it for ever).
    func register(_ prompt: PendingPrompt) {
        let mine = prompts.values.filter { $0.owner == prompt.owner }
        if mine.count >= Self.maxPromptsPerClient, let oldest = mine.min(by: { Self.isOlder($0.id, than: $1.id) }) {
            complete(oldest, dismissed: true)
        }
        prompts[prompt.id] = prompt
    }

    /// Emits `Completed` once, with the result the prompt's kind calls for (`ao` for an
    /// unlock, `o` for a new collection, dismissed or not), and forgets the prompt.
    func complete(_ prompt: PendingPrompt, dismissed: Bool) {
        prompts[prompt.id] = nil
        prompt.dialog?.stop()
        prompt.dialog = nil
        var dismissed = dismissed
        let result: BusValue
        switch prompt.kind {
        case .unlock(let objects):
            result = .objectPaths(dismissed ? [] : objects.flatMap { resolveUnlocked($0) })
        case .createCollection(let name):
            var made = ObjectPath.none
            if !dismissed {
                // Another prompt (or kc) may have made it meanwhile: that one is the answer.
                collections.refresh()
                if let existing = collections.all.first(where: { $0.name == name }) {
                    made = path(of: existing)
                } else if let path = try? createKeychainCollection(name) {
                    made = path
                } else {
                    dismissed = true
                }
            }
            result = .objectPath(made)
        }
        bus.signal(ObjectPath.prompt(prompt.id).text, Self.promptInterface, "Completed", [.boolean(dismissed), .variant(result)])
    }

    /// Hands a typed password to the agent for `keychain`, then wipes it. - Returns: whether
    /// the keychain is now unlocked.
    private func unlock(_ keychain: String, typed: inout [UInt8]) -> TypedPassword {
        defer { Sodium.wipe(&typed) }
        do {
            let password = try SecureBytes(copying: typed, guarded: true)
            try store.unlock(keychain, password: password)
            return .accepted
        } catch let error as BusError where error.name == BusError.isLocked("").name {
            return .wrong
        } catch {
            return .unusable
        }
    }

    /// What became of a password typed into pinentry.
    private enum TypedPassword {
        /// The keychain is unlocked.
        case accepted
        /// The agent said it is the wrong password: ask again.
        case wrong
        /// It could not be used (an agent the provider cannot establish, a damaged file):
        /// asking again would not help; the prompt waits for `kc unlock` or the timeout.
        case unusable
    }

    /// Opens a pinentry dialog for the first keychain the prompt still waits for, when
    /// pinentry can reach the user; otherwise the prompt waits for `kc unlock`.
    private func openDialog(_ prompt: PendingPrompt, held: Set<String>, error: String?) {
        guard let pinentry, prompt.dialog == nil, let keychain = prompt.keychains.first(where: { !held.contains($0) }) else { return }
        let name = collections.all.first { $0.path == keychain }?.name ?? keychain
        // The name may be a client's label: escaped, for pinentry-curses draws it on a terminal.
        let description = "A program asks for the kc keychain \(TerminalSafe.escaped(name)).\nType its password to unlock it, as kc unlock would."
        prompt.dialog = try? PinentryDialog(program: pinentry.program, tty: pinentry.tty, description: description, error: error)
        prompt.dialogKeychain = keychain
    }

    private func promptMethod(_ call: BusCall, _ id: String) throws(BusError) -> [BusValue] {
        guard let prompt = prompts[id], prompt.owner == call.sender else { throw .noSuchObject("no prompt \(id)") }
        switch call.member {
        case "Prompt":
            guard call.arguments.count == 1, call.arguments[0].string != nil else { throw .invalidArgs("Prompt takes (s window-id)") }
            if prompt.deadline == nil, let reason = nobodyToAsk {
                // Dismissed at the tick that follows this reply (completed instead, should
                // the keychain be unlocked by then), as kc exits 36 where it cannot ask.
                prompt.deadline = PendingPrompt.now()
                if !saidNobodyToAsk {
                    saidNobodyToAsk = true
                    let text = NobodyToAsk.dismissNote(reason)
                    _ = text.withCString { write(2, $0, strlen($0)) }
                }
            } else if prompt.deadline == nil {
                prompt.deadline = PendingPrompt.now() + promptTimeout
                openDialog(prompt, held: store.heldPaths(), error: nil)
            }
            return []
        case "Dismiss":
            complete(prompt, dismissed: true)
            return []
        default:
            throw .unknownMethod("Prompt has no method \(call.member)")
        }
    }
}
