/// One attempt of one item's S3 multipart upload, as a state machine: the driver
/// (`S3MultipartAttempt` in SpoolTransport) sends each request the returned actions ask for,
/// reports how it ended (`answered`), has the daemon perform the records (`recorded`, `recordRefused`), and does
/// what the next actions say. Pure: nothing here does I/O, signs or hashes.
///
/// - A log for this blob and object: ListParts (every page) checks that the upload still exists.
///   Parts in the log that the store also lists are done and never sent again; the others are
///   sent (`MultipartNote.resumed` says how many of each). NoSuchUpload: if the log records
///   every part, a completion may have happened before spoold stopped, so HEAD of the key decides
///   (`MultipartCompletionCheck`); otherwise, or if the object is not there, a new upload starts.
/// - No log (or one for another object, whose upload is then given up): CreateMultipartUpload,
///   and the upload id is recorded (`recordUploadID`, durable) before the first part is sent.
///   A log is another object's when its URL, region or blob size differ, and when its parts
///   were sent in another coding (`--compress`): compressed parts and plain ones make no object
///   anyone can read.
/// - A new upload's plan: parts of the preferred size; with `--compress`, parts that compress to
///   about that size (`S3PartPlan.compressedPartSize`), from the ratio the driver samples
///   (`planUpload`). Made when the upload is created, again after a start-over.
/// - Parts go up `concurrency` at once. A part counts once its ETag is recorded (`recordPart`,
///   durable); a crash re-sends at most the parts in flight.
/// - All parts done: CompleteMultipartUpload with every part's ETag.
///   - An answer that does not say whether the object was made (a 5xx, the connection dropped or
///     the deadline passed after the request went out, an error inside a 200; NoSuchUpload) is
///     checked with the store before anything is decided: ListParts, then HEAD of the key
///     (`MultipartCompletionCheck`). The object there: the item is uploaded. The upload still
///     open, or no clear answer: the attempt ends retryable and the next resumes. A compressed
///     upload's object is its parts' gzip members one after another: HEAD's answer is compared
///     with their size and MD5, which only compressing the parts again tells (`hashContent`).
///   - `InvalidPart` (the store will not complete with these parts): ListParts again. Parts it
///     lacks or lists with another ETag are sent again and the completion repeated, once per
///     attempt; if it lists every part as sent, or no longer has the upload, a new upload starts.
///
/// Starting over (`startOver`) throws the old upload's parts away: at most once per attempt
/// (`StartOverBudget`, the rule tus uploads keep too), each time said with the reason and the
/// bytes. An old upload that may still exist is given up: with a log, its abort is recorded as
/// owed before the log goes (`StartOver.owesAbort`); without one, it is aborted at once (`abort`).
///
/// The first request that fails otherwise ends the attempt (`fail`): the driver cancels what is
/// still in flight, and the upload is kept for the next attempt. Without a log, a failed attempt
/// aborts its upload instead (best effort: nothing records it); so does one whose upload id could
/// not be recorded.
public struct S3MultipartUpload: Sendable {
    public struct Settings: Equatable, Sendable {
        /// The object's URL (the item's).
        public var url: String
        /// The region requests are signed for.
        public var region: String
        /// The blob's size.
        public var size: Int64
        /// `--s3-part-size`.
        public var preferredPartSize: Int64
        /// Parts in flight at once.
        public var concurrency: Int
        /// Whether the item has a part log (progress that outlives the attempt): records are
        /// asked for, and a failed attempt keeps its upload.
        public var journaled: Bool
        /// `--compress`: every part is sent in this coding (one member of it per part); nil: the
        /// blob's bytes as they are.
        public var coding: ContentCoding?

        public init(
            url: String, region: String, size: Int64, preferredPartSize: Int64, concurrency: Int, journaled: Bool,
            coding: ContentCoding? = nil
        ) {
            (self.url, self.region, self.size, self.preferredPartSize) = (url, region, size, preferredPartSize)
            (self.concurrency, self.journaled, self.coding) = (max(1, concurrency), journaled, coding)
        }
    }

    /// A request of the protocol, as the driver reports its end.
    public enum Request: Equatable, Hashable, Sendable {
        case create
        case listParts(marker: Int)
        case part(Int)
        case complete
        case headObject
    }

