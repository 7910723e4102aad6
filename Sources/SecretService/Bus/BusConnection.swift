internal import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// A method call as the provider sees it: who sent it, to which object and method, and its
/// arguments already read (`BusMessage`).
package struct BusCall {
    /// The sd-bus message, for the reply.
    let message: OpaquePointer
    package let path: String
    package let interface: String
    package let member: String
    /// The sender's unique bus name (":1.42").
    package let sender: String
    package let arguments: [BusValue]
}

/// One connection to a bus through sd-bus (libsystemd): the well-known name, method calls
/// under one object prefix, replies and signals, and a single-threaded loop with a tick for
/// timers. Everything runs on the thread that calls `run`.
package final class BusConnection {
    private var bus: OpaquePointer?
    private var slots: [OpaquePointer?] = []
    private var handler: ((BusCall) -> Void)?
    private var departed: ((String) -> Void)?
    private var nameLost: (() -> Void)?
    /// The well-known name whose loss `nameLost` reports.
    private var watchedName: String?
    /// The uids of the clients seen so far (a unique name is never reused on a bus).
    private var uids: [String: uid_t] = [:]

    /// Connects to the bus at `address`, or to the session bus (`DBUS_SESSION_BUS_ADDRESS`,
    /// else `$XDG_RUNTIME_DIR/bus`) when nil.
    package init(address: String?) throws(BusError) {
        var b: OpaquePointer?
        if let address {
            guard sd_bus_new(&b) >= 0, let made = b else { throw .failed("cannot create a bus connection") }
            bus = made
            let r = address.withCString { sd_bus_set_address(made, $0) }
            guard r >= 0, sd_bus_set_bus_client(made, 1) >= 0 else { throw .failed("the bus address \(address) is not valid") }
            let started = sd_bus_start(made)
            guard started >= 0 else { throw .failed("cannot connect to the bus at \(address): \(Self.describe(started))") }
        } else {
            let r = sd_bus_open_user(&b)
            guard r >= 0, let made = b else {
                throw .failed("cannot connect to the session bus: \(Self.describe(r)) (is DBUS_SESSION_BUS_ADDRESS set?)")
            }
            bus = made
        }
    }

    deinit {
        for slot in slots { sd_bus_slot_unref(slot) }
        if let bus { sd_bus_flush_close_unref(bus) }
    }

    /// A readable errno text for a negative sd-bus result.
    static func describe(_ r: Int32) -> String { String(cString: strerror(-r)) }

    /// This connection's unique name.
    package var uniqueName: String {
        var name: UnsafePointer<CChar>?
        guard let bus, sd_bus_get_unique_name(bus, &name) >= 0, let name else { return "" }
        return String(cString: name)
    }

    /// Owns `name`. Another owner is an error naming it, unless `replace` and it allowed
    /// replacement. kc does not allow it in turn: on a bus that lets other users connect,
    /// one of them could otherwise take the name from the running provider and receive
    /// this user's secrets from their clients (docs/secret-service.md).
    package func requestName(_ name: String, replace: Bool) throws(BusError) {
        guard let bus else { return }
        let flags: UInt64 = replace ? kc_bus_name_replace_existing() : 0
        let r = name.withCString { sd_bus_request_name(bus, $0, flags) }
        if r == -EEXIST {
            throw BusError("org.freedesktop.DBus.Error.AddressInUse", "\(name) is already owned by \(ownerDescription(of: name))")
        }
        guard r >= 0 else { throw .failed("cannot own \(name): \(Self.describe(r))") }
    }

    /// The uid of the connection that owns `name`, as the bus established it; nil when
    /// nobody owns it or the bus does not say.
    package func ownerUID(of name: String) -> UInt32? {
        guard let owner = try? call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", [.string(name)]).first?.string,
            case .uint32(let uid)? = try? call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                "GetConnectionUnixUser", [.string(owner)]
            ).first
        else { return nil }
        return uid
    }

    /// "gnome-keyring-daemon (pid 1234)" for the owner of a name, as far as the bus says,
    /// with its uid when that is not this process's ("python3 (pid 99, uid 65534)").
    package func ownerDescription(of name: String) -> String {
        guard let owner = try? call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", [.string(name)]).first?.string
        else {
            return "another program"
        }
        let uid = ownerUID(of: name).flatMap { $0 == getuid() ? nil : $0 }
        let foreign = uid.map { ", uid \($0)" } ?? ""
        guard
            case .uint32(let pid)? = try? call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                "GetConnectionUnixProcessID", [.string(owner)]
            ).first
        else {
            return "the bus client \(owner)" + (uid.map { " (uid \($0))" } ?? "")
        }
        var comm = [UInt8](repeating: 0, count: 64)
        let fd = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        var program = "pid \(pid)\(foreign)"
        if fd >= 0 {
            let n = read(fd, &comm, comm.count)
            close(fd)
            if n > 0 {
                program = String(decoding: comm[0..<n], as: UTF8.self).trimmingNewline() + " (pid \(pid)\(foreign))"
            }
        }
        return program
    }

    /// Calls a method on another bus client and returns its reply's arguments.
    package func call(
        _ destination: String, _ path: String, _ interface: String, _ member: String,
        _ arguments: [BusValue]
    ) throws(BusError) -> [BusValue] {
        guard let bus else { throw .failed("not connected") }
        var m: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &m, destination, path, interface, member) >= 0, let m else {
            throw .failed("cannot build a call")
        }
        defer { sd_bus_message_unref(m) }
        try BusMessage.append(arguments, to: m)
        var error = sd_bus_error()
        var reply: OpaquePointer?
        let r = sd_bus_call(bus, m, 5_000_000, &error, &reply)
        defer { sd_bus_error_free(&error); if let reply { sd_bus_message_unref(reply) } }
        guard r >= 0, let reply else {
            throw BusError(
                error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed",
                error.message.map { String(cString: $0) } ?? Self.describe(r))
        }
        return try BusMessage.arguments(of: reply)
    }

    /// Delivers every method call to an object at or under `prefix` to `handler`, which
    /// must answer each with `reply` or `replyError`.
    package func serve(under prefix: String, _ handler: @escaping (BusCall) -> Void) throws(BusError) {
        self.handler = handler
        var slot: OpaquePointer?
        let me = Unmanaged.passUnretained(self).toOpaque()
        let r = sd_bus_add_fallback(
            bus, &slot, prefix,
            { m, userdata, _ in
                guard let m, let userdata else { return 0 }
                let connection = Unmanaged<BusConnection>.fromOpaque(userdata).takeUnretainedValue()
                return connection.dispatch(m)
            }, me)
        guard r >= 0 else { throw .failed("cannot serve \(prefix): \(Self.describe(r))") }
        slots.append(slot)
    }

    /// Calls `departed` with the unique name of every client that leaves the bus, and
    /// `lost` when another program takes the well-known name `name` from this one.
    package func watch(name: String, departed: @escaping (String) -> Void, lost: @escaping () -> Void) throws(BusError) {
        self.departed = departed
        self.nameLost = lost
        watchedName = name
        var slot: OpaquePointer?
        let me = Unmanaged.passUnretained(self).toOpaque()
        let r = sd_bus_match_signal(
            bus, &slot, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
            "NameOwnerChanged",
            { m, userdata, _ in
                guard let m, let userdata else { return 0 }
                let connection = Unmanaged<BusConnection>.fromOpaque(userdata).takeUnretainedValue()
                connection.ownerChanged(m)
                return 0
            }, me)
        guard r >= 0 else { throw .failed("cannot watch the bus: \(Self.describe(r))") }
        slots.append(slot)
        var lostSlot: OpaquePointer?
        let r2 = sd_bus_match_signal(
            bus, &lostSlot, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
            "NameLost",
            { m, userdata, _ in
                guard let m, let userdata, BusConnection.isFromTheBus(m) else { return 0 }
                let connection = Unmanaged<BusConnection>.fromOpaque(userdata).takeUnretainedValue()
                guard let args = try? BusMessage.arguments(of: m), args.first?.string == connection.watchedName else { return 0 }
                connection.nameLost?()
                return 0
            }, me)
        guard r2 >= 0 else { throw .failed("cannot watch the bus: \(Self.describe(r2))") }
        slots.append(lostSlot)
    }

    /// Whether the bus itself sent `m`. sd-bus delivers a signal sent straight to this
    /// connection by any client (another user's too) to a match on the bus's sender name;
    /// the bus writes every message's true sender, and only its own is org.freedesktop.DBus.
    static func isFromTheBus(_ m: OpaquePointer) -> Bool {
        guard let sender = sd_bus_message_get_sender(m) else { return false }
        return String(cString: sender) == "org.freedesktop.DBus"
    }

    private func ownerChanged(_ m: OpaquePointer) {
        guard Self.isFromTheBus(m), let args = try? BusMessage.arguments(of: m), args.count == 3,
            let name = args[0].string, let newOwner = args[2].string, name.hasPrefix(":"), newOwner.isEmpty
        else { return }
        uids[name] = nil
        departed?(name)
    }

    private func dispatch(_ m: OpaquePointer) -> Int32 {
        guard let handler else { return 0 }
        func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
        let path = text(sd_bus_message_get_path(m)), interface = text(sd_bus_message_get_interface(m))
        let member = text(sd_bus_message_get_member(m)), sender = text(sd_bus_message_get_sender(m))
        guard sd_bus_message_is_method_call(m, nil, nil) > 0 else { return 0 }
        guard senderUID(m, sender) == getuid() else {
            replyError(to: m, .accessDenied("the kc Secret Service answers only its own user"))
            return 1
        }
        let arguments: [BusValue]
        do {
            arguments = try BusMessage.arguments(of: m)
        } catch {
            replyError(to: m, error)
            return 1
        }
        handler(BusCall(message: m, path: path, interface: interface, member: member, sender: sender, arguments: arguments))
        return 1
    }

    /// The sender's effective uid, asked of the bus once per client.
    private func senderUID(_ m: OpaquePointer, _ sender: String) -> uid_t? {
        if let known = uids[sender] { return known }
        var creds: OpaquePointer?
        guard sd_bus_query_sender_creds(m, kc_bus_creds_euid(), &creds) >= 0, let creds else { return nil }
        defer { sd_bus_creds_unref(creds) }
        var uid: uid_t = 0
        guard sd_bus_creds_get_euid(creds, &uid) >= 0 else { return nil }
        if !sender.isEmpty { uids[sender] = uid }
        return uid
    }

    /// Answers `call` with `values`.
    package func reply(_ call: BusCall, _ values: [BusValue]) { reply(to: call.message, values) }

    /// Answers `call` with an error.
    package func replyError(_ call: BusCall, _ error: BusError) { replyError(to: call.message, error) }

    private func reply(to m: OpaquePointer, _ values: [BusValue]) {
        var r: OpaquePointer?
        guard sd_bus_message_new_method_return(m, &r) >= 0, let r else { return }
        defer { sd_bus_message_unref(r) }
        do {
            try BusMessage.append(values, to: r)
        } catch {
            replyError(to: m, error)
            return
        }
        _ = sd_bus_send(bus, r, nil)
    }

    private func replyError(to m: OpaquePointer, _ error: BusError) {
        var e = sd_bus_error()
        _ = sd_bus_error_set(&e, error.name, error.message)
        _ = sd_bus_reply_method_error(m, &e)
        sd_bus_error_free(&e)
    }

    /// Emits a signal from `path`.
    package func signal(_ path: String, _ interface: String, _ member: String, _ values: [BusValue]) {
        var m: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &m, path, interface, member) >= 0, let m else { return }
        defer { sd_bus_message_unref(m) }
        guard (try? BusMessage.append(values, to: m)) != nil else { return }
        _ = sd_bus_send(bus, m, nil)
    }

    /// Serves until `stop` returns true, calling `tick` at least every `interval()` seconds
    /// (prompts waiting for an unlock, timeouts).
    package func run(interval: () -> Double, tick: () -> Void, stop: () -> Bool) throws(BusError) {
        guard let bus else { return }
        while !stop() {
            var r: Int32
            repeat {
                r = sd_bus_process(bus, nil)
                if r < 0 {
                    if r == -ECONNRESET || r == -ENOTCONN { throw .failed("the bus went away") }
                    throw .failed("the bus connection failed: \(Self.describe(r))")
                }
            } while r > 0 && !stop()
            tick()
            if stop() { break }
            let w = sd_bus_wait(bus, UInt64(interval() * 1_000_000))
            if w < 0 && w != -EINTR { throw .failed("the bus connection failed: \(Self.describe(w))") }
        }
        _ = sd_bus_flush(bus)
    }
}

extension String {
    /// Without its trailing newline, if it has one.
    func trimmingNewline() -> String { hasSuffix("\n") ? String(dropLast()) : self }
}
