#if os(Linux)
import KeychainCore
import Foundation

// Core Foundation's names as keychain code uses them, mapped onto Foundation types so that
// `query as CFDictionary`, `[CFString: Any]`, `kSecClass as String`, `item as? [String: Any]`
// and `item as? Data` behave as on Apple platforms, where the CF types are toll-free
// bridged to these.

/// A string; `kSec…` constants have this type. (Apple: `CFString`, bridged to `String`.)
public typealias CFString = String
/// Bytes. (Apple: `CFData`, bridged to `Data`.)
public typealias CFData = Data
/// A dictionary; `[String: Any] as CFDictionary` works. (Apple: `CFDictionary`, bridged to `NSDictionary`.)
public typealias CFDictionary = NSDictionary
/// A mutable dictionary. (Apple: `CFMutableDictionary`.)
public typealias CFMutableDictionary = NSMutableDictionary
/// An array. (Apple: `CFArray`, bridged to `NSArray`.)
public typealias CFArray = NSArray
/// Any object; results arrive as one. (Apple: `CFTypeRef`, which is `AnyObject`.)
public typealias CFTypeRef = AnyObject
/// A number. (Apple: `CFNumber`, bridged to `NSNumber`.)
public typealias CFNumber = NSNumber
/// A boolean: an `NSNumber` here. (Apple: `CFBoolean`, bridged to `NSNumber`.)
public typealias CFBoolean = NSNumber
/// A point in time. (Apple: `CFDate`, bridged to `Date`.)
public typealias CFDate = Date
/// A count or index. (Apple: `CFIndex`, a signed long.)
public typealias CFIndex = Int
/// A type's identifier. (Apple: `CFTypeID`, an unsigned long.)
public typealias CFTypeID = UInt

/// The boolean true, as keychain queries pass it (`kSecReturnData as String: kCFBooleanTrue!`).
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
/// The boolean false.
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)

/// A boolean's value. (Apple: `CFBooleanGetValue`.)
public func CFBooleanGetValue(_ boolean: CFBoolean!) -> Bool { boolean?.boolValue ?? false }

/// No error: the same as `errSecSuccess`. (Apple: `noErr` from MacTypes.h.)
public let noErr: OSStatus = 0
#endif
