import Foundation
import Testing
import ThumbHTTP
import ThumbRender
@testable import ThumbAPI
@testable import ThumbService

/// The one place failures become HTTP (Errors.md): status, code, body, headers, caching.
@Suite struct ErrorResponseTests {
    private static let all: [APIError] = [
        .service(.badRequest("b")), .unauthorized, .service(.forbiddenSource("f")), .badSignature, .notFound,
        .service(.sourceNotFound), .methodNotAllowed(allow: "GET, HEAD"), .service(.unsupportedFormat("u")),
        .service(.sourceTooLarge(limit: 9)), .service(.imageTooLarge("i")), .service(.corruptImage("c")),
        .service(.renderTimedOut), .service(.internalError("x")), .service(.originError("o")),
        .service(.overloaded), .service(.originTimeout("t")),
    ]
    private static let service: [ServiceError] = all.compactMap {
        if case .service(let error) = $0 { return error }
        return nil
    }

    @Test(arguments: all)
    func everyErrorIsJSONWithItsStatusAndCode(_ error: APIError) throws {
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
        #expect(APIError.methodNotAllowed(allow: "POST").response.header("allow") == "POST")
        #expect(APIError.unauthorized.response.header("www-authenticate") == "Bearer")
    }

    /// Facts about the source are cached briefly downstream; outages, load and refusals never are.
    @Test(arguments: all)
    func onlyLastingThumbnailErrorsAreCacheable(_ error: APIError) {
        var output = ServiceConfiguration.Output()
        output.errorMaxAgeSeconds = 7
        let r = error.thumbnailResponse(output, varies: true)
        let lasting = [404, 415, 422].contains(error.status) && error != .service(.renderTimedOut) && error != .notFound
        #expect(r.header("cache-control") == (lasting ? "public, max-age=7" : "no-store"), "\(error)")
        #expect(r.header("vary") == "Accept")
        #expect(error.thumbnailResponse(output, varies: false).header("vary") == nil)
    }

    /// `thumbd thumbnail` prints a render failure's code from the render
    /// layer's own table: it must be the code the API answers the mapped error with.
    @Test func aRenderErrorsCodeIsTheAPIsCodeOfItsServiceError() {
        let cases: [RenderError] = [.badRequest("b"), .unsupportedFormat("u"), .imageTooLarge("i"), .corruptImage("c"),
                                    .renderTimedOut, .workerCrashed("w"), .workerFiltered("f"), .outOfMemory("o"),
                                    .internalError("x")]
        for error in cases {
            #expect(ServiceError(error).code == error.code, "\(error)")
        }
    }

    /// The negative cache keeps what is not momentary: source facts and origin failures.
    @Test func theNegativeCacheRemembersSourceFactsAndOriginFailures() {
        let remembered = Self.service.filter { $0.lifetime != .momentary }.map(\.code)
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
