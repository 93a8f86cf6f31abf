"""The `linear()` easing of `POST /v1/springs` played by Chromium: the answer's `easing.css` is
applied to an element's animation (a CSS animation with `animation-timing-function`, and the
same easing through Web Animations), the animation is paused and sought across its
duration, and Chromium's eased progress must follow the spring within the requested
tolerance. The spring is evaluated here from its closed form (docs/springs.md), independently of
the service."""
import math

import pytest

SPRINGS = [
    ({"response": 0.5, "dampingRatio": 0.6}, 0.001),
    ({"visualDuration": 0.3, "bounce": 0.25, "tolerance": 0.0005}, 0.0005),
    ({"stiffness": 170, "damping": 26, "tolerance": 0.01}, 0.01),
    ({"response": 1, "dampingRatio": 0.15}, 0.001),
    ({"duration": 0.6, "bounce": -0.5, "velocity": 4}, 0.001),
    ({"overshoot": 0.2, "settlingTime": 1.2, "velocity": -2}, 0.001),
]


def spring_position(mass, stiffness, damping, velocity, t):
    """x(t) from 0 to 1 with initial velocity v0, y = x − 1, y0 = −1."""
    omega = math.sqrt(stiffness / mass)
    zeta = damping / (2 * math.sqrt(stiffness * mass))
    y0, v0 = -1.0, velocity
    if abs(zeta - 1) <= 1e-9:
        y = math.exp(-omega * t) * (y0 + (v0 + omega * y0) * t)
    elif zeta < 1:
        wd = omega * math.sqrt(1 - zeta * zeta)
        y = math.exp(-zeta * omega * t) * (y0 * math.cos(wd * t) + (v0 + zeta * omega * y0) / wd * math.sin(wd * t))
    else:
        s = math.sqrt(zeta * zeta - 1)
        r1, r2 = -omega * (zeta - s), -omega * (zeta + s)
        a = (v0 - r2 * y0) / (r1 - r2)
        y = a * math.exp(r1 * t) + (y0 - a) * math.exp(r2 * t)
    return 1 + y


# Seeks a paused animation to each progress u and returns Chromium's eased progress. A CSS
# animation's timing function eases its keyframes, so there the progress is read from the
# computed `margin-left` animated over 0…10000px (serialised to 0.01px: 1e-6 of the range);
# a Web Animation's effect easing is read from its computed timing, a full double.
SCRIPT = """([css, mode, us]) => {
  const element = document.getElementById('probe');
  let animation, read;
  if (mode === 'css') {
    const style = document.createElement('style');
    style.textContent = `@keyframes slide { from { margin-left: 0px } to { margin-left: 10000px } }
      #probe { animation: slide 1000s both paused; animation-timing-function: ${css}; }`;
    document.head.appendChild(style);
    animation = element.getAnimations()[0];
    read = () => parseFloat(getComputedStyle(element).marginLeft) / 10000;
  } else {
    animation = element.animate([{opacity: 0}, {opacity: 1}], {duration: 1000000, easing: css, fill: 'both'});
    animation.pause();
    read = () => animation.effect.getComputedTiming().progress;
  }
  const applied = mode === 'css' ? getComputedStyle(element).animationTimingFunction : animation.effect.getTiming().easing;
  const progress = us.map(u => { animation.currentTime = u * 1000000; return read(); });
  return {applied, progress};
}"""


@pytest.mark.parametrize("mode", ["css", "waapi"])
@pytest.mark.parametrize("body,tolerance", SPRINGS, ids=[str(i) for i in range(len(SPRINGS))])
def test_spring_linear_easing_in_chromium(server, page, body, tolerance, mode):
    answer = server.post_json("/v1/springs", body)
    easing = answer["easing"]
    css, duration = easing["css"], easing["duration"]
    assert css.startswith("linear(") and easing["error"] <= tolerance
    assert duration == answer["settlingTime"]
    page.set_content("<div id='probe'></div>")
    assert page.evaluate("css => CSS.supports('animation-timing-function', css)", css), css

    count = 2000
    us = [i / count for i in range(count)] + [1.0]
    result = page.evaluate(SCRIPT, [css, mode, us])
    assert result["applied"].startswith("linear("), result["applied"][:200]
    velocity = body.get("velocity", 0)
    worst = 0.0
    for u, progress in zip(us, result["progress"]):
        expected = 1.0 if u == 1 else spring_position(answer["mass"], answer["stiffness"], answer["damping"],
                                                      velocity, u * duration)
        worst = max(worst, abs(progress - expected))
        # 2e-6 of slack: the serialised margin (1e-6 of the range) and the seek's rounding.
        assert abs(progress - expected) <= tolerance + 2e-6, \
            f"{body} ({mode}) at u={u}: Chromium {progress}, spring {expected}"
    assert abs(result["progress"][-1] - 1) <= 1e-9, "the easing ends exactly on the target"
    # The reported error is what Chromium shows too, not a loose bound.
    assert worst >= easing["error"] * 0.5