    /// A record the driver has the daemon make durable in the item's part log (`PartRecorder`).
    public enum Record: Equatable, Sendable {
        case uploadID
        case part(Int)
    }

    /// What the driver does next. An event may return several (parts go up together), in order.
    public enum Action: Equatable, Sendable {
        /// Sample how the blob compresses in this coding (compressed bytes per byte); report
        /// `planned(compressedRatio:)`. A new compressed upload's parts are sized from it.
        case planUpload(ContentCoding)
        /// CreateMultipartUpload (POST `?uploads=`, with the item's headers); report `.create`.
        case createUpload
        /// A page of ListParts (`listPage` parts from `marker`); report `.listParts(marker:)`.
        case listParts(marker: Int)
        /// UploadPart `number`: `length` bytes of the blob from `offset`; report `.part(number)`.
        case sendPart(Int, offset: Int64, length: Int64)
        /// Record the new upload durably; report `recorded(.uploadID)` or `recordRefused`.
        case recordUploadID(PartLogCodec.State)
        /// Record the part's ETag durably; report `recorded(.part(n))` or `recordRefused`.
        case recordPart(Int, etag: String)
        /// CompleteMultipartUpload with every part's ETag in part order; report `.complete`.
        case complete(etags: [String])
        /// HEAD of the object's key; report `.headObject`.
        case headObject
        /// Compute the size and MD5 of the object the upload makes; report `contentHashed` or
        /// `contentUnreadable`.
        case hashContent(Content)
        /// Tell the daemon (log and metrics); nothing steers on it.
        case say(MultipartNote)
        /// Forget the upload and its log, first owing its abort when `owesAbort`; say so; report
        /// `startedOver()`.
        case startOver(StartOver)
        /// AbortMultipartUpload of an upload nothing records, best effort (one request, its answer ignored).
        case abort(uploadID: String, url: String)
        /// The object is made: the item is uploaded, with this outcome.
        case finish(UploadOutcome)
        /// The attempt ends with this outcome; cancel what is still in flight.
        case fail(UploadOutcome)
    }

    /// Why an upload is begun anew, and what that throws away.
    public struct StartOver: Equatable, Sendable {
        public var reason: MultipartNote.StartOver.Reason
        public var detail: String
        /// The upload given up (nil: none was created yet).
        public var old: PartLogCodec.State?
        /// Parts of it the store had accepted, and their bytes: sent for nothing.
        public var discardedParts: Int
        public var discardedBytes: Int64
        /// The old upload may still exist and the item has a log: its abort is recorded as owed
        /// (`SPOOL/parts/aborts.log`) before the log goes.
        public var owesAbort: Bool

        public init(
            reason: MultipartNote.StartOver.Reason, detail: String, old: PartLogCodec.State?, discardedParts: Int, discardedBytes: Int64,
            owesAbort: Bool
        ) {
            (self.reason, self.detail, self.old, self.discardedParts, self.discardedBytes, self.owesAbort) =
                (reason, detail, old, discardedParts, discardedBytes, owesAbort)
        }

        /// What the daemon is told.
        public var note: MultipartNote {
            .startedOver(.init(
                reason: reason, detail: detail, oldUploadID: old?.uploadID ?? "", discardedParts: discardedParts,
                discardedBytes: discardedBytes))
        }

        /// What the item's part log records of it (`PartRecord.startOver`).
        public var record: StartOverRecord {
            StartOverRecord(owing: owesAbort ? old.map { .s3($0) } : nil, note: note)
        }
    }

    /// What `hashContent` hashes.
    public enum Content: Equatable, Sendable {
        /// The blob's bytes.
        case blob
        /// The parts of `plan`, each compressed in the coding as it is sent (every part but the
        /// last padded to S3's smallest part), one after another.
        case codedParts(S3PartPlan, ContentCoding)
    }

    /// Parts asked for per ListParts page (the driver keeps an answer this long).
    public static let listPage = 500

    /// Why a completion was checked with the store, and what ends the attempt if it stays unknown.
    private struct Check: Sendable {
        var doubt: String
        var failing: UploadOutcome
        /// The parts whose completion is in question.
        var parts: [Int: String]
    }

    /// Why ListParts is asked.
    private enum Listing: Sendable {
        /// A recorded upload is taken up.
        case resume(PartLogCodec.State)
        /// A completion's answer was unclear.
        case checkCompletion(Check)
        /// The store refused the completion (`InvalidPart`): which parts does it hold?
        case afterRefusal(UploadOutcome)
    }

