import Foundation
import XCTest

/// Keyframed tweens and spring keyframes over HTTP: streams and sessions play exactly the
/// timeline `/v1/timelines` computes, and a session retarget on a keyframed track springs
/// from where it is, leaving the remaining keyframes.
final class KeyframeEndpointTests: ServerTestCase {
    private func createSession(_ server: TestServer, _ document: String, speed: String) throws -> (id: String, state: JSONValue) {
        let response = try post(server, "/v1/sessions?speed=\(speed)", document)
        XCTAssertEqual(response.status, 201, response.text)
        let body = try response.json()
        return (try XCTUnwrap(body["id"]?.string), body)
    }

    private func command(_ server: TestServer, _ id: String, _ json: String) throws -> RawHTTPResponse {
        try post(server, "/v1/sessions/\(id)/commands", json)
    }

    private func watch(_ server: TestServer, _ id: String) throws -> StreamLineReader {
        let client = try server.client(readTimeout: 10)
        try client.sendRequest("GET", "/v1/sessions/\(id)/frames", headers: [])
        XCTAssertEqual(try client.readResponseHead().status, 200)
        return StreamLineReader(client)
    }

    /// A tween through keyframes (with offsets, easings, a null start and a colour) beside a
    /// spring through keyframes.
    static let keyframed = #"""
        {"fps": 20, "target": {"x": 10, "tint": "#000000", "y": 0},
         "motion": {"type": "group", "children": [
           {"type": "tween", "id": "kf", "duration": 1, "reverses": true, "properties": [
             {"path": "x", "keyframes": [null, 100, 20, 60], "offsets": [0, 0.2, 0.7, 1],
              "easings": ["quadratic.out", "linear", "cubic.inOut"]},
             {"path": "tint", "keyframes": ["#000000", "#ff0000", "#0000ff"]}]},
           {"type": "spring", "id": "sk", "response": 0.4, "dampingRatio": 0.6, "properties": [
             {"path": "y", "keyframes": [0, 50, 10], "durations": [0.25, null]}]}]}}
        """#

    /// Frame values by time, and the events, of the `/v1/timelines` answer.
    private func reference(_ server: TestServer) throws -> (times: [Double], tracks: [String: [JSONValue]], events: [JSONValue]) {
        let answer = try timeline(server, Self.keyframed)
        let times = try XCTUnwrap(answer["times"]?.doubles)
        var tracks: [String: [JSONValue]] = [:]
        for track in try XCTUnwrap(answer["tracks"]?.array) {
            tracks[try XCTUnwrap(track["path"]?.string)] = try XCTUnwrap(track["values"]?.array)
        }
        XCTAssertEqual(Set(tracks.keys), ["x", "tint.red", "tint.blue", "y"])
        return (times, tracks, try XCTUnwrap(answer["events"]?.array))
    }

    func testStreamPlaysKeyframesExactlyAsTheTimeline() throws {
        let server = try startServer()
        let reference = try reference(server)
        let client = try server.client(readTimeout: 10)
        defer { client.close() }
        try client.sendRequest("POST", "/v1/streams?speed=0", headers: [("Content-Type", "application/json")], body: Array(Self.keyframed.utf8))
        XCTAssertEqual(try client.readResponseHead().status, 200)
        let lines = try StreamLineReader(client).read(until: { $0["end"]?.bool == true })
        let frames = lines.filter { $0["values"] != nil }
        XCTAssertEqual(frames.count, reference.times.count)
        for frame in frames {
            let index = try XCTUnwrap(frame["frame"]?.int)
            XCTAssertEqual(frame["time"]?.double, reference.times[index])
            for (path, values) in reference.tracks {
                XCTAssertEqual(frame["values"]?[path], values[index], "frame \(index), \(path)")
            }
        }
        let events = lines.filter { $0["event"] != nil }
        XCTAssertEqual(events.map { $0["event"]?.string }, reference.events.map { $0["type"]?.string })
        XCTAssertEqual(events.map { $0["motion"]?.string }, reference.events.map { $0["motion"]?.string })
        XCTAssertEqual(events.map { $0["time"]?.double }, reference.events.map { $0["time"]?.double })
    }

    func testSessionPlaysKeyframesExactlyAsTheTimeline() throws {
        let server = try startServer()
        let reference = try reference(server)
        let (id, _) = try createSession(server, Self.keyframed, speed: "2")
        let lines = try watch(server, id).read(until: { $0["end"]?.bool == true })
        let frames = lines.filter { $0["values"] != nil }
        XCTAssertGreaterThan(frames.count, reference.times.count / 2, "most frames reach a watcher that joins at once")
        // The first frame is at the clock's time when the watcher joined; the rest on the grid.
        for (position, frame) in frames.enumerated() {
            let time = try XCTUnwrap(frame["time"]?.double)
            guard let index = reference.times.firstIndex(of: time) else {
                XCTAssertEqual(position, 0, "only the joining frame is off the grid: \(time)")
                continue
            }
            for (path, values) in reference.tracks {
                XCTAssertEqual(frame["values"]?[path], values[index], "t = \(time), \(path)")
            }
        }
        // Seeking anywhere gives the timeline's values there.
        XCTAssertEqual(try command(server, id, #"{"command":"seek","time":0.35}"#).status, 409, "a completed session takes no commands")
        let (paused, _) = try createSession(server, Self.keyframed, speed: "1")
        XCTAssertEqual(try command(server, paused, #"{"command":"pause"}"#).status, 200)
        for index in [3, 7, 14, 22, 30] where index < reference.times.count {
            let state = try command(server, paused, #"{"command":"seek","time":\#(reference.times[index])}"#).json()
            for (path, values) in reference.tracks {
                XCTAssertEqual(state["values"]?[path], values[index], "t = \(reference.times[index]), \(path)")
            }
        }
    }

    func testRetargetOnAKeyframedTweenSpringsFromWhereItIsAndDropsTheRemainingKeyframes() throws {
        let server = try startServer()
        // x: 0 → 100 → 0 → 100 at offsets 0, ⅓, ⅔, 1 over 9 s (1 s = 100/3 units).
        let document = #"{"fps":20,"target":{"x":0},"motion":{"type":"tween","duration":9,"properties":[{"path":"x","keyframes":[0,100,0,100]}]}}"#
        let (id, _) = try createSession(server, document, speed: "1")
        XCTAssertEqual(try command(server, id, #"{"command":"pause"}"#).status, 200)
        let before = try command(server, id, #"{"command":"seek","time":2.25}"#).json()
        XCTAssertEqual(try XCTUnwrap(before["values"]?["x"]?.double), 75, accuracy: 1e-9)
        let response = try post(server, "/v1/sessions/\(id)/retarget", #"{"path":"x","to":50}"#)
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(try XCTUnwrap(response.json()["values"]?["x"]?.double), 75, accuracy: 1e-9, "no jump")
        // Without the retarget x would be 70 at 8.1 s (third segment); the spring has rested on 50.
        let after = try command(server, id, #"{"command":"seek","time":8.1}"#).json()
        XCTAssertEqual(after["values"]?["x"]?.double, 50)
    }

    func testRetargetOnSpringKeyframesContinuesFromThePositionAndVelocity() throws {
        let server = try startServer()
        let document = #"{"fps":20,"target":{"y":0},"motion":{"type":"spring","response":2,"dampingRatio":0.8,"properties":[{"path":"y","keyframes":[0,50,10],"durations":[1]}]}}"#
        let (id, _) = try createSession(server, document, speed: "1")
        XCTAssertEqual(try command(server, id, #"{"command":"pause"}"#).status, 200)
        let at = try command(server, id, #"{"command":"seek","time":1.5}"#).json()
        let y = try XCTUnwrap(at["values"]?["y"]?.double)
        let response = try post(server, "/v1/sessions/\(id)/retarget", #"{"path":"y","to":-20}"#)
        XCTAssertEqual(response.status, 200, response.text)
        let state = try response.json()
        XCTAssertEqual(try XCTUnwrap(state["values"]?["y"]?.double), y, accuracy: 1e-9)
        let windowEnd = try XCTUnwrap(state["window"]?["end"]?.double)
        let end = try command(server, id, #"{"command":"seek","time":\#(windowEnd)}"#).json()
        XCTAssertEqual(end["values"]?["y"]?.double, -20)
    }
}
