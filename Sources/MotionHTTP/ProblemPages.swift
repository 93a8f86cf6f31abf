/// The pages behind every problem `type` URI (`/problems/{name}`): what the problem means
/// and what to do about it. Every `type` the service writes is listed here; a test checks
/// that each one it can produce resolves (docs/errors.md has the same explanations).
enum ProblemPages {
    struct Page: Sendable {
        var name: String
        var title: String
        var status: String
        var text: String
    }

    static let all: [Page] = [
        Page(name: "malformed-document", title: "Malformed timeline document", status: "400",
             text: "The body is not a timeline document the service can read: malformed JSON, a missing required field (`motion`), a field of the wrong JSON type, or an unknown field (typos are never ignored; the message suggests the field you may have meant). Each entry of `errors` names the field by its JSON pointer."),
        Page(name: "invalid-document", title: "Invalid timeline document", status: "422",
             text: "The document is well-formed but asks for something meaningless or too large: an out-of-range value (a negative duration, friction outside (0, 1]), an unknown easing or spec name, a property path missing from `target` with no `from`, a motion that never ends without a `window`, or more than a limit allows (the message names the limit, such as `max-samples`). Each entry of `errors` names the field by its JSON pointer."),
        Page(name: "malformed-body", title: "Malformed request body", status: "400",
             text: "A session command or retarget body is not what the endpoint reads: malformed JSON, a missing `command`, `path` or `to`, a wrong type, or an unknown field. Each entry of `errors` names the field by its JSON pointer."),
        Page(name: "invalid-body", title: "Invalid request body", status: "422",
             text: "A session command or retarget is well-formed but cannot apply: a `seek` time outside the session's window, a retarget `path` that is not animated in the session, or a `to` of the wrong shape. Each entry of `errors` names the field by its JSON pointer."),
        Page(name: "bad-request", title: "Bad request", status: "400",
             text: "The request itself is wrong: a query parameter the endpoint does not take, or one with a bad value (`speed`, `limit`, `after`), named in `errors` by `parameter`; or a malformed request head (both `Content-Length` and `Transfer-Encoding`, conflicting lengths, a folded header, no `Host`, `%00` in the target), after which the connection is closed."),
        Page(name: "not-found", title: "Not found", status: "404",
             text: "No resource at this path. The endpoints are listed in the README and in `/openapi.yaml`."),
        Page(name: "session-not-found", title: "Session not found", status: "404",
             text: "No live session has this id: it was never created, was deleted, or expired after going unwatched for `--session-ttl` seconds. `GET /v1/sessions` lists the live ones."),
        Page(name: "method-not-allowed", title: "Method not allowed", status: "405",
             text: "The path exists but does not serve this method. The `Allow` header lists the methods it does serve."),
        Page(name: "request-timeout", title: "Request timeout", status: "408",
             text: "The request head did not arrive within `--header-timeout` seconds of its first byte, or the body came slower than `--min-body-rate` bytes a second. The connection is closed."),
        Page(name: "conflict", title: "Conflict", status: "409",
             text: "The session cannot take this command in its state: it is `stopped` or `completed` (the body's `state` says which), or a retarget asks to redirect what cannot be redirected (a path or physics motion, additive motions, a clock running backwards). The message says why; `errors` points at the field."),
        Page(name: "payload-too-large", title: "Payload too large", status: "413",
             text: "The request body is larger than `--max-body-bytes` (1 MiB by default). It is answered as soon as that is known, and the connection is closed."),
        Page(name: "uri-too-long", title: "URI too long", status: "414",
             text: "The request target holds more than 256 query parameters, or the request line does not fit the connection's memory pool (`--connection-memory`, 16 KiB by default). The connection is closed."),
        Page(name: "header-fields-too-large", title: "Request header fields too large", status: "431",
             text: "The request head does not fit the connection's memory pool (`--connection-memory`, 16 KiB by default). Send fewer or shorter headers. The connection is closed."),
        Page(name: "unsupported-media-type", title: "Unsupported media type", status: "415",
             text: "The body must be JSON: send `Content-Type: application/json` (or another `application/…+json` type)."),
        Page(name: "too-many-requests", title: "Too many requests", status: "429",
             text: "The session already has `--max-watchers` watchers. Retry after the `Retry-After` seconds, or watch from fewer clients."),
        Page(name: "not-implemented", title: "Not implemented", status: "501",
             text: "The request uses a `Transfer-Encoding` other than `chunked`, which the service does not implement."),
        Page(name: "http-version-not-supported", title: "HTTP version not supported", status: "505",
             text: "The request line names an HTTP version other than HTTP/1.0 or HTTP/1.1 (HTTP/2 is not served on this port). The connection is closed."),
        Page(name: "internal-error", title: "Internal error", status: "500",
             text: "The HTTP library could not process the request (for example, it ran out of memory for the connection). The connection is closed; retrying is safe."),
        Page(name: "unavailable", title: "Service unavailable", status: "503",
             text: "The service cannot take this request now: it is shutting down (draining), or it is at a limit (`--max-streams`, `--max-sessions`, every compute thread busy with `--max-queued-computations` waiting, or `--max-held-response-bytes` of unread answers). Retry after the `Retry-After` seconds, on another replica if it is draining."),
    ]

    static func page(_ name: String) -> Page? { all.first { $0.name == name } }

    /// The page as a small self-contained HTML document.
    static func html(_ page: Page) -> [UInt8] {
        let text = codeSpans(escape(page.text))
        let body = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>\(escape(page.title))</title></head>
        <body>
        <h1>\(escape(page.title))</h1>
        <p>HTTP status \(page.status). Problem type <code>/problems/\(escape(page.name))</code>.</p>
        <p>\(text)</p>
        <p>Every error of this service is an <code>application/problem+json</code> answer (RFC 9457) whose <code>errors</code> list the problems found (the first 100; <code>detail</code> counts them all), each with the JSON <code>pointer</code> of the field at fault (or the query <code>parameter</code>).</p>
        </body></html>

        """
        return Array(body.utf8)
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        for ch in text {
            switch ch {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            default: out.append(ch)
            }
        }
        return out
    }

    /// `code` spans written with backticks.
    private static func codeSpans(_ text: String) -> String {
        var out = "", open = false
        for ch in text {
            if ch == "`" {
                out += open ? "</code>" : "<code>"
                open.toggle()
            } else {
                out.append(ch)
            }
        }
        return out
    }
}