    private enum State: Sendable {
        case idle
        /// A new upload waits for its plan (`planUpload`).
        case planning
        case listing(Listing, marker: Int, listed: [Int: String])
        case creating
        case recordingUploadID(answer: HTTPAnswer)
        /// Parts go up (`waiting`, `inFlight`, `unrecorded`).
        case sendingParts
        case completing
        case headingObject(Check, MultipartCompletionCheck.Expected)
        case hashing(Check, MultipartCompletionCheck.Head, MultipartCompletionCheck.Expected)
        case startingOver
        case finished
    }

    public let settings: Settings
    public private(set) var plan: S3PartPlan
    public private(set) var uploadID: String?
    /// Parts done: number → ETag (recorded when the item has a log).
    public private(set) var done: [Int: String] = [:]
    private var waiting: [Int] = []
    private var inFlight: Set<Int> = []
    /// Parts answered and not recorded yet: their ETag and the answer.
    private var unrecorded: [Int: (etag: String, answer: HTTPAnswer)] = [:]
    private var state = State.idle
    private var startOvers = StartOverBudget()
    /// Parts were sent again after an `InvalidPart` completion: a second one starts over.
    private var repairedCompletion = false

    public init(_ settings: Settings) {
        self.settings = settings
        plan = S3PartPlan(size: settings.size, preferredPartSize: settings.preferredPartSize)
    }

    public var isFinished: Bool { if case .finished = state { true } else { false } }

    // MARK: Events

    /// The attempt begins, with what the item's log records (nil: nothing, or no log).
    public mutating func start(recorded: PartLogCodec.State?) -> [Action] {
        guard case .idle = state else { preconditionFailure("a multipart upload starts once") }
        guard let recorded else { return create() }
        guard recorded.size == settings.size, recorded.url == settings.url, recorded.region == settings.region,
              recorded.coding == settings.coding
        else {
            // An upload for another object (the URL, the region, the blob's size or the parts'
            // coding changed: compressed parts and plain ones make no object anyone can read).
            let coding = recorded.coding.map { ", parts in \($0.rawValue)" } ?? ""
            return startOver(
                .objectChanged,
                "the part log was written for another object (\(recorded.url), \(recorded.region), \(recorded.size) B\(coding))",
                old: recorded, discarding: recorded.parts, stillExists: true, after: nil)
        }
        plan = recorded.plan
        uploadID = recorded.uploadID
        return list(.resume(recorded))
    }

    /// The request ended with `outcome` (a throttled answer already waited out and sent again by
    /// the driver; a blob that changed already made a `.refused`).
    public mutating func answered(_ request: Request, _ outcome: UploadOutcome) -> [Action] {
        switch (request, state) {
        case (.create, .creating): return created(outcome)
        case (.listParts(let asked), .listing(let why, let marker, let listed)) where asked == marker:
            return listedPage(outcome, why: why, marker: marker, listed: listed)
        case (.part(let number), .sendingParts) where inFlight.contains(number): return partAnswered(number, outcome)
        case (.complete, .completing): return completionAnswered(outcome)
        case (.headObject, .headingObject(let check, let expected)): return headAnswered(outcome, check: check, expected: expected)
        default: return []
        }
    }

    /// A record the driver made durable.
    public mutating func recorded(_ record: Record) -> [Action] {
        switch (record, state) {
        case (.uploadID, .recordingUploadID):
            return sendParts()
        case (.part(let number), .sendingParts):
            guard let part = unrecorded.removeValue(forKey: number) else { return [] }
            done[number] = part.etag
            return pump()
        default:
            return []
        }
    }

    /// A record the part log refused (too long for its format): the store's answer at fault,
    /// ruled retryable. (A record the spool could not make durable gets no answer: the daemon
    /// stops and cancels the attempt.)
    public mutating func recordRefused(_ record: Record, _ refusal: PartJournalRefusal) -> [Action] {
        switch (record, state) {
        case (.uploadID, .recordingUploadID(let answer)):
            // Unrecorded, the upload could never be resumed: aborted.
            return fail(S3MultipartUpload.journalRefused(refusal, what: "the multipart upload", answer: answer), abortUpload: true)
        case (.part(let number), .sendingParts):
            guard let part = unrecorded.removeValue(forKey: number) else { return [] }
            return fail(S3MultipartUpload.journalRefused(refusal, what: "part \(number)", answer: part.answer))
        default:
            return []
        }
    }

