import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolTransport

/// The real engine stepped by hand, as swift-nio's `EmbeddedEventLoop`: a `ManualClock`, a
/// `ScriptedEventSource` and a `ScriptedTransport` around a real `Spool`. `advanceTime(by:)`
/// runs `Engine.step` at every wake-up the engine asks for up to the new time, and at once for
/// events the test fed or completions it released, so a rule of minutes runs in milliseconds.
public final class EmbeddedEngine {
    /// The steps at one instant did not settle: the engine would busy-loop.
    public struct BusyLoop: Error, CustomStringConvertible {
        public var at: Timestamp
        public var description: String { "the engine stepped 10000 times at \(at) without waiting" }
    }

    public let clock: ManualClock
    public let events: ScriptedEventSource
    public let transport: ScriptedTransport
    public let engine: Engine
    /// When the engine started (its first step).
    public let startedAt: Timestamp
    /// When the engine asked to be woken next; nil once it finished.
    public private(set) var nextWake: Timestamp?
    /// What the run did, once the engine finished (`drain`'s exit or a stop).
    public private(set) var summary: RunSummary?

    /// Starts the engine (recovery, watches, scans) with `observers` added, and runs its first step.
    /// `residentKiB` is the process's memory as the recycle trigger reads it (default: unreadable).
    /// `transport`: one set up before the first step (its `onStart`), else a new one.
    /// `syncs`: where the engine's syncs are made; on the loop by default, so that each step
    /// ends with what it recorded durable (a test of the disk's timing gives its own).
    public init(
        spool: Spool, configuration: EngineConfiguration, clock: ManualClock = ManualClock(),
        observers: [any EngineObserver] = [], residentKiB: @escaping () -> Int? = { nil }, sizeGate: SpoolSizeGate? = nil,
        transport: ScriptedTransport? = nil, runPass: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void = { $0() },
        syncs: SyncThread = .loop, wrapping: ((ScriptedTransport) -> any UploadTransport)? = nil,
        line: RecycleLine? = nil
    ) throws {
        self.clock = clock
        events = try ScriptedEventSource()
        self.transport = transport ?? ScriptedTransport(clock: clock)
        // `wrapping`: a layer of the real transport over the scripted one (an S3 driver, whose
        // requests the test answers).
        engine = try Engine(
            spool: spool, transport: wrapping?(self.transport) ?? self.transport, clock: clock, configuration: configuration,
            log: EventLog(minimumLevel: .error, clock: { clock.now() }), processTag: 7, events: events,
            residentKiB: residentKiB, runPass: runPass, syncs: syncs)
        for observer in observers { engine.observers.add(observer) }
        engine.sizeGate = sizeGate
        startedAt = clock.now()
        // A recycled image's engine: the first items in line as the last image handed them on.
        if let line { engine.resume(from: RunSummary(), startedAt: startedAt, line: line) }
        try engine.start()
        nextWake = startedAt
        try advanceTime(by: 0)
    }

    /// Seconds since the engine started.
    public var elapsed: Double { startedAt.seconds(until: clock.now()) }

    /// Moves the clock `seconds` on, stepping the engine at each wake-up due on the way (the clock
    /// set to it) and whenever an event is waiting; ends with the clock at the new time.
    public func advanceTime(by seconds: Double) throws {
        let target = clock.now().adding(seconds: seconds)
        var stepsNow = 0
        while let wake = nextWake {
            let now = clock.now()
            if wake <= now || events.hasEvents {
                stepsNow += 1
                guard stepsNow < 10_000 else { throw BusyLoop(at: now) }
                nextWake = try engine.step(now: now, events: events.takeEvents())
                if nextWake == nil { summary = try engine.finish() }
            } else if wake <= target {
                clock.set(wake)
                stepsNow = 0
            } else {
                break
            }
        }
        if clock.now() < target { clock.set(target) }
    }

    /// Moves the clock to `elapsed` seconds after the start (see `advanceTime(by:)`).
    public func advanceTime(to elapsed: Double) throws {
        try advanceTime(by: max(0, elapsed - self.elapsed))
    }
}
