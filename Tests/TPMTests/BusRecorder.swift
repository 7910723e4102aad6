import Foundation
import KCTestSupport
import KeychainCore
import POSIXSupport
import Synchronization

/// Someone on the TPM's bus: a TCP relay between kc-tpm and swtpm that forwards every byte
/// both ways (commands on `port`, swtpm's control channel on `port + 1`) and records them,
/// so a test can look for the key or the PIN in what crossed.
final class BusRecorder {
    let port: Int
    private let listeners: [Int32]
    /// What the relay's threads share; they hold it, not the recorder, so that a test that
    /// ends early (a failed #require) still stops them when it drops the recorder.
    private let relay = Relay()

    /// The TCTI configuration that reaches swtpm through the relay.
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    /// Everything that crossed, both ways, so far.
    var bytes: [UInt8] { relay.recorded.withLock { $0 } }

    init(to target: TestSWTPM) throws {
        let p = try TestSWTPM.freePortPair()
        let (data, _) = try LoopbackTCP.listener(p)
        guard let (control, _) = try? LoopbackTCP.listener(p + 1) else {
            close(data)
            throw KeychainError(errSecIO, "port \(p + 1) was taken")
        }
        port = p
        listeners = [data, control]
        for (fd, upstream) in [(data, target.port), (control, target.port + 1)] {
            let relay = relay
            Thread { relay.serve(fd, upstream) }.start()
        }
    }

    deinit { stop() }

    /// Stops accepting and relaying; the threads end within a poll interval.
    func stop() {
        guard !relay.stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        usleep(200_000)
        for fd in listeners { close(fd) }
    }
}

/// The relay's threads: accept on a listener, connect each client to swtpm, and copy both
/// ways, recording, until stopped.
private final class Relay: Sendable {
    let recorded = Mutex<[UInt8]>([])
    let stopped = Atomic<Bool>(false)

    func serve(_ listener: Int32, _ upstream: Int) {
        while !stopped.load(ordering: .sequentiallyConsistent) {
            var pfd = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            let client = CloseOnExec.accept(listener)
            guard client >= 0 else { continue }
            let server = LoopbackTCP.connect(upstream)
            guard server >= 0 else {
                close(client)
                continue
            }
            Thread {
                self.pump(client, server)
                close(client)
                close(server)
            }.start()
        }
    }

    private func pump(_ a: Int32, _ b: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !stopped.load(ordering: .sequentiallyConsistent) {
            var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, 50) > 0 else { continue }
            for (from, to) in [(0, b), (1, a)] where fds[from].revents != 0 {
                let got = read(fds[from].fd, &buffer, buffer.count)
                if got <= 0 { return }
                recorded.withLock { $0 += buffer[0..<got] }
                var at = 0
                while at < got {
                    let wrote = buffer[at..<got].withUnsafeBytes { write(to, $0.baseAddress, $0.count) }
                    if wrote <= 0 { return }
                    at += wrote
                }
            }
        }
    }
}
