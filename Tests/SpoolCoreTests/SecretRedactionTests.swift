import SpoolCore
import XCTest

final class SecretRedactionTests: XCTestCase {
    func testValuesTokensAndCutEnds_areRedacted_shortValuesKept() {
        let redaction = SecretRedaction(["Bearer abc123xyz", "s3cret-key/K7", "abc"])
        XCTAssertEqual(redaction.redact("auth=Bearer abc123xyz!"), "auth=REDACTED!")
        XCTAssertEqual(redaction.redact("token abc123xyz, key s3cret-key/K7"), "token REDACTED, key REDACTED")
        XCTAssertEqual(redaction.redact("... Bearer abc1"), "... REDACTED", "a secret cut short by the excerpt's end")
        XCTAssertEqual(redaction.redact("abc is short and ordinary"), "abc is short and ordinary")
        XCTAssertEqual(redaction.redact("nothing here"), "nothing here")
        XCTAssertEqual(SecretRedaction().redact("Bearer abc123xyz"), "Bearer abc123xyz")
    }

    func testCredentialValues_ofHeaders() {
        let headers = ["Authorization": "Bearer t0ken-value", "X-Camera": "camera-7", "cookie": "session=abcdef"]
        XCTAssertEqual(Set(SecretRedaction.values(of: headers)), ["Bearer t0ken-value", "session=abcdef"])
        XCTAssertEqual(SecretRedaction.values(of: headers, all: true).count, 3)
    }

    func testOutcome_everyTextRedacted_classKept() {
        let outcome = UploadOutcome.answered(HTTPAnswer(status: 400, excerpt: "you sent Bearer t0ken-value").ruled(.final, because: "t0ken-value"))
        let redacted = SecretRedaction(["Bearer t0ken-value"]).redact(outcome)
        XCTAssertEqual(redacted.responseExcerpt, "you sent REDACTED")
        XCTAssertEqual(redacted.answer?.ruleFailure, "REDACTED")
        XCTAssertEqual(redacted.class, outcome.class)
        let refused = SecretRedaction(["Bearer t0ken-value"]).redact(.refusal(.redirectRefused, "server said t0ken-value", excerpt: "t0ken-value"))
        XCTAssertEqual(refused.errorText, "server said REDACTED")
        XCTAssertEqual(refused.responseExcerpt, "REDACTED")
        XCTAssertEqual(SecretRedaction(["Bearer t0ken-value"]).redact(.failed(.unidentified("t0ken-value", beforeSending: false))).errorText, "REDACTED")
    }
}

final class SecretFileRuleTests: XCTestCase {
    func testPrivateFiles_passOthersAreSaid() {
        XCTAssertNil(SecretFileRule.warning(owner: 999, permissions: 0o600, user: 999))
        XCTAssertNil(SecretFileRule.warning(owner: 0, permissions: 0o400, user: 999), "root's file is fine")
        XCTAssertNil(SecretFileRule.warning(owner: 999, permissions: 0o711, user: 999), "execute bits let no one read it")
        XCTAssertEqual(SecretFileRule.warning(owner: 999, permissions: 0o644, user: 999),
                       "its mode 0644 lets other users read it (chmod 600, chown to spoold's user)")
        XCTAssertEqual(SecretFileRule.warning(owner: 999, permissions: 0o622, user: 999)?.contains("change it"), true)
        XCTAssertEqual(SecretFileRule.warning(owner: 1234, permissions: 0o600, user: 999)?.hasPrefix("it belongs to uid 1234"), true)
    }
}
