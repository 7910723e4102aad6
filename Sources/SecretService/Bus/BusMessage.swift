internal import CSystemd

/// Reads a message's arguments into `BusValue`s and appends `BusValue`s to a message, both
/// through sd-bus's typed calls (sd-bus checks the wire format; this only walks the types).
enum BusMessage {
    /// Every argument of `message`, in order. A unix-fd argument, or anything sd-bus cannot
    /// read, is an InvalidArgs error (the caller replies with it and goes on serving).
    static func arguments(of message: OpaquePointer) throws(BusError) -> [BusValue] {
        var values: [BusValue] = []
        while let value = try next(message) { values.append(value) }
        return values
    }

    /// The next value at the reading position, or nil at the end of the current container.
    private static func next(_ m: OpaquePointer) throws(BusError) -> BusValue? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let r = sd_bus_message_peek_type(m, &type, &contents)
        guard r >= 0 else { throw .invalidArgs("unreadable arguments") }
        if r == 0 { return nil }
        let inner = contents.map { String(cString: $0) } ?? ""
        return try read(m, type: UInt8(bitPattern: type), contents: inner)
    }

    private static func read(_ m: OpaquePointer, type: UInt8, contents: String) throws(BusError) -> BusValue {
        func basic<T>(_ initial: T) throws(BusError) -> T {
            var value = initial
            guard sd_bus_message_read_basic(m, CChar(bitPattern: type), &value) >= 0 else { throw .invalidArgs("unreadable arguments") }
            return value
        }
        switch type {
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            var pointer: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(m, CChar(bitPattern: type), &pointer) >= 0, let pointer else {
                throw .invalidArgs("unreadable arguments")
            }
            let text = String(cString: pointer)
            if type == UInt8(ascii: "o") { return .objectPath(text) }
            return type == UInt8(ascii: "g") ? .signature(text) : .string(text)
        case UInt8(ascii: "b"): return .boolean(try basic(Int32(0)) != 0)
        case UInt8(ascii: "y"): return .byte(try basic(UInt8(0)))
        case UInt8(ascii: "n"): return .int16(try basic(Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try basic(UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try basic(Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try basic(UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try basic(Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try basic(UInt64(0)))
        case UInt8(ascii: "d"): return .double(try basic(Double(0)))
        case UInt8(ascii: "a") where contents == "y":
            var pointer: UnsafeRawPointer?
            var size = 0
            guard sd_bus_message_read_array(m, CChar(bitPattern: UInt8(ascii: "y")), &pointer, &size) >= 0 else {
                throw .invalidArgs("unreadable arguments")
            }
            guard let pointer, size > 0 else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: size)))
        case UInt8(ascii: "a"), UInt8(ascii: "r"), UInt8(ascii: "v"), UInt8(ascii: "e"):
            guard sd_bus_message_enter_container(m, CChar(bitPattern: type), contents) > 0 else {
                throw .invalidArgs("unreadable arguments")
            }
            var items: [BusValue] = []
            while let item = try next(m) { items.append(item) }
            guard sd_bus_message_exit_container(m) >= 0 else { throw .invalidArgs("unreadable arguments") }
            switch type {
            case UInt8(ascii: "v"):
                guard items.count == 1 else { throw .invalidArgs("a variant holds one value") }
                return .variant(items[0])
            case UInt8(ascii: "r"): return .structure(items)
            case UInt8(ascii: "e"): return .structure(items)   // an entry, turned into one below
            default:
                if contents.hasPrefix("{") {
                    let inner = contents.dropFirst().dropLast()
                    let keySignature = String(inner.prefix(1))
                    var entries: [BusValue.DictionaryEntry] = []
                    for item in items {
                        guard case .structure(let pair) = item, pair.count == 2 else { throw .invalidArgs("a malformed dictionary") }
                        entries.append(.init(pair[0], pair[1]))
                    }
                    return .dictionary(key: keySignature, value: String(inner.dropFirst()), entries)
                }
                return .array(element: contents, items)
            }
        default:
            throw .invalidArgs("arguments of type '\(Character(Unicode.Scalar(type)))' are not accepted")
        }
    }

    /// Appends `values` to `message` (a method return or a signal being built).
    static func append(_ values: [BusValue], to m: OpaquePointer) throws(BusError) {
        for value in values { try append(value, to: m) }
    }

    private static func append(_ value: BusValue, to m: OpaquePointer) throws(BusError) {
        func check(_ r: Int32) throws(BusError) { if r < 0 { throw .failed("could not build the reply (\(-r))") } }
        func basic<T>(_ type: Unicode.Scalar, _ v: T) throws(BusError) {
            var copy = v
            try check(sd_bus_message_append_basic(m, CChar(UInt8(ascii: type)), &copy))
        }
        func open(_ type: Unicode.Scalar, _ contents: String) throws(BusError) {
            try check(sd_bus_message_open_container(m, CChar(UInt8(ascii: type)), contents))
        }
        switch value {
        case .string(let s): try check(s.withCString { sd_bus_message_append_basic(m, CChar(UInt8(ascii: "s")), $0) })
        case .objectPath(let s): try check(s.withCString { sd_bus_message_append_basic(m, CChar(UInt8(ascii: "o")), $0) })
        case .signature(let s): try check(s.withCString { sd_bus_message_append_basic(m, CChar(UInt8(ascii: "g")), $0) })
        case .boolean(let b): try basic("b", Int32(b ? 1 : 0))
        case .byte(let v): try basic("y", v)
        case .int16(let v): try basic("n", v)
        case .uint16(let v): try basic("q", v)
        case .int32(let v): try basic("i", v)
        case .uint32(let v): try basic("u", v)
        case .int64(let v): try basic("x", v)
        case .uint64(let v): try basic("t", v)
        case .double(let v): try basic("d", v)
        case .bytes(let b):
            try check(b.withUnsafeBytes { sd_bus_message_append_array(m, CChar(UInt8(ascii: "y")), $0.baseAddress, $0.count) })
        case .array(let element, let items):
            try open("a", element)
            for item in items { try append(item, to: m) }
            try check(sd_bus_message_close_container(m))
        case .dictionary(let key, let valueSignature, let entries):
            try open("a", "{" + key + valueSignature + "}")
            for entry in entries {
                try open("e", key + valueSignature)
                try append(entry.key, to: m)
                try append(entry.value, to: m)
                try check(sd_bus_message_close_container(m))
            }
            try check(sd_bus_message_close_container(m))
        case .structure(let fields):
            try open("r", fields.map(\.signature).joined())
            for field in fields { try append(field, to: m) }
            try check(sd_bus_message_close_container(m))
        case .variant(let inner):
            try open("v", inner.signature)
            try append(inner, to: m)
            try check(sd_bus_message_close_container(m))
        }
    }
}
