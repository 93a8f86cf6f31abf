"""The playground (`GET /`, docs/playground.md) in headless Chromium, against a real server.

Every expectation is read from the server itself: the page's plot, stage and problems are
compared with what /v1/timelines, /v1/sessions and /v1/springs answer for the same document.
Screenshots go to .build/test-output/browser/playground-*.png.
"""
import json
import re
import time

import pytest

@pytest.fixture
def page(browser):
    """A 1280×800 page that lets Playwright evaluate its waits: the playground's own
    Content-Security-Policy forbids eval, which `wait_for_function` uses (the policy itself is
    checked with a plain page in test_the_page_runs_under_its_content_security_policy)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    yield context.new_page()
    context.close()


TINY = {"fps": 10, "target": {"x": 0},
        "motion": {"type": "tween", "duration": 0.2, "properties": [{"path": "x", "to": 1}]}}


def open_playground(page, server, example=""):
    """Loads the page (optionally on one example) and waits until its first timeline is drawn."""
    outside = []
    page.on("request", lambda request: None if request.url.startswith(server.url) or request.url.startswith(("data:", "blob:"))
            else outside.append(request.url))
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{server.url}/#{example}")
    page.wait_for_selector('body[data-loaded="true"]', timeout=20000)
    page.evaluate("() => playground.pause()")
    return outside, errors


def editor_document(page):
    return json.loads(page.input_value("#editor"))


def as_page_asks(document):
    """The document as the page posts it: tracks layout with events (docs/documents.md)."""
    copy = json.loads(json.dumps(document))
    copy["output"] = {**copy.get("output", {}), "layout": "tracks", "events": True, "final": False}
    return copy


def wait_computed(page):
    page.wait_for_function("document.querySelector('#status').classList.contains('ok') || document.querySelector('#status').classList.contains('bad')")


def pick(page, example_id):
    page.select_option("#examples", example_id)
    page.wait_for_function(f"playground.state.timeline && location.hash === '#{example_id}'")
    wait_computed(page)
    page.evaluate("playground.pause()")


def scrub_to(page, seconds):
    """Moves the time slider as a person would (the input event a drag produces)."""
    page.evaluate("""(t) => { const s = document.querySelector('#scrub'); s.value = String(t);
                       s.dispatchEvent(new Event('input', { bubbles: true })); }""", seconds)


def server_has(server, path, body):
    status, _, _ = server.request("POST", path, body)
    return status != 404


def supported_formats(server):
    formats = []
    for name in ["csv", "css", "waapi", "lottie", "svg"]:
        status, _, payload = server.request("POST", "/v1/timelines", {**TINY, "output": {"format": name}})
        if status == 200:
            formats.append(name)
        else:
            errors = json.loads(payload).get("errors", [])
            if errors and not any(error.get("pointer") == "/output/format" for error in errors):
                formats.append(name)
    return formats


def test_page_and_assets_are_served_with_types_and_caching(server):
    status, headers, body = server.request("GET", "/")
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Cache-Control"] == "no-cache"
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    page = body.decode()
    assets = re.findall(r'(?:src|href)="(/playground/[^"]+)"', page)
    assert len(assets) >= 3, page[:500]
    types = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
    for asset in assets:
        match = re.fullmatch(r"/playground/(\w+)\.([0-9a-f]{16})(\.\w+)", asset)
        assert match, asset
        name, version, extension = match.groups()
        status, headers, body = server.request("GET", asset)
        assert status == 200, asset
        assert headers["Content-Type"] == types[extension]
        assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert headers["ETag"] == f'"{version}"'
        # under its plain name, or an old version, it must be revalidated
        for other in [f"/playground/{name}{extension}", f"/playground/{name}.{'0' * 16}{extension}"]:
            status, headers, again = server.request("GET", other)
            assert (status, headers["Cache-Control"], again) == (200, "no-cache", body), other
    assert server.request("GET", "/playground/missing.js")[0] == 404
    assert server.request("POST", "/")[0] == 405
    # the page names no other host: no CDN, no web font
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page)


def test_the_page_runs_under_its_content_security_policy(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    strict = context.new_page()
    console = []
    strict.on("console", lambda message: console.append(message.text))
    outside, errors = open_playground(strict, server, "group")
    assert strict.locator("#plot path.track").count() == 6
    strict.click('.tab[data-tab="live"]')
    strict.click('.tab[data-tab="export"]')
    context.close()
    assert not [line for line in console if "Content Security Policy" in line], console
    assert not outside and not errors, (outside, errors)


def test_every_example_plots_one_line_per_track_with_its_events(page, server):
    outside, errors = open_playground(page, server)
    examples = page.eval_on_selector_all("#examples option", "options => options.map(o => o.value)")
    core = {"tween", "easings", "physics", "spring", "decay", "path", "group", "sequential", "contiguous"}
    assert core <= set(examples), examples
    kinds = set()
    for example in examples:
        pick(page, example)
        document = editor_document(page)
        kinds.add(document["motion"]["type"])
        answer = server.post_json("/v1/timelines", as_page_asks(document))
        lines = page.eval_on_selector_all("#plot path.track", "paths => paths.map(p => p.dataset.path)")
        assert lines == [track["path"] for track in answer["tracks"]], example
        marks = page.eval_on_selector_all("#plot line.event", "marks => marks.length")
        assert marks == len(answer["events"]), example
        # one stage element per moving thing, each reading a track of this timeline
        read = page.eval_on_selector_all("#stage [data-tracks]", "nodes => nodes.map(n => n.dataset.tracks.split(' '))")
        every = [path for paths in read for path in paths]
        assert sorted(every) == sorted(track["path"] for track in answer["tracks"]), example
    assert {"tween", "physics", "spring", "decay", "path", "group", "sequence"} <= kinds
    assert not outside and not errors, (outside, errors)


def test_scrubbing_moves_the_elements_to_the_timelines_values(page, server):
    open_playground(page, server, "spring")
    answer = server.post_json("/v1/timelines", as_page_asks(editor_document(page)))
    xs = next(t["values"] for t in answer["tracks"] if t["path"] == "dot.x")
    ys = next(t["values"] for t in answer["tracks"] if t["path"] == "dot.y")
    centres = []
    for k in [0, 12, 30, len(answer["times"]) - 1]:
        scrub_to(page, answer["times"][k])
        node = page.locator('#stage g.point[data-entity="dot"]')
        assert float(node.get_attribute("data-x")) == xs[k]
        assert float(node.get_attribute("data-y")) == ys[k]
        box = node.locator(".body").bounding_box()
        centres.append((box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, xs[k], ys[k]))
        assert page.input_value("#scrub") == str(answer["times"][k]) or abs(float(page.input_value("#scrub")) - answer["times"][k]) < 1e-12
    # on screen, the dot moves by the same scale along both axes, in the values' direction
    (x0, y0, vx0, vy0), (x1, y1, vx1, vy1) = centres[0], centres[-1]
    scale = (x1 - x0) / (vx1 - vx0)
    assert scale > 0
    for (px, py, vx, vy) in centres:
        assert abs(px - (x0 + (vx - vx0) * scale)) < 1.5
        assert abs(py - (y0 + (vy - vy0) * scale)) < 1.5

    # a lane: the ball between its walls sits where its value falls between the rail's ends
    pick(page, "physics")
    answer = server.post_json("/v1/timelines", as_page_asks(editor_document(page)))
    values = answer["tracks"][0]["values"]
    low, high = min(values), max(values)
    rail = page.locator('#stage g.lane[data-entity="ball"] line.rail')
    x0, x1 = float(rail.get_attribute("x1")), float(rail.get_attribute("x2"))
    for k in [0, 5, 17, 40]:
        scrub_to(page, answer["times"][k])
        dot = page.locator('#stage circle[data-path="ball"]')
        assert float(dot.get_attribute("data-value")) == values[k]
        assert abs(float(dot.get_attribute("cx")) - (x0 + (values[k] - low) / (high - low) * (x1 - x0))) < 0.01

    # dragging on the plot seeks: the playhead and the clock follow the pointer
    plot = page.locator("#plot").bounding_box()
    page.mouse.click(plot["x"] + plot["width"] - 20, plot["y"] + plot["height"] / 2)
    late = page.evaluate("playground.state.time")
    page.mouse.click(plot["x"] + plot["width"] * 0.5, plot["y"] + plot["height"] / 2)
    middle = page.evaluate("playground.state.time")
    assert answer["window"]["start"] < middle < late <= answer["window"]["end"]
    assert page.inner_text("#clock") == f"{middle:.3f} s"


def test_play_pause_speed_and_loop(page, server):
    open_playground(page, server, "tween")
    page.select_option("#speed", "2")
    page.uncheck("#loop")
    page.click("#play")
    page.wait_for_timeout(300)
    assert page.inner_text("#play") == "Pause"
    page.wait_for_function("!playground.state.playing", timeout=5000)   # 1.2 s at speed 2, no loop
    assert page.evaluate("playground.state.time") == page.evaluate("playground.state.timeline.window.end")
    page.check("#loop")
    page.click("#play")
    page.wait_for_timeout(900)
    assert page.evaluate("playground.state.playing")   # looped past the end
    page.click("#play")
    stopped = page.evaluate("playground.state.time")
    page.wait_for_timeout(200)
    assert page.evaluate("playground.state.time") == stopped


def test_problems_are_shown_beside_the_field_they_name(page, server, output_dir):
    open_playground(page, server, "tween")
    text = page.input_value("#editor")
    broken = text.replace('"duration": 1.2', '"duration": -1').replace('"fps": 60', '"fps": 60, "extra": 1')
    assert broken != text
    page.fill("#editor", broken)
    page.wait_for_selector("#marks .mark")
    wait_computed(page)
    status, _, payload = server.request("POST", "/v1/timelines", as_page_asks(json.loads(broken)))
    assert status in (400, 422)
    problems = json.loads(payload)["errors"]
    lines = broken.split("\n")
    for problem in problems:
        key = problem["pointer"].rsplit("/", 1)[-1]
        line = next(n for n, l in enumerate(lines, 1) if f'"{key}"' in l)
        mark = page.locator(f'#marks .mark[data-line="{line}"]')
        assert problem["message"] in mark.inner_text()
        # beside its line: level with the line number in the gutter
        number = page.locator(f"#gutter div:nth-child({line})")
        assert number.inner_text() == str(line)
        assert abs(mark.bounding_box()["y"] - number.bounding_box()["y"]) < 2
        assert "bad" in number.get_attribute("class")
        # and listed below the editor with its pointer
        assert page.locator(f'#problems li[data-pointer="{problem["pointer"]}"]').count() == 1
    assert "stale" in page.get_attribute("body", "class")
    page.screenshot(path=str(output_dir / "playground-error.png"))

    # a JSON syntax error is marked at its line without asking the server
    no_comma = text.replace('"fps": 60,', '"fps": 60', 1)
    page.fill("#editor", no_comma)
    line = next(n for n, l in enumerate(no_comma.split("\n"), 1) if '"target"' in l)
    page.wait_for_selector(f'#marks .mark[data-line="{line}"]')
    assert "JSON" in page.inner_text(f'#marks .mark[data-line="{line}"]')

    # fixed: the marks go and the plot comes back
    page.fill("#editor", text)
    page.wait_for_function("!document.querySelector('#marks .mark') && !document.body.classList.contains('stale')")


def wait_for_json_text(page, value, timeout=10.0):
    """Waits until #export-text holds `value` as JSON (the text of the tab shown before a
    click may also be JSON: waiting for any JSON raced with the new tab's answer)."""
    deadline = time.monotonic() + timeout
    text = None
    while time.monotonic() < deadline:
        text = page.inner_text("#export-text")
        try:
            if json.loads(text) == value:
                return
        except ValueError:
            pass
        page.wait_for_timeout(50)
    raise AssertionError(f"#export-text never held the expected JSON; last: {text[:300] if text else text!r}")


