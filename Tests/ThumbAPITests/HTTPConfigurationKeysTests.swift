import Testing
@testable import ThumbAPI
@testable import ThumbService

/// `http.sendTimeoutSeconds` and `http.maxPendingResponseBytes` (Configuration.md).
@Suite struct HTTPConfigurationKeysTests {
    private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.parse(Array(text.utf8))
    }

    @Test func defaultsAreThirtySecondsAnd256MiB() throws {
        let c = try parse("{}")
        #expect(c.http.sendTimeoutSeconds == 30 && c.http.maxPendingResponseBytes == 268_435_456)
    }

    @Test func bothAreReadAndPrintedByCheckConfig() throws {
        let c = try parse(#"{"http": {"sendTimeoutSeconds": 0.25, "maxPendingResponseBytes": 1048576}}"#)
        #expect(c.http.sendTimeoutSeconds == 0.25 && c.http.maxPendingResponseBytes == 1_048_576)
        let printed = c.json.serialized()
        #expect(printed.contains(#""sendTimeoutSeconds":0.25"#) && printed.contains(#""maxPendingResponseBytes":1048576"#),
                "\(printed)")
        #expect(try parse(printed) == c, "what check-config prints reads back the same")
    }

    @Test(arguments: [
        (#"{"http": {"sendTimeoutSeconds": 0}}"#, "http.sendTimeoutSeconds"),
        (#"{"http": {"sendTimeoutSeconds": "30"}}"#, "http.sendTimeoutSeconds"),
        (#"{"http": {"sendTimeoutSeconds": 100000}}"#, "http.sendTimeoutSeconds"),
        (#"{"http": {"maxPendingResponseBytes": 1000}}"#, "http.maxPendingResponseBytes"),
        (#"{"http": {"maxPendingResponseBytes": 1.5e6}}"#, "http.maxPendingResponseBytes"),
        (#"{"http": {"maxPendingResponseBytes": -1}}"#, "http.maxPendingResponseBytes"),
    ])
    func badValuesNameTheKey(_ text: String, _ key: String) {
        #expect(throws: ConfigurationError.self) { try parse(text) }
        do { _ = try parse(text) } catch { #expect(error.key == key) }
    }
}
