/// The version of team keychains' records and schema this build writes and reads.
package enum TeamFormat {
    /// 1: the first team format (issue 20).
    package static let version: UInt32 = 1
}
