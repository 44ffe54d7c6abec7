// The replay viewer and live table of Card Arena (docs/replay-frames.md).
//
//   import { mount } from "/static/replay/viewer.js";
//   mount(document.getElementById("replay"), "/api/v1/matches/ID/frames");
//   mount(element, "/matches/ID/live-frames", { live: true });   // server-sent events
//
// Plain ES module, no build step, nothing from a CDN.

import { moveText } from "./cards.js";
import { drawTable, el, seatName } from "./table.js";

const SPEEDS = [
  ["0.5×", 1600],
  ["1×", 800],
  ["2×", 400],
  ["4×", 200],
  ["8×", 100],
];

function addStyles() {
  const href = new URL("./viewer.css", import.meta.url).href;
  if ([...document.querySelectorAll("link[rel=stylesheet]")].some((link) => link.href === href)) return;
  document.head.append(el("link", { rel: "stylesheet", href }));
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A live document for a stream of bare watch events: only seats and scores are known. */
function bareDocument(numSeats) {
  return {
    version: 1,
    live: true,
    match_id: "",
    game: "",
    title: "Live match",
    num_seats: numSeats,
    options: {},
    seats: Array.from({ length: numSeats }, (_, seat) => ({ seat, name: "", version: "" })),
    status: "in_progress",
    status_detail: "",
    forfeited_seat: null,
    outcome: null,
    start: null,
    frames: [],
  };
}

/** A frame for one bare MoveEvent: the move, the scores, every hand hidden. */
function bareFrame(index, move) {
  return {
    index,
    seat: Number(move.seat) || 0,
    move: String(move.description || ""),
    time_ms: null,
    time_bank_ms: null,
    fault: move.defaulted ? { kind: "defaulted", detail: "the referee played this move after a fault" } : null,
    table: {
      heading: "Live",
      dealer: null,
      to_act: null,
      seats: move.scores.map(() => ({ hand: null, count: null, tags: [] })),
      facts: [],
      trick: null,
      last_trick: null,
      melds: [],
      calls: [],
      pile: null,
      sheet: [],
      totals: move.scores.map(Number),
    },
  };
}

function button(label, text, onClick) {
  const node = el("button", { type: "button", "aria-label": label, title: label, text });
  node.addEventListener("click", onClick);
  return node;
}

/**
 * Draws the match at ``framesUrl`` into ``element`` and returns a controller
 * ({ goTo(position), play(), pause(), destroy(), get position(), get count() }).
 * With ``live`` the URL is an event stream of {type: "document" | "frame" | "end"} messages.
 */
export function mount(element, framesUrl, { live = false } = {}) {
  addStyles();
  let doc = null;
  let position = 0;
  let timer = null;
  let speed = 800;
  let source = null;
  let ended = false;

  const title = el("h2", { class: "ca-title", text: "Loading…" });
  const status = el("p", { class: "ca-status", role: "status", "aria-live": "polite" });
  const board = el("div", { class: "ca-board-wrap" });
  const moveLine = el("p", { class: "ca-move", "aria-live": "polite" });
  const slider = el("input", { type: "range", min: "0", max: "0", value: "0", step: "1", "aria-label": "Move" });
  const counter = el("span", { class: "ca-counter", "aria-hidden": "true" });
  const playButton = button("Play", "Play", () => (timer ? pause() : play()));
  playButton.classList.add("ca-play-button");
  const speedSelect = el(
    "select",
    { "aria-label": "Speed" },
    SPEEDS.map(([label, ms]) => el("option", { value: String(ms), selected: ms === speed, text: label })),
  );
  const controls = el(
    "div",
    { class: "ca-controls", role: "group", "aria-label": "Replay controls" },
    button("First move", "|◀", () => goTo(0)),
    button("Previous move", "◀", () => goTo(position - 1)),
    playButton,
    button("Next move", "▶", () => goTo(position + 1)),
    button("Last move", "▶|", () => goTo(count() - 1)),
    slider,
    counter,
    speedSelect,
  );
  const root = el(
    "div",
    { class: "ca-replay", tabindex: "0", "aria-label": "Match replay. Arrow keys step through the moves." },
    title,
    status,
    moveLine,
    controls,
    board,
  );
  element.replaceChildren(root);

  function hasStart() {
    return Boolean(doc && doc.start);
  }

  function count() {
    if (!doc) return 0;
    return doc.frames.length + (hasStart() ? 1 : 0);
  }

  function frameAt(pos) {
    const index = hasStart() ? pos - 1 : pos;
    return index >= 0 ? doc.frames[index] : null;
  }

  function describeMove(frame) {
    if (!frame) return "Before the first move: the deal.";
    const parts = [`Move ${frame.index + 1}`, seatName(doc, frame.seat), moveText(frame.move)];
    if (frame.time_ms !== null && frame.time_ms !== undefined) parts.push(`${Number(frame.time_ms).toFixed(1)} ms`);
    return parts.join(" · ");
  }

  function draw() {
    if (!doc) return;
    const total = count();
    slider.max = String(Math.max(0, total - 1));
    slider.value = String(position);
    slider.setAttribute("aria-valuetext", total ? `${position + 1} of ${total}` : "no moves");
    counter.textContent = total ? `${position + 1} / ${total}` : "0 / 0";
    if (!total) {
      board.replaceChildren(el("p", { class: "ca-empty", text: live ? "Waiting for the first move…" : "No moves were played." }));
      moveLine.replaceChildren();
      return;
    }
    const frame = frameAt(position);
    const table = frame ? frame.table : doc.start;
    moveLine.replaceChildren(el("span", { class: "ca-move-text", text: describeMove(frame) }));
    if (frame && frame.fault) {
      moveLine.append(
        el("span", { class: "ca-fault", role: "note", text: `⚠ fault: ${frame.fault.kind.replaceAll("_", " ")}${frame.fault.detail ? " (" + frame.fault.detail + ")" : ""}` }),
      );
    }
    board.replaceChildren(drawTable(doc, table));
    root.dataset.position = String(position);
    root.dataset.count = String(total);
    root.dataset.atEnd = String(position === total - 1);
  }

  function describeDoc() {
    const names = doc.seats.map((s) => s.name || `seat ${s.seat}`).join(", ");
    title.textContent = `${doc.title}${doc.live ? " · live" : ""}`;
    let text = names;
    if (!doc.live) {
      text += ` · ${doc.status.replaceAll("_", " ")}`;
      if (doc.status_detail) text += ` (${doc.status_detail})`;
    }
    status.textContent = text;
    root.dataset.live = String(Boolean(doc.live));
  }

  function goTo(pos) {
    const total = count();
    if (!total) return;
    position = Math.max(0, Math.min(total - 1, pos));
    if (position === total - 1 && timer && (ended || !live)) pause();
    draw();
  }

  function play() {
    if (!count()) return;
    if (position >= count() - 1 && !live) position = 0;
    clearInterval(timer);
    timer = setInterval(() => {
      if (position < count() - 1) goTo(position + 1);
      else if (!live || ended) pause();
    }, speed);
    playButton.textContent = "Pause";
    playButton.setAttribute("aria-label", "Pause");
    playButton.title = "Pause";
    draw();
  }

  function pause() {
    clearInterval(timer);
    timer = null;
    playButton.textContent = "Play";
    playButton.setAttribute("aria-label", "Play");
    playButton.title = "Play";
  }

  slider.addEventListener("input", () => goTo(Number(slider.value)));
  speedSelect.addEventListener("change", () => {
    speed = Number(speedSelect.value);
    if (timer) play();
  });
  root.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLSelectElement) return;
    const keys = {
      ArrowRight: () => goTo(position + 1),
      ArrowLeft: () => goTo(position - 1),
      Home: () => goTo(0),
      End: () => goTo(count() - 1),
      " ": () => (timer ? pause() : play()),
    };
    const action = keys[event.key];
    if (!action || (event.key === " " && event.target instanceof HTMLButtonElement)) return;
    if (event.target === slider && event.key !== " ") return; // the range input steps itself
    event.preventDefault();
    action();
  });

  function showDocument(next) {
    const following = !doc || position >= count() - 1;
    doc = next;
    describeDoc();
    if (following) position = Math.max(0, count() - 1);
    goTo(position);
  }

  function fail(message) {
    title.textContent = "Replay unavailable";
    status.textContent = message;
  }

  if (live) {
    source = new EventSource(framesUrl);
    source.onmessage = (event) => {
      const message = parseJson(event.data);
      if (!message) return;
      if (message.type === "document") showDocument(message.document);
      else if (message.type === "frame" && doc) {
        const following = position >= count() - 1;
        doc.frames.push(message.frame);
        if (following) position = count() - 1;
        draw();
      } else if (message.type === "end") {
        ended = true;
        source.close();
        root.dataset.ended = "true";
        if (message.reason) status.textContent += ` · ${message.reason}`;
      }
    };
    // A stream of bare watch events (named "move" and "finished" events, the fields of
    // MoveEvent) has no tables: the viewer then shows each move, the scores and backs, and
    // loads the replay from the finished event's frames_url.
    source.addEventListener("move", (event) => {
      const move = parseJson(event.data);
      if (!move || !Array.isArray(move.scores)) return;
      if (!doc) showDocument(bareDocument(move.scores.length));
      const following = position >= count() - 1;
      doc.frames.push(bareFrame(doc.frames.length, move));
      if (following) position = count() - 1;
      draw();
    });
    source.addEventListener("finished", (event) => {
      const finished = parseJson(event.data) || {};
      ended = true;
      source.close();
      root.dataset.ended = "true";
      if (!finished.frames_url) return;
      fetch(finished.frames_url, { headers: { Accept: "application/json" } })
        .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`${response.status}`))))
        .then((replay) => showDocument(replay))
        .catch(() => {
          status.textContent = `${finished.status_detail || "The match ended"}; its replay is not available.`;
        });
    });
    source.onerror = () => {
      if (!ended) status.textContent = doc ? `${status.textContent.split(" · reconnecting")[0]} · reconnecting…` : "Connecting…";
    };
  } else {
    fetch(framesUrl, { headers: { Accept: "application/json" } })
      .then((response) => {
        if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
        return response.json();
      })
      .then((loaded) => {
        ended = true;
        showDocument(loaded);
        goTo(0);
        root.dataset.ready = "true";
      })
      .catch((error) => fail(`Could not load the replay: ${error.message}`));
  }

  return {
    goTo,
    play,
    pause,
    get position() {
      return position;
    },
    count,
    destroy() {
      pause();
      if (source) source.close();
      element.replaceChildren();
    },
  };
}
