/// One request as the receiver saw it, for tests and logs to inspect after the fact.
///
/// A record is created when the request head is parsed (that fixes `index` and `receivedAt`)
/// and completed when the receiver is done with the request: the body has been read and the
/// response sent, or a fault was applied, or the client went away. `UploadReceiver.requests`
/// may therefore show a record whose body is still arriving; `waitForRequests` waits for
/// completed ones.
public struct ReceivedRequest: Sendable {
    /// 0-based order of arrival across all connections, counted when the head is parsed.
    public var index: Int
    /// 0-based order in which the request's connection was accepted; equal values mean the
    /// requests shared one keep-alive connection.
    public var connectionIndex: Int
    public var method: String
    /// The request-target exactly as sent, e.g. `/up/my%20file.txt`.
    public var target: String
    /// Header fields in the order sent, names as sent.
    public var headers: [(name: String, value: String)]
    /// The full body, decoded from chunked if needed. Empty when the receiver was built with
    /// `keepBodiesInMemory: false`, or when a fault dropped the body; after `closeMidBody` it
    /// holds the part that was read.
    public var body: [UInt8]
    /// Number of body bytes read, whether or not they were kept in `body`.
    public var bodyLength: Int64
    /// With `Content-Encoding: gzip`: the bytes the body inflated to (`body` and the stored file
    /// hold the inflated content; a body that is not whole gzip is answered 400, an empty one is
    /// taken as it is); nil otherwise.
    public var inflatedLength: Int64?
    /// False if the connection ended (or a fault closed it) before the full body arrived.
    public var bodyComplete: Bool
    /// Seconds since 1970 when the head was parsed.
    public var receivedAt: Double
    /// The status sent back, or nil if no response was sent (a fault, or the client left).
    public var answeredStatus: Int?
    /// Where the body was stored when the receiver has a store directory and answered 2xx.
    public var storedPath: String?

    public init(
        index: Int, connectionIndex: Int = 0, method: String, target: String,
        headers: [(name: String, value: String)], body: [UInt8] = [], bodyLength: Int64 = 0,
        bodyComplete: Bool = false, receivedAt: Double = 0, answeredStatus: Int? = nil,
        storedPath: String? = nil
    ) {
        self.index = index
        self.connectionIndex = connectionIndex
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.bodyLength = bodyLength
        self.bodyComplete = bodyComplete
        self.receivedAt = receivedAt
        self.answeredStatus = answeredStatus
        self.storedPath = storedPath
    }

    /// The value of the first header whose name matches `name` case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}
