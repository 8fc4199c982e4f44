/// When a daemon recycles itself (re-executes, see `RecycleHandoff`) to give back memory a
/// library keeps: once its resident size has grown `growthLimitKiB` above a reference level, or
/// after `maximumRequests` requests, whichever comes first (gunicorn's `max_requests`, with a
/// memory trigger like uWSGI's `reload-on-rss`).
///
/// The reference is the resident size after the first image's warm-up (`warmUpRequests`
/// requests, its queue and connections built), handed to every later image, so the bound holds
/// for the whole run and not per image. The memory is read only every `checkEveryRequests`
/// requests (a read of `/proc/self/statm`), and an image never recycles on memory before its own
/// warm-up. An image already above the bound when its warm-up ends (a large queue rebuilt: at a
/// million queued, fresh images were 7 MiB above the first one's level) is measured from its own
/// level instead: a fresh image could do no better, and recycling it again would only cost a
/// start (a listing of the whole queue) every `warmUpRequests` requests.
public struct RecycleTrigger: Equatable, Sendable {
    /// Requests after which an image recycles whatever its memory (`--recycle-after`); 0 never.
    public var maximumRequests: Int
    /// Growth over the reference that makes an image recycle (`--recycle-above`); 0 never.
    public var growthLimitKiB: Int
    /// Requests an image makes before its memory counts (the reference is noted then).
    public var warmUpRequests: Int
    /// Requests between two readings of the resident size.
    public var checkEveryRequests: Int
    /// The first image's resident size after its warm-up, once noted (carried across recycles).
    public private(set) var referenceKiB: Int?
    /// What this image is measured against: `referenceKiB`, or its own level after its warm-up
    /// when that was already above the bound.
    public private(set) var imageReferenceKiB: Int?
    /// The request count at which memory is read next.
    private var nextCheck: Int

    /// Why an image recycles.
    public enum Reason: Equatable, Sendable {
        /// `maximumRequests` were made.
        case requests(Int)
        /// The resident size (KiB) passed the reference plus the limit.
        case memory(residentKiB: Int, referenceKiB: Int)
    }

    public static let defaultWarmUpRequests = 5_000
    public static let defaultCheckEveryRequests = 500

    public init(
        maximumRequests: Int, growthLimitKiB: Int, referenceKiB: Int? = nil,
        warmUpRequests: Int = RecycleTrigger.defaultWarmUpRequests,
        checkEveryRequests: Int = RecycleTrigger.defaultCheckEveryRequests
    ) {
        (self.maximumRequests, self.growthLimitKiB, self.referenceKiB) = (maximumRequests, growthLimitKiB, referenceKiB)
        (self.warmUpRequests, self.checkEveryRequests) = (warmUpRequests, max(1, checkEveryRequests))
        nextCheck = warmUpRequests
    }

    /// Whether anything can make this trigger fire.
    public var isEnabled: Bool { maximumRequests > 0 || growthLimitKiB > 0 }

    /// Called after requests were started (`requests`: this image's count so far). Reads the
    /// resident size through `readResidentKiB` only when a check is due; nil when the image
    /// carries on, else why it should recycle now.
    public mutating func check(requests: Int, readResidentKiB: () -> Int?) -> Reason? {
        if maximumRequests > 0, requests >= maximumRequests { return .requests(requests) }
        guard growthLimitKiB > 0, requests >= nextCheck else { return nil }
        nextCheck = requests + checkEveryRequests
        guard let resident = readResidentKiB() else { return nil }
        guard let reference = imageReferenceKiB else {
            // The end of this image's warm-up: measured from the run's reference, or from its
            // own level when that is already above the bound.
            let run = referenceKiB ?? resident
            referenceKiB = run
            imageReferenceKiB = resident > run + growthLimitKiB ? resident : run
            return nil
        }
        return resident > reference + growthLimitKiB ? .memory(residentKiB: resident, referenceKiB: reference) : nil
    }
}
