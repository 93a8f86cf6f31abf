"""The engine's CSS easings against Chromium's own: a tween with each CSS easing is computed
by the service, and the same easing string is played by Web Animations in Chromium, paused
and sought to every sample time; the computed values must agree within 1e-6 of the range
(Chromium's eased progress, read from the effect's computed timing)."""
import pytest

# CSS easing strings the engine accepts verbatim (docs/easings.md), as Chromium reads them.
CSS_EASINGS = [
    "linear", "ease", "ease-in", "ease-out", "ease-in-out",
    "cubic-bezier(0.3, -0.6, 0.7, 1.6)", "cubic-bezier(0.1, 0.7, 1, 0.1)",
    "steps(4, jump-start)", "steps(4, jump-end)", "steps(3, jump-none)", "steps(5, jump-both)",
    "step-start", "step-end",
    "linear(0, 0.25 40%, 1)", "linear(0, 1.2 60%, 0.9 80%, 1)",
    # Stops that do not end on 1 (or start on 0): their CSS value holds at both ends.
    "linear(1, 0)", "linear(0 20%, 1 80%)", "linear(0.3, 1 50%, 0.6)",
]

# Computed styles are serialised with about six significant digits; the effect's computed
# timing gives Chromium's eased progress as a full double, which is what is compared.
SCRIPT = """([easing, times]) => {
  const element = document.getElementById('probe');
  const animation = element.animate([{opacity: 0}, {opacity: 1}], {duration: 1000, easing, fill: 'both'});
  animation.pause();
  return times.map(t => { animation.currentTime = t * 1000;
                          return animation.effect.getComputedTiming().progress * 1000; });
}"""


@pytest.mark.parametrize("easing", CSS_EASINGS)
def test_css_easing_matches_chromium(server, page, easing):
    document = {"fps": 50, "target": {"v": 0},
                "motion": {"type": "tween", "duration": 1, "easing": easing,
                           "properties": [{"path": "v", "to": 1000}]},
                "output": {"events": False, "final": False}}
    answer = server.post_json("/v1/timelines", document)
    times, values = answer["times"], answer["tracks"][0]["values"]
    page.set_content("<div id='probe'></div>")
    # Steps jump exactly at their boundaries, where one side or the other is a matter of
    # float rounding in the seek; sample just inside each frame instead.
    probe_times = [min(max(t, 1e-9), 1 - 1e-9) for t in times]
    expected = [server.post_json("/v1/timelines", {**document, "window": {"start": t, "end": t}})["tracks"][0]["values"][0]
                for t in probe_times] if easing.startswith("step") else values
    browser_values = page.evaluate(SCRIPT, [easing, probe_times])
    for t, mine, theirs in zip(probe_times, expected, browser_values):
        assert abs(mine - theirs) <= 1e-6 * 1000, f"{easing} at t={t}: service {mine}, Chromium {theirs}"
