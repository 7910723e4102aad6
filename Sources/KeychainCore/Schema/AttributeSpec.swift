/// What kc knows about one attribute: its raw key, kind, classes, and index column.
struct AttributeSpec: Sendable {
    let key: String
    let kind: AttributeKind
    let classes: Set<ItemClass>
    let index: IndexColumn?

    init(_ key: String, _ kind: AttributeKind, _ classes: Set<ItemClass>, index: IndexColumn? = nil) {
        self.key = key
        self.kind = kind
        self.classes = classes
        self.index = index
    }
}