def test_exports_offer_the_servers_formats_and_copy_them(page, server):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    open_playground(page, server, "spring")
    tabs = page.eval_on_selector_all("#formats .format", "buttons => buttons.map(b => b.dataset.format)")
    assert tabs == ["document", "curl", "json"] + supported_formats(server)
    document = editor_document(page)
    page.click('#formats .format[data-format="json"]')
    # The document tab's text also starts with {"fps": wait for the answer itself.
    wait_for_json_text(page, server.post_json("/v1/timelines", document))
    assert json.loads(page.inner_text("#export-text")) == server.post_json("/v1/timelines", document)
    page.click("#copy-export")
    page.wait_for_function("document.querySelector('#copy-export').textContent === 'Copied'")
    assert json.loads(page.evaluate("navigator.clipboard.readText()")) == server.post_json("/v1/timelines", document)
    for name in supported_formats(server):
        page.click(f'#formats .format[data-format="{name}"]')
        status, _, payload = server.request("POST", "/v1/timelines", {**document, "output": {"format": name}})
        expected = payload.decode()
        if name in ("waapi", "lottie") and status == 200:
            wait_for_json_text(page, json.loads(expected))
            assert json.loads(page.inner_text("#export-text")) == json.loads(expected)
        elif status == 200:
            page.wait_for_function("(t) => document.querySelector('#export-text').textContent === t", arg=expected)


