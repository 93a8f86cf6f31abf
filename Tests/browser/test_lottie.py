"""The `lottie` export (docs/exports.md), checked by its consumers: the answer validates against the
Lottie specification's JSON schema (PyPI `lottie-specs`), and python-lottie (PyPI `lottie`)
evaluates every animated layer property at every frame and half-way between frames, which
must equal the timeline's values there within ε (the default ε of docs/exports.md: 1/2,000 of
the channel's range, at most 0.05; opacity is Lottie's 0…100, scale percent, rotation degrees).

Not a browser test, but it shares the server fixture of this folder."""
import json

import jsonschema
import lottie_specs
import pytest
from lottie.objects import Animation
from lottie.objects.properties import Value


def default_epsilon(values):
    return min(0.05, max(1e-6, (max(values) - min(values)) * 5e-4))


def expected_at(server, document, step):
    """(frames, {track: values}) at frames 0, step, 2·step, … of the window (f = (t − start)·fps):
    the same document sampled at fps/step (values do not depend on fps)."""
    quiet = {"events": False, "final": False}
    whole = server.post_json("/v1/timelines", {**document, "output": quiet})
    start, end, fps = whole["window"]["start"], whole["window"]["end"], whole["fps"]
    dense = server.post_json("/v1/timelines", {**document, "fps": fps / step, "window": {"start": start, "end": end},
                                               "output": quiet})
    frames = [(t - start) * fps for t in dense["times"]]
    return frames, {track["path"]: track["values"] for track in dense["tracks"]}, whole


@pytest.fixture(scope="module")
def schema():
    return lottie_specs.load_specs()


DOCUMENT = {
    "fps": 30, "target": {"x": 0, "o": 0.2, "s": 1, "tint": "#336699", "glow": "#000000"},
    "motion": {"type": "group", "children": [
        {"type": "spring", "response": 0.5, "dampingRatio": 0.4, "properties": [{"path": "x", "to": 300}]},
        {"type": "tween", "duration": 1, "easing": "sine.inOut",
         "properties": [{"path": "o", "to": 1}, {"path": "tint", "to": "#ff993380"}]},
        {"type": "tween", "duration": 0.8, "delay": 0.2, "easing": "elastic.out", "properties": [{"path": "s", "to": 2}]},
        # Channels eased differently: the fill falls back to linear keyframes.
        {"type": "tween", "duration": 1, "easing": "cubic.in", "properties": [{"path": "glow", "to": "#80ff40"}]},
        {"type": "tween", "duration": 0.6, "delay": 0.3, "easing": "bounce.out", "properties": [{"path": "glow.red", "to": 1}]},
        {"type": "path", "path": "M20 250 C100 100 300 100 380 250", "duration": 1.5, "easing": "ease-in-out",
         "output": "dot", "rotation": "heading"},
        {"type": "physics", "velocity": 500, "friction": 0.5, "restitution": 0.6, "collisions": True,
         "properties": [{"path": "y", "from": 0, "to": 280}]}]},
    "output": {"format": "lottie", "lottie": {"width": 400, "height": 300, "layers": [
        {"name": "ball", "shape": "ellipse", "size": [40, 40], "fill": "{tint}", "position": ["{x}", "{y}"],
         "opacity": "{o}", "scale": "{s}"},
        {"name": "arrow", "shape": "rect", "size": [30, 10], "fill": "{glow}", "position": "{dot}",
         "rotation": "{heading}", "anchor": [5, 0]}]}}}


def export(server, document):
    status, headers, body = server.request("POST", "/v1/timelines", document)
    assert status == 200, body[:500]
    assert headers["Content-Type"].startswith("application/json")
    return json.loads(body)


def test_lottie_validates_against_the_specification_schema(server, schema):
    exported = export(server, DOCUMENT)
    jsonschema.validate(exported, schema)
    assert exported["fr"] == 30 and exported["ip"] == 0
    # The physics motion rests last; op is the window's length in frames.
    whole = server.post_json("/v1/timelines", {**DOCUMENT, "output": {"events": False, "final": False}})
    assert exported["op"] == pytest.approx(whole["duration"] * 30, abs=1e-9)


