"""The `css` and `waapi` exports played in Chromium (docs/exports.md).

Each document is exported by the service, loaded into a page (the stylesheet, or the
`properties`/`style`/`element.animate()` calls of the waapi answer), every animation is paused
and sought, and the computed style is compared with the timeline's own values (from the json
format of the same document) at every frame and half-way between frames.

Tolerances: the export keeps each channel within ε of the exact curve (the default ε is
documented in docs/exports.md: 1/2,000 of the channel's range, at most 0.05); on top of it
Chromium serialises computed numbers with six significant digits, and colours as 8-bit
channels (alpha to about three decimals)."""
import math
import re

import pytest

EASINGS = ["linear", "quadratic.inOut", "cubic.in", "quartic.out", "quintic.inOut", "sine.in", "expo.out",
           "circular.inOut", "elastic.out", "bounce.out", "back.inOut", "ease-in-out",
           "cubic-bezier(0.3, -0.6, 0.7, 1.6)", "steps(4, jump-start)", "linear(0, 0.25 40%, 1)",
           {"type": "spring", "response": 0.4, "dampingRatio": 0.5}]


def default_epsilon(values):
    return min(0.05, max(1e-6, (max(values) - min(values)) * 5e-4))


def custom_property(path):
    return "--" + re.sub(r"[^A-Za-z0-9_-]", "-", path)


def sampled(server, document, window):
    answer = server.post_json("/v1/timelines", {**document, "window": window, "output": {"events": False, "final": False}})
    return answer["times"], {track["path"]: track["values"] for track in answer["tracks"]}


def probe_times(server, document, jumps=()):
    """Every frame time and the midpoints between frames (away from jumps), with the
    timeline's values there: {path: [value at each time]}, and the json answer."""
    answer = server.post_json("/v1/timelines", {**document, "output": {"events": False, "final": False}})
    window, fps = answer["window"], answer["fps"]
    frames, values = answer["times"], {track["path"]: track["values"] for track in answer["tracks"]}
    between, values_between = sampled(server, document, {"start": window["start"] + 0.5 / fps, "end": window["end"]})
    rows = sorted([(t, {p: v[k] for p, v in values.items()}) for k, t in enumerate(frames)] +
                  [(t, {p: values_between[p][k] for p in values}) for k, t in enumerate(between[:-1])], key=lambda r: r[0])
    rows = [r for r in rows if all(abs(r[0] - j) > 1e-6 for j in jumps)]
    return [r[0] for r in rows], {p: [r[1][p] for r in rows] for p in values}, answer


def export(server, document, fmt, css=None):
    output = {"format": fmt}
    if css is not None:
        output["css"] = css
    status, headers, body = server.request("POST", "/v1/timelines", {**document, "output": output})
    assert status == 200, body[:500]
    expected_type = "text/css" if fmt == "css" else "application/json"
    assert headers["Content-Type"].startswith(expected_type)
    return body.decode()


# Seeks every animation of #e to t (seconds after window.start) and reads the computed values.
READ = """([times, properties]) => {
  const element = document.getElementById('e');
  const animations = element.getAnimations();
  for (const a of animations) a.pause();
  return times.map(t => {
    for (const a of animations) a.currentTime = t * 1000;
    const style = getComputedStyle(element);
    return properties.map(p => style.getPropertyValue(p));
  });
}"""

SETUP_WAAPI = """(exported) => {
  for (const p of exported.properties) CSS.registerProperty(p);
  const element = document.getElementById('e');
  for (const [name, value] of Object.entries(exported.style)) element.style.setProperty(name, value);
  for (const a of exported.animations) element.animate(a.keyframes, a.options);
  return element.getAnimations().length;
}"""


def play(page, fmt, body, times, properties, window_start):
    if fmt == "css":
        page.set_content(f"<style>{body}</style><div class='motion' id='e'></div>")
    else:
        import json
        exported = json.loads(body)
        page.set_content("<div class='motion' id='e'></div>")
        assert page.evaluate(SETUP_WAAPI, exported) == len(exported["animations"])
    return page.evaluate(READ, [[t - window_start for t in times], properties])


def serialisation(value):
    return 1e-5 * abs(value) + 1e-9


@pytest.mark.parametrize("fmt", ["css", "waapi"])
def test_every_easing_family_as_custom_properties(server, page, fmt):
    document = {"fps": 30, "target": {f"v{i}": 0 for i in range(len(EASINGS))},
                "motion": {"type": "group", "children": [
                    {"type": "tween", "duration": 1, "easing": easing, "properties": [{"path": f"v{i}", "to": 100}]}
                    for i, easing in enumerate(EASINGS)]}}
    jumps = [0.25, 0.5, 0.75, 1.0]  # steps(4, jump-start)
    times, expected, _ = probe_times(server, document, jumps)
    body = export(server, document, fmt)
    paths = list(expected)
    observed = play(page, fmt, body, times, [custom_property(p) for p in paths], 0)
    for j, path in enumerate(paths):
        epsilon = default_epsilon(expected[path])
        for t, row, value in zip(times, observed, expected[path]):
            seen = float(row[j])
            assert abs(seen - value) <= epsilon + serialisation(value), \
                f"{fmt} {path} ({EASINGS[int(path[1:])]}) at t={t}: Chromium {seen}, timeline {value}, ε {epsilon}"