def test_a_live_session_is_started_and_steered_from_the_page(page, server):
    open_playground(page, server, "decay")
    page.select_option("#speed", "0.25")
    page.click("#live-start")
    page.wait_for_function("playground.state.live && playground.state.live.values")
    session = page.evaluate("playground.state.live.id")
    status, _, payload = server.request("GET", f"/v1/sessions/{session}")
    assert status == 200 and json.loads(payload)["speed"] == 0.25

    page.click("#live-pause")
    page.wait_for_function("document.querySelector('#live-state').textContent.includes('paused')")
    assert json.loads(server.request("GET", f"/v1/sessions/{session}")[2])["state"] == "paused"

    # seek: the stage shows the session's values at that time, which are the timeline's
    page.evaluate("""() => { const s = document.querySelector('#live-seek'); s.value = '0.5';
                       s.dispatchEvent(new Event('change', { bubbles: true })); }""")
    page.wait_for_function("document.querySelector('#live-log').textContent.includes('seeked')")
    state = json.loads(server.request("GET", f"/v1/sessions/{session}")[2])
    assert state["time"] == 0.5
    page.wait_for_function("(v) => document.querySelector('#stage circle[data-path=\"scroll\"]').dataset.value === String(v)",
                           arg=state["values"]["scroll"])

    page.click("#live-pause")   # resume
    page.wait_for_function("document.querySelector('#live-state').textContent.includes('running')")
    page.click("#live-reverse")
    page.wait_for_function("document.querySelector('#live-state').textContent.includes('reversing')")
    page.click("#live-reverse")

    # retarget by dragging on the scroll lane: the session heads for the value under the pointer
    rail = page.locator('#stage g.lane[data-entity="scroll"] line.rail').bounding_box()
    page.mouse.move(rail["x"] + rail["width"] * 0.9, rail["y"])
    page.mouse.down()
    page.mouse.move(rail["x"] + rail["width"] * 0.25, rail["y"], steps=4)
    page.mouse.up()
    page.wait_for_function("document.querySelector('#live-log').textContent.includes('retargeted')")
    state = json.loads(server.request("GET", f"/v1/sessions/{session}")[2])
    assert [r["path"] for r in state["retargets"]] == ["scroll"]
    low, high = page.evaluate("[playground.state.model.ranges[0].min, playground.state.model.ranges[0].max]")
    assert abs(state["retargets"][0]["to"] - (low + 0.25 * (high - low))) < (high - low) * 0.02

    page.click("#live-stop")
    assert server.request("GET", f"/v1/sessions/{session}")[0] in (404, 200)
    page.wait_for_function("!document.body.classList.contains('live')")


