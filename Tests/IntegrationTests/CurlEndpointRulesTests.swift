import XCTest

/// `EndpointRulesTests` with `--transport curl`: the Content-Digest over a body streamed from its
/// descriptor (multipart framing included) and `--success-json` over a bounded answer. The hook
/// and usage-error cases do not involve the transport and run once, in the parent class.
final class CurlEndpointRulesTests: EndpointRulesTests {
    override class var transportArguments: [String] { ["--transport", "curl"] }

    private func transportIndependent() throws { throw XCTSkip("does not involve the transport: run by EndpointRulesTests") }

    override func testStatusLists_withJunk_exitTwoNamingTheEntry_andNothingIsSent() throws { try transportIndependent() }
    override func testSuccessJSON_invalidRule_isAUsageError() throws { try transportIndependent() }
    override func testHooks_runOncePerOutcome_withTheItemInTheEnvironment_andAFailingHookChangesNothing() throws {
        try transportIndependent()
    }
    override func testHooks_networkFailureHasAnEmptyStatus() throws { try transportIndependent() }
    override func testHooks_doNotInheritSecrets_butKeepTheRestOfTheEnvironment() throws { try transportIndependent() }
    override func testHooks_aHangingHookIsKilledAfterItsTimeout_andUploadsNeverWaitForHooks() throws { try transportIndependent() }
    override func testHooks_emptyCommandOrBadTimeout_isAUsageError() throws { try transportIndependent() }
    override func testHooks_runWithTheDescriptorLimitSpooldWasStartedWith() throws { try transportIndependent() }
    override func testHooks_anUploadInterruptedOnceTooOften_runsOnFailureWhenRecoveryParksIt() throws {
        try transportIndependent()
    }
}