    /// How the blob compresses (`planUpload`): compressed bytes per byte of its samples (1 when
    /// they could not be read: the parts then find out why).
    public mutating func planned(compressedRatio: Double) -> [Action] {
        guard case .planning = state else { return [] }
        let partSize = S3PartPlan.compressedPartSize(preferredPartSize: settings.preferredPartSize, compressedRatio: compressedRatio)
        plan = S3PartPlan(size: settings.size, preferredPartSize: partSize)
        state = .creating
        return [.createUpload]
    }

    /// The size and MD5 of the object the upload makes (`hashContent`: a completion in doubt,
    /// a store whose ETags are the MD5 of the bytes, or a compressed upload).
    public mutating func contentHashed(md5: [UInt8], size: Int64) -> [Action] {
        guard case .hashing(let check, let head, var expected) = state else { return [] }
        expected.size = size
        expected.contentMD5 = md5.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        return decided(MultipartCompletionCheck.afterHead(head, expected: expected), check)
    }

    /// The blob could not be read to hash it (`why`).
    public mutating func contentUnreadable(_ why: String) -> [Action] {
        guard case .hashing = state else { return [] }
        return fail(.refusal(.blobChanged, why))
    }

    /// The old upload is forgotten (its abort owed, said): a new one begins.
    public mutating func startedOver() -> [Action] {
        guard case .startingOver = state else { return [] }
        uploadID = nil
        done = [:]
        repairedCompletion = false
        return create()
    }

    /// The daemon is stopping: the attempt ends `.cancelled`, the upload kept.
    public mutating func cancel() -> [Action] {
        guard !isFinished else { return [] }
        return fail(.cancelled)
    }

    // MARK: Steps

    /// A new upload: its plan first (with a coding, from how the blob compresses), then
    /// CreateMultipartUpload.
    private mutating func create() -> [Action] {
        if let coding = settings.coding {
            state = .planning
            return [.planUpload(coding)]
        }
        plan = S3PartPlan(size: settings.size, preferredPartSize: settings.preferredPartSize)
        state = .creating
        return [.createUpload]
    }

    private mutating func created(_ outcome: UploadOutcome) -> [Action] {
        switch S3MultipartUpload.route(outcome, goneApplies: false) {
        case .ok(let answer):
            guard let id = S3PartPlan.element("UploadId", in: S3MultipartUpload.text(of: answer)) else {
                return fail(.answered(answer.ruled(.retryable, because: "CreateMultipartUpload answered without an UploadId")))
            }
            uploadID = id
            guard settings.journaled else { return sendParts() }
            state = .recordingUploadID(answer: answer)
            return [.recordUploadID(.init(
                size: plan.size, partSize: plan.partSize, region: settings.region, uploadID: id, url: settings.url,
                coding: settings.coding))]
        case .gone(let ending), .other(let ending): return fail(ending.withoutBody)
        case .end(let ending): return fail(ending)
        }
    }

    private mutating func list(_ why: Listing) -> [Action] {
        state = .listing(why, marker: 0, listed: [:])
        return [.listParts(marker: 0)]
    }

    private mutating func listedPage(_ outcome: UploadOutcome, why: Listing, marker: Int, listed: [Int: String]) -> [Action] {
        switch S3MultipartUpload.route(outcome, goneApplies: true) {
        case .ok(let answer):
            var listed = listed
            let text = S3MultipartUpload.text(of: answer)
            for part in S3MultipartUpload.elements("Part", in: text) {
                if let number = S3PartPlan.element("PartNumber", in: part).flatMap(Int.init), let etag = S3PartPlan.element("ETag", in: part) {
                    listed[number] = etag
                }
            }
            // Pages past the plan's last part cannot hold a part of ours: a server that keeps
            // saying "truncated" cannot keep the attempt going.
            if S3PartPlan.element("IsTruncated", in: text) == "true",
               let next = S3PartPlan.element("NextPartNumberMarker", in: text).flatMap(Int.init), next > marker, next < plan.partCount
            {
                state = .listing(why, marker: next, listed: listed)
                return [.listParts(marker: next)]
            }
            return listingDone(why, listed: listed)
        case .gone(let answer):
            return listingGone(why, answer: answer)
        case .other(let unclear):
            guard case .checkCompletion(let check) = why else { return fail(unclear.withoutBody) }
            return decided(MultipartCompletionCheck.afterAmbiguousCompletion(.unclear(unclear.summary)), check)
        case .end(let ending):
            return fail(ending)
        }
    }

