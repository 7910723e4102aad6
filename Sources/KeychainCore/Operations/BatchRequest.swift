/// Operation 8, `copyMany`: several SecItemCopyMatching queries in one agent round trip
/// (`kc run` resolves all its references at once); each succeeds or fails on its own.
public struct BatchRequest {
    /// The search queries, answered in order.
    public var queries: [[String: Any]]

    /// A batch of `queries`.
    public init(queries: [[String: Any]]) { self.queries = queries }
}
