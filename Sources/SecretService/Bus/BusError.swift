/// A D-Bus error reply: a well-known name and a message for the client. Never carries a
/// secret or an attribute value.
package struct BusError: Error, Equatable, Sendable {
    package var name: String
    package var message: String

    package init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    /// Wrong argument types or values (garbage from a client).
    package static func invalidArgs(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.InvalidArgs", message) }
    /// An operation that failed for a reason of kc's own.
    package static func failed(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.Failed", message) }
    /// An algorithm or operation kc does not offer.
    package static func notSupported(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.NotSupported", message) }
    /// A call from another user.
    package static func accessDenied(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.AccessDenied", message) }
    /// A method the object's interface does not have.
    package static func unknownMethod(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.UnknownMethod", message) }
    /// A path that names no object.
    package static func unknownObject(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.UnknownObject", message) }
    /// A property the interface does not have.
    package static func unknownProperty(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.UnknownProperty", message) }
    /// A property that cannot be set.
    package static func propertyReadOnly(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.PropertyReadOnly", message) }

    // The Secret Service API's own errors (specification 0.2, "Errors").

    /// The object must be unlocked first.
    package static func isLocked(_ message: String) -> BusError { BusError("org.freedesktop.Secret.Error.IsLocked", message) }
    /// No session with that path is open for this client.
    package static func noSession(_ message: String) -> BusError { BusError("org.freedesktop.Secret.Error.NoSession", message) }
    /// No such item or collection.
    package static func noSuchObject(_ message: String) -> BusError { BusError("org.freedesktop.Secret.Error.NoSuchObject", message) }
}
