// The `Security` module: Apple's SecItem API, with Apple's signatures, over kc keychains, so
// keychain code written for Apple platforms builds and runs on Linux unchanged
// (docs/apple-compatibility.md). Linux only: on Apple platforms the system framework is
// in charge, and a package depends on this product with `condition: .when(platforms: [.linux])`.
#if os(Linux)
// The kSec… constants (typed CFString, which is String here), kc's kcAttr… keys, the errSec…
// statuses, OSStatus and SecCopyErrorMessageString: the whole of SecurityVocabulary, which
// holds Apple's names and nothing else. Nothing of KeychainCore is re-exported: its own
// types (ItemClass, Keychain…) and KeychainStatus's KeychainError would collide with a
// wrapper's types of the same names. SecurityVocabularyTests keeps the vocabulary to Apple's
// names and every Apple name of the core in it; LayerTests allows this one re-export.
@_exported import SecurityVocabulary
#endif
