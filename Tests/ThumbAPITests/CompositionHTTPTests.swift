import Foundation
import Testing
import ThumbTestSupport
@testable import ThumbAPI

/// The composition parameters over HTTP (API.md § Composition): the answer's
/// size and headers, the shared keys, and prefetch warming an attention crop.
@Suite(.serialized) struct CompositionHTTPTests {
    private func encoded(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

    @Test func containAnswersTheWholeBoxAndBgAndBlurSplitTheKey() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let src = encoded(origin.url("/cat.jpg"))
            let contain = daemon.get("/thumbnail?url=\(src)&w=300&h=300&fit=contain&bg=102030&format=jpeg")
            #expect(contain.status == 200 && contain.headers["content-type"] == "image/jpeg")
            #expect(contain.headers["x-image-width"] == "300" && contain.headers["x-image-height"] == "300")
            let spelled = daemon.get("/thumbnail?url=\(src)&w=300&h=300&fit=contain&bg=102030FF&format=jpeg")
            #expect(spelled.headers["x-cache"] == "memory" && spelled.headers["etag"] == contain.headers["etag"])
            let otherBg = daemon.get("/thumbnail?url=\(src)&w=300&h=300&fit=contain&bg=ffffff&format=jpeg")
            #expect(otherBg.status == 200 && otherBg.headers["etag"] != contain.headers["etag"])
            // Transparent padding: auto picks PNG.
            let clear = daemon.get("/thumbnail?url=\(src)&w=300&h=300&fit=contain")
            #expect(clear.headers["content-type"] == "image/png" && clear.headers["x-image-height"] == "300")
            // blur=4 at w=64 is blur=2 at w=32 with dpr=2: one entry.
            let big = daemon.get("/thumbnail?url=\(src)&w=64&blur=4&format=png")
            let dpr = daemon.get("/thumbnail?url=\(src)&w=32&blur=2&dpr=2&format=png")
            #expect(big.status == 200 && dpr.headers["x-cache"] == "memory" && dpr.headers["etag"] == big.headers["etag"])
            let sharp = daemon.get("/thumbnail?url=\(src)&w=64&blur=4&sharpen=1&format=png")
            #expect(sharp.status == 200 && sharp.headers["etag"] != big.headers["etag"] && sharp.body != big.body)
        }
    }

    @Test func hostileValuesAre400NamingTheParameter() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let src = encoded(origin.url("/cat.jpg"))
            for (query, name) in [("fit=cover&w=9&h=9&fp=1e9", "fp"), ("fit=cover&w=9&h=9&fp=0.5,0.5&gravity=north", "fp"),
                                  ("w=9&bg=zzzzzz", "bg"), ("w=9&blur=100.1", "blur"), ("w=9&blur=1000000", "blur"),
                                  ("w=9&sharpen=11", "sharpen"), ("w=9&gravity=up", "gravity"),
                                  ("w=9&blur=1&blur=2", "blur"), ("fit=contain&w=9", "contain")] {
                let r = daemon.get("/thumbnail?url=\(src)&\(query)")
                let body = String(decoding: r.body, as: UTF8.self)
                #expect(r.status == 400 && body.contains(name), "\(query): \(r.status) \(body)")
            }
            #expect(origin.hits("/cat.jpg") == 0, "refused before any download")
        }
    }

    @Test func prefetchWarmsAnAttentionCropServedFromMemory() throws {
        try EndToEndTests.withDaemon { daemon, origin in
            let url = origin.url("/cat.jpg")
            let body = #"{"items": [{"url": "\#(url)", "w": 40, "h": 40, "fit": "cover", "gravity": "attention", "#
                + #""format": "webp", "blur": 1.5}]}"#
            let r = daemon.get("/prefetch", method: "POST", body: Array(body.utf8))
            #expect(r.status == 202)
            #expect(eventually { (try? JSONSerialization.jsonObject(with: Data(daemon.get("/stats").body)) as? [String: Any])
                .flatMap { $0["prefetch"] as? [String: Any] }?["completed"] as? Int == 1 })
            let hit = daemon.get("/thumbnail?url=\(encoded(url))&w=40&h=40&fit=cover&gravity=attention&format=webp&blur=1.5")
            #expect(hit.status == 200 && hit.headers["x-cache"] == "memory" && hit.headers["x-image-width"] == "40")
            #expect(origin.hits("/cat.jpg") == 1)
        }
    }
}