def test_dragging_a_point_retargets_both_of_its_coordinates(page, server):
    open_playground(page, server, "spring")
    page.select_option("#speed", "0.1")
    page.click("#live-start")
    page.wait_for_function("playground.state.live && playground.state.live.values")
    session = page.evaluate("playground.state.live.id")
    area = page.locator("#stage rect.area").bounding_box()
    # drop the target at a point of the stage; the page converts it to the document's units
    page.mouse.move(area["x"] + area["width"] * 0.3, area["y"] + area["height"] * 0.7)
    page.mouse.down()
    page.mouse.move(area["x"] + area["width"] * 0.2, area["y"] + area["height"] * 0.8, steps=3)
    page.mouse.up()
    page.wait_for_function("document.querySelector('#live-log').textContent.split('retargeted').length === 3")
    retargets = json.loads(server.request("GET", f"/v1/sessions/{session}")[2])["retargets"]
    assert [r["path"] for r in retargets] == ["dot.x", "dot.y"]
    # the marker is where the pointer let go, and the values map back onto it
    marker = page.locator("#retarget-marker circle").bounding_box()
    expected = page.evaluate("""([x, y]) => {
        const box = document.querySelector('#stage').getBoundingClientRect(), vb = document.querySelector('#stage').viewBox.baseVal;
        const map = playground.stageMap();
        return [map.invX((x - box.left) * vb.width / box.width), map.invY((y - box.top) * vb.height / box.height)];
    }""", [marker["x"] + marker["width"] / 2, marker["y"] + marker["height"] / 2])
    assert abs(retargets[0]["to"] - expected[0]) < 1 and abs(retargets[1]["to"] - expected[1]) < 1
    page.click("#live-stop")