def test_python_lottie_evaluates_every_layer_property_within_epsilon(server):
    exported = export(server, DOCUMENT)
    animation = Animation.load(exported)
    frames, values, whole = expected_at(server, {k: v for k, v in DOCUMENT.items() if k != "output"}, 0.5)
    ball, arrow = animation.layers
    raw_ball, raw_arrow = exported["layers"]
    checks = [
        ("x", lambda f: Value.load(raw_ball["ks"]["p"]["x"]).get_value(f), 1),
        ("y", lambda f: Value.load(raw_ball["ks"]["p"]["y"]).get_value(f), 1),
        ("o", lambda f: ball.transform.opacity.get_value(f), 100),
        ("s", lambda f: ball.transform.scale.get_value(f)[0], 100),
        ("s", lambda f: ball.transform.scale.get_value(f)[1], 100),
        ("dot.x", lambda f: Value.load(raw_arrow["ks"]["p"]["x"]).get_value(f), 1),
        ("dot.y", lambda f: Value.load(raw_arrow["ks"]["p"]["y"]).get_value(f), 1),
        ("heading", lambda f: arrow.transform.rotation.get_value(f), 1),
        ("tint.red", lambda f: ball.shapes[0].shapes[1].color.get_value(f)[0], 1),
        ("tint.green", lambda f: ball.shapes[0].shapes[1].color.get_value(f)[1], 1),
        ("tint.blue", lambda f: ball.shapes[0].shapes[1].color.get_value(f)[2], 1),
        ("tint.alpha", lambda f: ball.shapes[0].shapes[1].opacity.get_value(f), 100),
        ("glow.red", lambda f: arrow.shapes[0].shapes[1].color.get_value(f)[0], 1),
        ("glow.green", lambda f: arrow.shapes[0].shapes[1].color.get_value(f)[1], 1),
        ("glow.blue", lambda f: arrow.shapes[0].shapes[1].color.get_value(f)[2], 1),
    ]
    for path, evaluate, scale in checks:
        epsilon = default_epsilon(values[path])
        worst = 0
        for f, value in zip(frames, values[path]):
            seen = evaluate(f)
            worst = max(worst, abs(seen / scale - value))
            assert abs(seen / scale - value) <= epsilon * (1 + 1e-9) + 1e-12, \
                f"{path} at frame {f}: python-lottie {seen / scale}, timeline {value}, ε {epsilon}"
        assert worst > 0 or path in ("s",), path


def test_cubic_keyframes_are_far_fewer_than_frames(server):
    exported = export(server, DOCUMENT)
    whole = server.post_json("/v1/timelines", {**DOCUMENT, "output": {"events": False, "final": False}})
    x = exported["layers"][0]["ks"]["p"]["x"]["k"]
    assert len(x) * 3 < whole["frameCount"], (len(x), whole["frameCount"])
    assert all("i" in key and "o" in key for key in x[:-1])
    # A whole-colour tween shares one easing: cubic, two keyframes per sine.inOut piece.
    tint = exported["layers"][0]["shapes"][0]["it"][1]["c"]["k"]
    assert len(tint) <= 8 and any(abs(k["o"]["y"][0] - k["o"]["x"][0]) > 0.01 for k in tint[:-1]), tint


@pytest.mark.parametrize("lottie, pointer, words", [
    ({"width": "400", "height": 300, "layers": [{"shape": "rect"}]}, "/output/lottie/width", "must be a number"),
    ({"width": 400, "height": 300, "layers": [{"size": [40, "big"]}]}, "/output/lottie/layers/0/size/1", "must be a number"),
    ({"width": 400, "height": 300, "layers": [{"opacity": "{nowhere}"}]}, "/output/lottie/layers/0/opacity", "names no property"),
    ({"width": 400, "height": 300, "layers": [{"opacity": "half"}]}, "/output/lottie/layers/0/opacity", "must be a number or one placeholder"),
    ({"width": 400, "height": 300, "layers": [{"fill": "{x}"}]}, "/output/lottie/layers/0/fill", "needs a colour"),
    ({"width": 400, "height": 300, "layers": [{"shape": "star"}]}, "/output/lottie/layers/0/shape", "'rect' or 'ellipse'"),
    ({"width": 400, "height": 300, "layers": [{"blur": 2}]}, "/output/lottie/layers/0/blur", "unknown member"),
    ({"width": 400, "layers": []}, "/output/lottie/height", "is required"),
])
def test_bad_lottie_options_are_422_naming_the_field(server, lottie, pointer, words):
    document = {"target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]},
                "output": {"format": "lottie", "lottie": lottie}}
    status, _, body = server.request("POST", "/v1/timelines", document)
    assert status == 422, body
    problem = json.loads(body)
    assert any(e["pointer"] == pointer and words in e["message"] for e in problem["errors"]), problem


def test_jumps_are_holds_that_python_lottie_plays_exactly(server, schema):
    """A steps() tween is a staircase: each jump is two keyframes at one frame, the first a
    hold; python-lottie shows the step before the jump up to it and the next one after.
    (At the jump's own instant python-lottie shows the value before it and lottie-web the
    value after it, as the timeline does; the last jump is at the window's end.)"""
    document = {"fps": 10, "target": {"o": 0},
                "motion": {"type": "tween", "duration": 1, "easing": "steps(4, jump-end)", "properties": [{"path": "o", "to": 1}]},
                "output": {"format": "lottie", "lottie": {"width": 10, "height": 10, "layers": [{"opacity": "{o}"}]}}}
    exported = export(server, document)
    jsonschema.validate(exported, schema)
    opacity = Animation.load(exported).layers[0].transform.opacity
    for frame, expected in [(0, 0), (2.4, 0), (2.6, 25), (4.9, 25), (5.1, 50), (7.4, 50), (7.6, 75), (9.9, 75)]:
        assert opacity.get_value(frame) == pytest.approx(expected, abs=1e-9), (frame, opacity.get_value(frame))
    keys = exported["layers"][0]["ks"]["o"]["k"]
    assert [k["t"] for k in keys[-2:]] == [10, 10] and keys[-2].get("h") == 1 and keys[-1]["s"] == [100]
