import HTTPTypes
import Hummingbird
import NIOCore

/// The browser's pages: the live viewer (`/view/{session}`), an archive's (`/archive/{id}/view`), their files
/// (`/viewer/{file}`, ``ViewerAssets``), and a page at `/` saying what this server is. The token in a viewer
/// link's query decides what it may see, so the pages themselves are public; they are sent with no-referrer so
/// that the token does not leak to other sites.
struct ViewerRoutes: RelayRoutes {
    let viewer: ViewerAssets

    func addRoutes(to router: Router<RelayRequestContext>) {
        // Someone who opens the bare address learns what this is and what to open instead.
        router.get("/") { _, _ in
            Response(
                status: .ok,
                headers: [
                    .contentType: "text/html; charset=utf-8", .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'",
                    .xContentTypeOptions: "nosniff",
                ],
                body: .init(byteBuffer: ByteBuffer(string: Self.homePage)))
        }
        router.get("/view/{session}") { _, _ in try response("index.html") }
        router.get("/archive/{id}/view") { _, _ in try response("archive.html") }
        router.get("/viewer/{file}") { _, context in try response(try context.parameters.require("file")) }
    }

    static let homePage = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>screenrelay</title>
        <style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em;color:#222}code{background:#eee;padding:0 .2em}</style>
        </head><body>
        <h1>screenrelay</h1>
        <p>This is a <strong>screenpub session server</strong>: it relays screens shared with <code>screenpub</code> to the
        people who were given a link to watch them.</p>
        <p>To watch, open the viewer link you were sent, as it is: it looks like <code>…/view/SESSION?token=…</code>.
        There is nothing to see at this address itself.</p>
        <p>To run or manage a relay: <code>screenrelay --help</code>, <code>man screenrelay</code>, and the README in
        <code>/usr/share/doc/screenpub/</code>.</p>
        </body></html>

        """

    private func response(_ name: String) throws -> Response {
        guard ViewerAssets.files.contains(where: { $0.name == name }) else { throw HTTPError(.notFound) }
        guard let asset = viewer[name] else {
            throw HTTPError(.internalServerError, message: "the viewer's files are not installed (looked in \(viewer.searched.joined(separator: ", ")))")
        }
        var headers: HTTPFields = [
            .contentType: asset.contentType,
            .cacheControl: "no-store",
            .referrerPolicy: "no-referrer",
            .xContentTypeOptions: "nosniff",
        ]
        if name.hasSuffix(".html") {
            headers[.contentSecurityPolicy] = "default-src 'self'; connect-src 'self'; img-src 'self' data:; media-src 'self' blob:; frame-ancestors 'none'"
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }
}
