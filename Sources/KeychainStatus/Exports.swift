// KeychainError and exitCode(for:) are written in Apple's vocabulary (an OSStatus, the
// errSec… codes it carries, Apple's message for each): whoever imports KeychainStatus to
// throw a KeychainError gets the codes with it, as one import.
@_exported import SecurityVocabulary
