/// The `Server` header value thumbd's HTTP layer sends.
public let httpServerName = "thumbd"
