import Foundation
import Testing
import ThumbHTTP
@testable import ThumbAPI
@testable import ThumbService

/// The one place failures become HTTP (Errors.md): status, code, body, headers, caching.
@Suite struct ErrorResponseTests {
    private static let all: [ServiceError] = [
        .badRequest("b"), .unauthorized, .forbiddenSource("f"), .badSignature, .notFound, .sourceNotFound,
        .methodNotAllowed(allow: "GET, HEAD"), .unsupportedFormat("u"), .sourceTooLarge(limit: 9),
        .imageTooLarge("i"), .corruptImage("c"), .renderTimedOut, .internalError("x"), .originError("o"),
        .overloaded, .originTimeout("t"),
    ]

    @Test(arguments: all)
    func everyErrorIsJSONWithItsStatusAndCode(_ error: ServiceError) throws {
        let r = error.response
        #expect(r.status == error.status && r.header("content-type") == "application/json")
        let body = String(decoding: r.body, as: UTF8.self)
        #expect(body.hasPrefix(#"{"error":"\#(error.code)","message":"#), "\(body)")
        #expect(r.header("retry-after") == (error.status == 503 ? "1" : nil))
    }

    @Test func statusesAndCodesAreTheSpecs() {
        let table = Self.all.map { "\($0.status) \($0.code)" }
        #expect(table == ["400 bad_request", "401 unauthorized", "403 forbidden_source", "403 bad_signature",
                          "404 not_found", "404 source_not_found", "405 method_not_allowed",
                          "415 unsupported_format", "422 source_too_large", "422 image_too_large",
                          "422 corrupt_image", "422 corrupt_image", "500 internal_error", "502 origin_error",
                          "503 overloaded", "504 origin_timeout"])
    }

    @Test func refusalsNameWhatTheyWant() {
        #expect(ServiceError.methodNotAllowed(allow: "POST").response.header("allow") == "POST")
        #expect(ServiceError.unauthorized.response.header("www-authenticate") == "Bearer")
    }

    /// Facts about the source are cached briefly downstream; outages, load and refusals never are.
    @Test(arguments: all)
    func onlyLastingThumbnailErrorsAreCacheable(_ error: ServiceError) {
        var output = ServiceConfiguration.Output()
        output.errorMaxAgeSeconds = 7
        let r = error.thumbnailResponse(output, varies: true)
        let lasting = [404, 415, 422].contains(error.status) && error != .renderTimedOut && error != .notFound
        #expect(r.header("cache-control") == (lasting ? "public, max-age=7" : "no-store"), "\(error)")
        #expect(r.header("vary") == "Accept")
        #expect(error.thumbnailResponse(output, varies: false).header("vary") == nil)
    }

    /// The negative cache keeps what is not momentary: source facts and origin failures.
    @Test func theNegativeCacheRemembersSourceFactsAndOriginFailures() {
        let remembered = Self.all.filter { $0.lifetime != .momentary }.map(\.code)
        #expect(remembered == ["source_not_found", "unsupported_format", "source_too_large",
                               "image_too_large", "corrupt_image", "origin_error"])
    }

    /// The server's own errors take the same JSON shape through the hook the daemon sets.
    @Test func protocolErrorsRenderLikeEveryOtherError() {
        let r = ErrorResponse.render(HTTPError(status: 431, code: "headers_too_large", message: "a \"b\""))
        #expect(r.status == 431 && r.header("content-type") == "application/json" && r.header("retry-after") == nil)
        #expect(String(decoding: r.body, as: UTF8.self) == #"{"error":"headers_too_large","message":"a \"b\""}"#)
        let busy = ErrorResponse.render(HTTPError(status: 503, code: "overloaded", message: "m"))
        #expect(busy.header("retry-after") == "1")
    }

    /// The daemon hands its server that rendering: a request the server refuses itself is JSON too.
    @Test func theDaemonsServerAnswersItsOwnErrorsInJSON() throws {
        try EndToEndTests.withDaemon { daemon, _ in
            let r = daemon.get("/" + String(repeating: "a", count: 9000))
            #expect(r.status == 414 && r.headers["content-type"] == "application/json")
            #expect(String(decoding: r.body, as: UTF8.self).hasPrefix(#"{"error":"uri_too_long","message":"#))
        }
    }
}
