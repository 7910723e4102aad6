/// What identifies a store's current contents to its connection (`ItemStore.changeStamp`);
/// only compared for equality.
package struct ChangeStamp: Equatable, Sendable {
    /// Changes when another connection commits (never for this connection's own commits).
    package var others: Int64
    /// The files' identity, size and change time: changes when anyone writes them.
    package var files: [Int64]
}
