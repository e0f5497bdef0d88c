/// An error that knows which exit status it deserves. Commands throw these for expected failures
/// (no connection, authentication refused, nothing to do); anything else is reported as an internal error.
protocol CommandFailure: Error, CustomStringConvertible {
    var exitCode: ExitCode { get }
}