@pytest.mark.parametrize("fmt", ["css", "waapi"])
def test_spring_and_physics_with_walls(server, page, fmt):
    document = {"fps": 60, "target": {"x": 0, "ball": 0},
                "motion": {"type": "group", "children": [
                    {"type": "spring", "response": 0.5, "dampingRatio": 0.3, "properties": [{"path": "x", "to": 300}]},
                    {"type": "physics", "velocity": 400, "friction": 0.4, "restitution": 0.7, "collisions": True,
                     "properties": [{"path": "ball", "from": 0, "to": 100}]}]}}
    times, expected, answer = probe_times(server, document)
    body = export(server, document, fmt)
    observed = play(page, fmt, body, times, ["--x", "--ball"], 0)
    for j, path in enumerate(["x", "ball"]):
        epsilon = default_epsilon(expected[path])
        for t, row, value in zip(times, observed, expected[path]):
            assert abs(float(row[j]) - value) <= epsilon + serialisation(value), f"{fmt} {path} at t={t}: {row[j]} vs {value}"
    # Far fewer keyframes than frames (the spring rings for about 2.7 s at 60 fps).
    if fmt == "waapi":
        import json
        keyframes = {a["property"]: len(a["keyframes"]) for a in json.loads(body)["animations"]}
        assert keyframes["--x"] < answer["frameCount"], (keyframes, answer["frameCount"])


def matrix(text):
    numbers = [float(n) for n in re.findall(r"-?[\d.]+(?:e-?\d+)?", text)]
    assert text.startswith("matrix(") and len(numbers) == 6, text
    return numbers


@pytest.mark.parametrize("fmt", ["css", "waapi"])
def test_path_with_rotation_as_a_transform(server, page, fmt):
    document = {"fps": 30, "target": {"heading": 0},
                "motion": {"type": "path", "path": "M0 0 C50 -80 150 80 200 0 A50 50 0 0 1 300 0", "duration": 1.2,
                           "easing": "ease-in-out", "output": "dot", "rotation": "heading"}}
    times, expected, _ = probe_times(server, document)
    css = {"selector": ".motion",
           "declarations": {"transform": "translate({dot.x}px, {dot.y}px) rotate({heading}deg)"}}
    body = export(server, document, fmt, css)
    observed = play(page, fmt, body, times, ["transform"], 0)
    ex, ey, eh = (default_epsilon(expected[p]) for p in ["dot.x", "dot.y", "heading"])
    for k, t in enumerate(times):
        a, b, c, d, e, f = matrix(observed[k][0])
        x, y, heading = expected["dot.x"][k], expected["dot.y"][k], math.radians(expected["heading"][k])
        angle = math.radians(eh) + 2e-5
        assert abs(e - x) <= ex + serialisation(x) and abs(f - y) <= ey + serialisation(y), f"{fmt} t={t}: {observed[k][0]} vs ({x}, {y})"
        assert abs(a - math.cos(heading)) <= angle and abs(b - math.sin(heading)) <= angle, f"{fmt} t={t}: {observed[k][0]} vs {expected['heading'][k]}°"
        assert abs(c + math.sin(heading)) <= angle and abs(d - math.cos(heading)) <= angle


def rgba(text):
    numbers = [float(n) for n in re.findall(r"[\d.]+", text)]
    if len(numbers) == 3:
        numbers.append(1.0)
    return numbers