    private mutating func listingDone(_ why: Listing, listed: [Int: String]) -> [Action] {
        switch why {
        case .resume(let recorded):
            // Only what the log vouches for counts, and only if the store has it too.
            done = recorded.parts.filter { number, etag in
                listed[number].map { MultipartCompletionCheck.unquoted($0) == MultipartCompletionCheck.unquoted(etag) } ?? false
            }
            let toSend = (1...plan.partCount).filter { done[$0] == nil }.reduce(Int64(0)) { $0 + plan.range(ofPart: $1).length }
            let resumed = MultipartNote.resumed(.init(
                uploadID: recorded.uploadID, partCount: plan.partCount, listed: listed.count, recorded: recorded.parts.count,
                kept: done.count, bytesToSend: toSend))
            return [.say(resumed)] + sendParts()
        case .checkCompletion(let check):
            return decided(MultipartCompletionCheck.afterAmbiguousCompletion(.open), check)
        case .afterRefusal(let outcome):
            let refused = "CompleteMultipartUpload answered InvalidPart"
            let resend = MultipartCompletionCheck.partsToResend(listed: listed, sent: done, partCount: plan.partCount)
            guard !resend.isEmpty, !repairedCompletion else {
                let why = resend.isEmpty ? "although ListParts lists every part as sent" : "again after parts \(resend) were sent again"
                return startOver(.completionRefused, refused + " " + why, old: nil, discarding: done, stillExists: true, after: outcome)
            }
            repairedCompletion = true
            for number in resend { done[number] = nil }
            return sendParts()
        }
    }

    private mutating func listingGone(_ why: Listing, answer: UploadOutcome) -> [Action] {
        switch why {
        case .resume(let recorded):
            let doubt = "the upload its part log records is gone (NoSuchUpload)"
            guard recorded.parts.count == plan.partCount else {
                return startOver(.uploadGone, doubt, old: recorded, discarding: recorded.parts, stillExists: false, after: answer)
            }
            // Every part was recorded: a completion may have happened before spoold stopped.
            return headObject(Check(doubt: doubt + " and every part was recorded", failing: answer, parts: recorded.parts))
        case .checkCompletion(let check):
            let decision = MultipartCompletionCheck.afterAmbiguousCompletion(.gone)
            return decision == .headObject ? headObject(check) : decided(decision, check)
        case .afterRefusal(let outcome):
            return startOver(
                .completionRefused, "CompleteMultipartUpload answered InvalidPart and the upload is gone (NoSuchUpload)", old: nil,
                discarding: done, stillExists: false, after: outcome)
        }
    }

    private mutating func sendParts() -> [Action] {
        state = .sendingParts
        waiting = (1...plan.partCount).filter { done[$0] == nil }
        return pump()
    }

    /// Starts parts until `concurrency` are in flight; completes when none is left.
    private mutating func pump() -> [Action] {
        var actions: [Action] = []
        while inFlight.count < settings.concurrency, !waiting.isEmpty {
            let number = waiting.removeFirst()
            inFlight.insert(number)
            let (offset, length) = plan.range(ofPart: number)
            actions.append(.sendPart(number, offset: offset, length: length))
        }
        if waiting.isEmpty && inFlight.isEmpty && unrecorded.isEmpty {
            state = .completing
            actions.append(.complete(etags: (1...plan.partCount).map { done[$0] ?? "" }))
        }
        return actions
    }

    private mutating func partAnswered(_ number: Int, _ outcome: UploadOutcome) -> [Action] {
        inFlight.remove(number)
        switch S3MultipartUpload.route(outcome, goneApplies: false) {
        case .ok(let answer):
            guard let etag = answer.etag, !etag.isEmpty else {
                return fail(.answered(answer.ruled(.retryable, because: "UploadPart \(number) answered without an ETag")))
            }
            guard settings.journaled else {
                done[number] = etag
                return pump()
            }
            unrecorded[number] = (etag, answer)
            return [.recordPart(number, etag: etag)]
        case .gone(let ending), .other(let ending): return fail(ending.withoutBody)
        case .end(let ending): return fail(ending)
        }
    }

