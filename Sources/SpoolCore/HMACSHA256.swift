/// HMAC-SHA256 (RFC 2104), streaming like `SHA256`: for request signing (S3's SigV4).
public struct HMACSHA256: Sendable {
    private var inner: SHA256
    private let outerKey: [UInt8]

    public init<Key: Collection>(key: Key) where Key.Element == UInt8 {
        // A key longer than a block is hashed first; a shorter one is padded with zeros.
        var block = key.count > SHA256.blockLength ? SHA256.hash(key) : Array(key)
        block += [UInt8](repeating: 0, count: SHA256.blockLength - block.count)
        inner = SHA256()
        inner.update(block.map { $0 ^ 0x36 })
        outerKey = block.map { $0 ^ 0x5c }
    }

    /// The MAC of `message` under `key` in one call.
    public static func authenticationCode<Key: Collection, Message: Sequence>(for message: Message, key: Key) -> [UInt8]
    where Key.Element == UInt8, Message.Element == UInt8 {
        var mac = HMACSHA256(key: key)
        mac.update(message)
        return mac.finalize()
    }

    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        inner.update(bytes)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        inner.update(bytes)
    }

    public mutating func finalize() -> [UInt8] {
        var outer = SHA256()
        outer.update(outerKey)
        outer.update(inner.finalize())
        return outer.finalize()
    }
}
