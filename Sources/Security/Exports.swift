// The `Security` module: Apple's SecItem API, with Apple's signatures, over kc keychains, so
// keychain code written for Apple platforms builds and runs on Linux unchanged
// (docs/apple-compatibility.md). Linux only: on Apple platforms the system framework is
// in charge, and a package depends on this product with `condition: .when(platforms: [.linux])`.
#if os(Linux)
// The kSec… constants (typed CFString, which is String here), errSec… statuses, OSStatus
// and SecCopyErrorMessageString come from KeychainCore with Apple's names and values.
@_exported import KeychainCore
#endif