    private mutating func completionAnswered(_ outcome: UploadOutcome) -> [Action] {
        switch S3MultipartUpload.route(outcome, goneApplies: true) {
        case .ok(let answer):
            // S3 may answer 200 and still report an error in the body: then it did not say whether it completed.
            let excerpt = answer.excerpt
            if let code = S3ErrorClassifier.errorCode(in: excerpt), S3PartPlan.element("ETag", in: excerpt ?? "") == nil {
                let doubt = "CompleteMultipartUpload answered HTTP \(answer.status) with S3 error \(code)"
                return list(.checkCompletion(Check(
                    doubt: doubt, failing: .answered(HTTPAnswer(status: answer.status, excerpt: excerpt).ruled(.retryable, because: doubt)),
                    parts: done)))
            }
            state = .finished
            return [.finish(.status(answer.status, excerpt: excerpt))]
        case .gone(let gone):
            if S3ErrorClassifier.errorCode(in: gone.responseExcerpt) == "InvalidPart" {
                // The store refused the completion: ListParts says what it holds.
                return list(.afterRefusal(gone))
            }
            // NoSuchUpload: completed (by an earlier request of ours?), aborted or expired.
            return headObject(Check(doubt: "CompleteMultipartUpload answered NoSuchUpload", failing: gone, parts: done))
        case .other(let unclear):
            guard S3MultipartUpload.leavesCompletionInDoubt(unclear) else { return fail(unclear) }
            return list(.checkCompletion(Check(
                doubt: "CompleteMultipartUpload ended without a clear answer (\(unclear.summary))", failing: unclear, parts: done)))
        case .end(let ending):
            return fail(ending)
        }
    }

    /// The upload is gone: HEAD of the key says whether the store made the object of `check.parts`.
    private mutating func headObject(_ check: Check) -> [Action] {
        let expected = MultipartCompletionCheck.Expected(size: plan.size, partETags: (1...plan.partCount).map { check.parts[$0] ?? "" })
        state = .headingObject(check, expected)
        return [.headObject]
    }

    private mutating func headAnswered(_ outcome: UploadOutcome, check: Check, expected: MultipartCompletionCheck.Expected) -> [Action] {
        switch S3MultipartUpload.route(outcome, goneApplies: false) {
        case .ok(let answer):
            let head = MultipartCompletionCheck.Head.found(size: answer.contentLength, etag: answer.etag)
            if let coding = settings.coding {
                // The object is the parts' gzip members: only compressing them again says its size and MD5.
                state = .hashing(check, head, expected)
                return [.hashContent(.codedParts(plan, coding))]
            }
            guard MultipartCompletionCheck.wantsContentMD5(head, expected: expected) else {
                return decided(MultipartCompletionCheck.afterHead(head, expected: expected), check)
            }
            // The store's ETag may be the MD5 of the bytes: the blob is read once to compare.
            state = .hashing(check, head, expected)
            return [.hashContent(.blob)]
        case .gone(let other), .other(let other):
            let head: MultipartCompletionCheck.Head = other.httpStatus == 404 ? .absent : .unclear(other.summary)
            return decided(MultipartCompletionCheck.afterHead(head, expected: expected), check)
        case .end(let ending):
            return fail(ending)
        }
    }

    /// Acts on what the check decided, and says so.
    private mutating func decided(_ decision: MultipartCompletionCheck.Decision, _ check: Check) -> [Action] {
        let said = Action.say(.completionChecked(.init(doubt: check.doubt, uploadID: uploadID ?? "", decision: decision)))
        switch decision {
        case .completed:
            state = .finished
            return [said, .finish(.status(200, excerpt: "completed (checked with the store after: \(check.doubt))"))]
        case .startOver(let why):
            return [said] + startOver(.uploadGone, why, old: nil, discarding: check.parts, stillExists: false, after: check.failing)
        case .retryLater, .headObject:
            return [said] + fail(check.failing.withoutBody)
        }
    }