def test_spring_designer(page, server, output_dir):
    if not server_has(server, "/v1/springs", {"response": 0.5, "dampingRatio": 0.7}):
        pytest.skip("this server has no POST /v1/springs")
    open_playground(page, server)
    assert page.get_attribute("body", "data-springs") == "true"
    page.click('.tab[data-tab="springs"]')
    page.select_option("#spring-form", "response-dampingRatio")
    for value in ["0.3", "0.9"]:
        page.evaluate("""(v) => { const s = document.querySelector('#spring-sliders input[data-param="dampingRatio"]');
                           s.value = v; s.dispatchEvent(new Event('input', { bubbles: true })); }""", value)
        body = {"response": float(page.input_value('#spring-sliders input[data-param="response"]')),
                "dampingRatio": float(page.input_value('#spring-sliders input[data-param="dampingRatio"]'))}
        expected = server.post_json("/v1/springs", body)
        page.wait_for_function("""(v) => { const shown = document.querySelector('[data-metric="dampingRatio"] dd');
                                           return shown !== null && Math.abs(parseFloat(shown.textContent) - v) < 6e-4; }""",
                               arg=expected["dampingRatio"])
        for metric, scale in [("overshoot", 100), ("settlingTime", 1), ("naturalFrequency", 1), ("stiffness", 1)]:
            shown = page.inner_text(f'[data-metric="{metric}"] dd')
            assert abs(float(shown.split()[0]) - expected[metric] * scale) <= 6e-4 * max(1, abs(expected[metric] * scale)), metric
        for form, params in expected["forms"].items():
            cell = page.locator(f'#spring-table tr[data-form="{form}"] td').nth(1).inner_text()
            assert (cell == "not expressible") if params is None else json.loads(cell) == params, form
    assert page.locator("#spring-plot path.track").count() == 1
    page.screenshot(path=str(output_dir / "playground-springs.png"), full_page=True)


def test_screenshots(page, server, output_dir):
    open_playground(page, server, "group")
    page.evaluate("playground.seekTo(0.7)")
    page.screenshot(path=str(output_dir / "playground-1280x800.png"))
    page.screenshot(path=str(output_dir / "playground-1280x800-full.png"), full_page=True)
    pick(page, "path")
    page.evaluate("playground.seekTo(0.8)")
    page.screenshot(path=str(output_dir / "playground-path.png"))
    pick(page, "contiguous")
    page.evaluate("playground.seekTo(1.1)")
    page.screenshot(path=str(output_dir / "playground-sequence.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(300)
    page.screenshot(path=str(output_dir / "playground-390x844.png"), full_page=True)
    # on a narrow screen nothing is wider than the screen
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
