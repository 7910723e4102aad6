/// What identifies a store's current contents to its connection (`ItemStore.changeStamp`);
/// only compared for equality.
package struct ChangeStamp: Equatable, Sendable {
    /// Changes when another connection commits (never for this connection's own commits).
    package var others: Int64
    /// The files' identity, size and change time: changes when anyone writes them.
    package var files: [Int64]

    /// A stamp of these values (a store of another module makes its own).
    package init(others: Int64, files: [Int64]) {
        self.others = others
        self.files = files
    }
}
