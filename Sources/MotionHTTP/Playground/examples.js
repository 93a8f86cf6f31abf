// The playground's example documents. `core` examples use only what every MotionServer has;
// `probe` examples use newer node types and are listed only when the server accepts them
// (the page posts each one to /v1/timelines at start-up and keeps those answered 200).
"use strict";

window.PLAYGROUND_EXAMPLES = [
  {
    id: "tween", title: "Tween — a card slides, fades and changes colour",
    doc: {
      fps: 60,
      target: { card: { x: 0, y: 0, width: 60, height: 60, opacity: 0.3, color: "#336699" } },
      motion: { type: "tween", duration: 1.2, easing: "cubic.inOut", properties: [
        { path: "card.x", to: 240 },
        { path: "card.y", to: 60, easing: "back.out" },
        { path: "card.opacity", to: 1 },
        { path: "card.color", to: "#ff6f59" } ] }
    }
  },
  {
    id: "easings", title: "Tween — one lane per easing family",
    doc: {
      fps: 60,
      target: { linear: 0, quadratic: 0, cubic: 0, sine: 0, expo: 0, circular: 0, elastic: 0,
                bounce: 0, back: 0, css: 0, bezier: 0, steps: 0, spring: 0 },
      motion: { type: "group", children: [
        { type: "tween", duration: 1.5, easing: "linear", properties: [ { path: "linear", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: "quadratic.inOut", properties: [ { path: "quadratic", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: "cubic.out", properties: [ { path: "cubic", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: "sine.inOut", properties: [ { path: "sine", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: "expo.out", properties: [ { path: "expo", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: "circular.inOut", properties: [ { path: "circular", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: { type: "elastic.out", amplitude: 1, period: 0.3 }, properties: [ { path: "elastic", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: "bounce.out", properties: [ { path: "bounce", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: { type: "back.out", overshoot: 1.7 }, properties: [ { path: "back", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: "ease-in-out", properties: [ { path: "css", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: "cubic-bezier(0.2, 0.9, 0.3, 1.3)", properties: [ { path: "bezier", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: "steps(5, jump-end)", properties: [ { path: "steps", to: 100 } ] },
        { type: "tween", duration: 1.5, easing: { type: "spring", response: 0.4, dampingRatio: 0.5 }, properties: [ { path: "spring", to: 100 } ] } ] }
    }
  },
  {
    id: "physics", title: "Physics — a ball bouncing between walls",
    doc: {
      fps: 60,
      target: { ball: 0 },
      motion: { type: "physics", velocity: 420, friction: 0.4, restitution: 0.75, collisions: true,
                properties: [ { path: "ball", from: 0, to: 100 } ] }
    }
  },
  {
    id: "spring", title: "Spring — a dot springs to a point",
    doc: {
      fps: 60,
      target: { dot: { x: 0, y: 0 } },
      motion: { type: "spring", response: 0.6, dampingRatio: 0.45,
                properties: [ { path: "dot.x", to: 200 }, { path: "dot.y", to: 80 } ] }
    }
  },
  {
    id: "decay", title: "Decay — a flick that lands on a multiple of 50",
    doc: {
      fps: 60,
      target: { scroll: 0 },
      motion: { type: "decay", velocity: 1800, roundingFactor: 50, properties: [ { path: "scroll" } ] }
    }
  },
  {
    id: "path", title: "Path — a follower along a curve, turning with it",
    doc: {
      fps: 60,
      target: { heading: 0 },
      motion: { type: "path", path: "M0 100 C 60 -20 120 -20 160 60 S 260 160 320 40", duration: 2,
                easing: "sine.inOut", output: "follower", rotation: "heading" }
    }
  },
  {
    id: "group", title: "Group — position, size and colour in parallel",
    doc: {
      fps: 60,
      target: { box: { x: 0, y: 0, width: 40, height: 40, color: "#4c8dff" } },
      motion: { type: "group", reverses: true, syncsChildren: true, children: [
        { type: "tween", duration: 0.8, easing: "back.out", properties: [ { path: "box.x", to: 220 } ] },
        { type: "spring", response: 0.5, dampingRatio: 0.6, properties: [ { path: "box.y", to: 90 } ] },
        { type: "tween", duration: 1.1, easing: "sine.inOut", properties: [ { path: "box.width", to: 90 }, { path: "box.color", to: "#f7b32b" } ] } ] }
    }
  },
  {
    id: "sequential", title: "Sequence — four circles, reversing sequentially",
    doc: circles("sequential")
  },
  {
    id: "contiguous", title: "Sequence — four circles, reversing contiguously",
    doc: circles("contiguous")
  },
  {
    id: "keyframes", probe: true, title: "Keyframes — one property through several values",
    doc: {
      fps: 60,
      target: { dot: { x: 0, y: 0 }, tint: "#4c8dff" },
      motion: { type: "tween", duration: 2, easing: "sine.inOut", properties: [
        { path: "dot.x", keyframes: [0, 200, 200, 0, 0] },
        { path: "dot.y", keyframes: [0, 0, 120, 120, 0] },
        { path: "tint", keyframes: ["#4c8dff", "#f7b32b", "#ff6f59", "#3ecf8e", "#4c8dff"] } ] }
    }
  },
  {
    id: "timeline", probe: true, title: "Timeline — children placed by labels",
    doc: {
      fps: 60,
      target: { title: 0, card: 0, badge: 0 },
      motion: { type: "timeline", labels: { intro: 0.2 }, children: [
        { type: "tween", at: "intro", duration: 0.6, easing: "cubic.out", properties: [ { path: "title", to: 100 } ] },
        { type: "tween", at: "<+=0.2", label: "cardIn", duration: 0.6, easing: "back.out", properties: [ { path: "card", to: 100 } ] },
        { type: "spring", at: "cardIn+=0.4", response: 0.4, dampingRatio: 0.5, properties: [ { path: "badge", to: 100 } ] } ] }
    }
  },
  {
    id: "stagger", probe: true, title: "Stagger — a 3×4 grid rippling from its centre",
    doc: {
      fps: 60,
      target: { items: Array.from({ length: 12 }, (_, i) => (
        { x: (i % 4) * 50, y: Math.floor(i / 4) * 50, width: 36, height: 36, color: "#4c8dff40" })) },
      motion: { type: "tween", duration: 0.5, easing: "sine.inOut", reverses: true,
                stagger: { each: 0.1, from: "center", grid: [3, 4] },
                properties: [ { path: "items.*.color", to: "#f7b32b" } ] }
    }
  }
];

function circles(mode) {
  const step = (i) => ({ type: "group", id: "c" + i, children: [
    { type: "tween", duration: 0.6, easing: "quadratic.inOut", properties: [
      { path: "circles." + i + ".y", to: 200 }, { path: "circles." + i + ".color", to: "#ff6666" } ] } ] });
  return {
    fps: 60,
    target: { circles: [0, 1, 2, 3].map(() => ({ y: 0, color: "#336699" })) },
    motion: { type: "sequence", reverses: true, reversingMode: mode, steps: [0, 1, 2, 3].map(step) }
  };
}