@pytest.mark.parametrize("fmt", ["css", "waapi"])
def test_colours(server, page, fmt):
    document = {"fps": 20, "target": {"tint": "#336699", "glow": "#ff000000"},
                "motion": {"type": "group", "children": [
                    {"type": "tween", "duration": 1, "easing": "back.out",
                     "properties": [{"path": "tint", "to": "#ff9933"}]},
                    {"type": "tween", "duration": 0.8, "delay": 0.2, "easing": "sine.inOut",
                     "properties": [{"path": "glow", "to": "#00ff80cc"}]},
                    {"type": "tween", "duration": 0.5, "delay": 0.5, "properties": [{"path": "tint.hue", "to": 300}]}]}}
    times, _, _ = probe_times(server, document)
    frames = {}
    for t in times:
        answer = server.post_json("/v1/timelines", {**document, "window": {"start": t, "end": t},
                                                    "output": {"layout": "frames", "events": False, "final": False}})
        frames[t] = answer["frames"][0]["values"]
    css = {"declarations": {"background-color": "{tint}", "color": "{glow}"}}
    body = export(server, document, fmt, css)
    observed = play(page, fmt, body, times, ["background-color", "color"], 0)
    for k, t in enumerate(times):
        for j, name in enumerate(["tint", "glow"]):
            hexa = frames[t][name]
            r, g, b, a = (int(hexa[i:i + 2], 16) for i in (1, 3, 5, 7))
            sr, sg, sb, sa = rgba(observed[k][j])
            # Premultiplied (as composited): 8-bit channels (±1 after Chromium's and the
            # frames layout's rounding) and ε.
            if a / 255 > 0.05:
                for mine, theirs in [(sr, r), (sg, g), (sb, b)]:
                    assert abs(mine * sa - theirs * a / 255) <= 1.5 + 0.001 * 255, f"{fmt} {name} t={t}: {observed[k][j]} vs {hexa}"
            assert abs(sa - a / 255) <= 0.006, f"{fmt} {name} t={t}: {observed[k][j]} vs {hexa}"


@pytest.mark.parametrize("fmt", ["css", "waapi"])
def test_sequences_with_reverses_and_repeats(server, page, fmt):
    document = {"fps": 30, "target": {"a": 0, "b": 10},
                "window": {"start": 0.3, "end": 3.1},
                "motion": {"type": "group", "children": [
                    {"type": "sequence", "reverses": True, "reversingMode": "contiguous", "repeat": 1, "steps": [
                        {"type": "tween", "duration": 0.4, "easing": "cubic.out", "properties": [{"path": "a", "to": 50}]},
                        {"type": "tween", "duration": 0.3, "easing": "bounce.out", "properties": [{"path": "b", "to": -20}]}]},
                    {"type": "tween", "duration": 0.5, "repeat": "infinite", "reverses": True, "easing": "elastic.inOut",
                     "properties": [{"path": "c", "from": 0, "to": 1}]}]}}
    times, expected, _ = probe_times(server, document)
    body = export(server, document, fmt)
    paths = ["a", "b", "c"]
    observed = play(page, fmt, body, times, [custom_property(p) for p in paths], 0.3)
    for j, path in enumerate(paths):
        epsilon = default_epsilon(expected[path])
        for t, row, value in zip(times, observed, expected[path]):
            assert abs(float(row[j]) - value) <= epsilon + serialisation(value), f"{fmt} {path} at t={t}: {row[j]} vs {value}"


def test_jumps_are_exact_in_css(server, page):
    """A steps() tween is a staircase: Chromium shows each step's value right after its jump
    and the previous one right before, in the stylesheet and in element.animate()."""
    document = {"fps": 10, "target": {"x": 0},
                "motion": {"type": "tween", "duration": 1, "easing": "steps(4, jump-end)", "properties": [{"path": "x", "to": 100}]}}
    times = [0.25 - 1e-6, 0.25 + 1e-6, 0.5 - 1e-6, 0.5 + 1e-6, 0.999, 1.0]
    expected = [0, 25, 25, 50, 75, 100]
    for fmt in ["css", "waapi"]:
        body = export(server, document, fmt)
        observed = play(page, fmt, body, times, ["--x"], 0)
        assert [float(row[0]) for row in observed] == expected, (fmt, observed)


@pytest.mark.parametrize("css, pointer, words", [
    ({"declarations": {"transform": "translate({nothing.here}px)"}}, "/output/css/declarations/transform", "names no property"),
    ({"declarations": {"opacity": "{x"}}, "/output/css/declarations/opacity", "without its '}'"),
    ({"declarations": {"opacity": "1; color: red"}}, "/output/css/declarations/opacity", "may not contain"),
    ({"declarations": {"opacity": 1}}, "/output/css/declarations/opacity", "must be a string"),
    ({"selctor": ".a"}, "/output/css/selctor", "unknown member"),
    ({"selector": ".a { color: red }"}, "/output/css/selector", "may not contain"),
    ({"name": "1abc"}, "/output/css/name", "identifier"),
    ({"declarations": {"transform": "translate({frame}px)"}}, "/output/css/declarations/transform", "name one of its numbers"),
])
def test_bad_css_options_are_422_naming_the_field(server, css, pointer, words):
    import json
    document = {"target": {"x": 0, "frame": {"x": 0, "y": 0}}, "motion": {"type": "tween", "duration": 1,
                "properties": [{"path": "x", "to": 1}]}, "output": {"format": "css", "css": css}}
    status, headers, body = server.request("POST", "/v1/timelines", document)
    assert status == 422, body
    problem = json.loads(body)
    assert any(e["pointer"] == pointer and words in e["message"] for e in problem["errors"]), problem
