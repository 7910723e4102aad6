/// Which SecItem function a dictionary is for: the rules differ (Apple's `query_applier`,
/// docs/apple-compatibility.md, "Keys and values").
package enum Operation: Sendable {
    case add, copyMatching, update, delete
}