    /// Forgets the upload (its log too) and begins a new one, once per attempt; says so, with the
    /// bytes of `discarding` thrown away. An old upload that may `stillExist` is given up (`old`:
    /// the log's record of it, else the current one). A second time, `after` ends the attempt.
    private mutating func startOver(
        _ reason: MultipartNote.StartOver.Reason, _ detail: String, old: PartLogCodec.State?, discarding: [Int: String],
        stillExists: Bool, after outcome: UploadOutcome?
    ) -> [Action] {
        if let ending = startOvers.spend(after: outcome, detail: detail) { return fail(ending) }
        let oldPlan = old?.plan ?? plan
        let oldUpload = old ?? uploadID.map {
            PartLogCodec.State(
                size: plan.size, partSize: plan.partSize, region: settings.region, uploadID: $0, url: settings.url, coding: settings.coding)
        }
        let bytes = oldPlan.bytes(ofParts: discarding.keys)
        var actions: [Action] = []
        if stillExists, !settings.journaled, let oldUpload { actions.append(.abort(uploadID: oldUpload.uploadID, url: oldUpload.url)) }
        state = .startingOver
        actions.append(.startOver(StartOver(
            reason: reason, detail: detail, old: oldUpload, discardedParts: discarding.count, discardedBytes: bytes,
            owesAbort: stillExists && settings.journaled && oldUpload != nil)))
        return actions
    }

    /// Ends the attempt. Without a log (or when asked: an upload id that could not be recorded),
    /// the upload is aborted, since no later attempt could resume it.
    private mutating func fail(_ outcome: UploadOutcome, abortUpload: Bool = false) -> [Action] {
        state = .finished
        waiting = []
        inFlight = []
        unrecorded = [:]
        if let uploadID, abortUpload || !settings.journaled, !outcome.isCancelled {
            return [.abort(uploadID: uploadID, url: settings.url), .fail(outcome)]
        }
        return [.fail(outcome)]
    }

    // MARK: Rules

    /// How a step's outcome is taken.
    private enum Routed {
        /// A 2xx answer.
        case ok(HTTPAnswer)
        /// The store says the upload, or one of its parts, is not there (for the steps that ask).
        case gone(UploadOutcome)
        /// Any other answer, or none.
        case other(UploadOutcome)
        /// Ends the attempt as it is: cancelled or refused.
        case end(UploadOutcome)
    }

    private static func route(_ outcome: UploadOutcome, goneApplies: Bool) -> Routed {
        switch outcome {
        case .cancelled: return .end(.cancelled)
        case .answered(let answer) where (200..<300).contains(answer.status): return .ok(answer)
        case .answered(let answer) where goneApplies && saysGone(status: answer.status, code: S3ErrorClassifier.errorCode(in: answer.excerpt)):
            return .gone(outcome)
        case .answered, .failed: return .other(outcome)
        case .refused: return .end(outcome.withoutBody)
        }
    }

    /// Whether a completion's failed answer leaves open whether the store made the object: a
    /// 5xx, or a request that went out and got no answer (dropped, timed out). A 4xx is a clear no.
    public static func leavesCompletionInDoubt(_ outcome: UploadOutcome) -> Bool {
        switch outcome {
        case .answered(let answer): answer.status >= 500
        case .failed(let failure): !failure.beforeSending
        case .refused, .cancelled: false
        }
    }

    /// The outcome of a record the part log refused after `answer` (too long for its format): the
    /// store's doing, its answer ruled retryable like any answer spoold cannot use. (The spool
    /// failing to record is the daemon's failure: it stops, never a retry that trusts a second fsync.)
    public static func journalRefused(_ refusal: PartJournalRefusal, what: String, answer: HTTPAnswer) -> UploadOutcome {
        .answered(answer.ruled(.retryable, because: "cannot record \(what): \(refusal)"))
    }

    /// The store's way of saying an upload, or a part of it, is not there (any more).
    public static func saysGone(status: Int, code: String?) -> Bool {
        (status == 404 && code == "NoSuchUpload") || (status == 400 && code == "InvalidPart")
    }

    /// The kept answer of a step as text (its XML).
    public static func text(of answer: HTTPAnswer) -> String { String(decoding: answer.body ?? [], as: UTF8.self) }

    /// The contents of every `<Tag>…</Tag>` in an XML answer, in order.
    public static func elements(_ tag: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = Substring(xml)
        while let open = rest.firstRange(of: "<\(tag)>"), let close = rest[open.upperBound...].firstRange(of: "</\(tag)>") {
            found.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return found
    }
}
