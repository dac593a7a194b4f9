import Testing
import ThumbHTTP

@Test func serverNameIsThumbd() {
    #expect(httpServerName == "thumbd")
}
