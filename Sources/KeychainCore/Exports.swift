// KeychainCore's interface is spoken in the floor's vocabulary: its functions take query
// dictionaries keyed by kSec… constants, return OSStatus and throw KeychainError. So every
// client of KeychainCore gets the floor (SecurityVocabulary and KeychainStatus) with it,
// and the files that import KeychainCore need no second import (docs/design.md, "The floor").
@_exported import KeychainStatus
