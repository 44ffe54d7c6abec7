// Draws one table of the frames JSON (docs/replay-frames.md): seats, trick, pile, melds, scores.
//
// Every game's table has the same sections, filled by the Python side from the engine's
// observations, so one renderer draws all five games; a section a game lacks is null or empty.

import { backElement, cardElement, moveText, suitElement } from "./cards.js";

/** A new element with attributes and children (strings become text). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** "Seat 2 · bot-2" (or just "Seat 2"). */
export function seatName(doc, seat) {
  const name = doc.seats && doc.seats[seat] && doc.seats[seat].name;
  return name ? `Seat ${seat} · ${name}` : `Seat ${seat}`;
}

function cards(names, extraClass = "") {
  return el("span", { class: "ca-cards" }, names.map((name) => cardElement(name, extraClass)));
}

function seatPanel(doc, table, seat, index) {
  const tabled = new Set(seat.tabled || []);
  const hand =
    seat.hand === null
      ? el("span", { class: "ca-cards" }, backElement(seat.count))
      : el(
          "span",
          { class: "ca-cards" },
          seat.hand.map((name) => cardElement(name, tabled.has(name) ? "ca-tabled" : "")),
        );
  const classes = ["ca-seat"];
  if (table.to_act === index) classes.push("ca-to-act");
  const tags = (seat.tags || []).map((tag) => el("span", { class: "ca-tag", text: tag }));
  if (table.to_act === index) tags.unshift(el("span", { class: "ca-tag ca-turn", text: "to act" }));
  return el(
    "section",
    { class: classes.join(" "), "aria-label": `${seatName(doc, index)}: hand`, "data-seat": index },
    el("h3", { class: "ca-seat-name", text: seatName(doc, index) }),
    el("div", { class: "ca-tags" }, tags),
    hand,
  );
}

function trickBlock(doc, label, trick) {
  if (!trick) return null;
  const plays = trick.cards.map((play) =>
    el(
      "li",
      { class: play.seat === trick.winner ? "ca-play ca-winner" : "ca-play" },
      el("span", { class: "ca-play-seat", text: `Seat ${play.seat}` }),
      cardElement(play.card),
    ),
  );
  const taken = trick.winner === null || trick.winner === undefined ? "" : ` (taken by seat ${trick.winner})`;
  return el(
    "div",
    { class: "ca-trick", "aria-label": label + taken },
    el("h4", { text: label + taken }),
    plays.length ? el("ol", { class: "ca-plays" }, plays) : el("p", { class: "ca-empty", text: "no card yet" }),
  );
}

function factsBlock(table) {
  if (!table.facts || !table.facts.length) return null;
  return el(
    "dl",
    { class: "ca-facts" },
    table.facts.map((fact) => [
      el("dt", { text: fact.label }),
      el(
        "dd",
        {},
        fact.suit ? suitElement(fact.suit, fact.text) : fact.text && !fact.cards.length ? fact.text : null,
        fact.cards && fact.cards.length ? cards(fact.cards) : null,
        fact.cards && fact.cards.length && fact.text ? ` ${fact.text}` : null,
      ),
    ]),
  );
}

function pileBlock(table) {
  const pile = table.pile;
  if (!pile) return null;
  const size = pile.size === null || pile.size === undefined ? "" : ` (${pile.size} cards)`;
  const items = [el("h4", { text: `Pile${size}` })];
  items.push(pile.cards.length ? cards(pile.cards) : el("p", { class: "ca-empty", text: "top card not seen yet" }));
  if (pile.announced) items.push(el("p", { class: "ca-announced" }, "Announced: ", suitElement(pile.announced)));
  if (pile.stock !== null && pile.stock !== undefined) items.push(el("p", { text: `Stock: ${pile.stock} cards` }));
  return el("div", { class: "ca-pile", "aria-label": "discard pile" }, items);
}

function meldsBlock(doc, table) {
  if (!table.melds || !table.melds.length) return null;
  return el(
    "div",
    { class: "ca-melds" },
    el("h4", { text: "Melds" }),
    el(
      "ul",
      {},
      table.melds.map((meld) =>
        el(
          "li",
          {},
          `Seat ${meld.seat}: ${meld.name}`,
          meld.points === undefined ? "" : ` (${meld.points})`,
          " ",
          cards(meld.cards),
        ),
      ),
    ),
  );
}

function callsBlock(table) {
  if (!table.calls || !table.calls.length) return null;
  return el(
    "div",
    { class: "ca-calls" },
    el("h4", { text: "Bids and calls" }),
    el(
      "ol",
      {},
      table.calls.map((call) => el("li", {}, `Seat ${call.seat}: ${moveText(call.text)}`)),
    ),
  );
}

/** The score sheet: one row per finished hand, this hand so far, and the totals. */
export function sheetTable(doc, table) {
  const seats = table.seats.map((_, i) => i);
  const head = el("tr", {}, el("th", { scope: "col", text: "" }), seats.map((s) => el("th", { scope: "col", text: seatName(doc, s) })));
  const rows = (table.sheet || []).map((row) =>
    el("tr", {}, el("th", { scope: "row", text: row.label }), row.points.map((p) => el("td", { text: String(p) }))),
  );
  if (table.hand_points) {
    rows.push(
      el("tr", { class: "ca-this-hand" }, el("th", { scope: "row", text: "This hand" }), table.hand_points.map((p) => el("td", { text: String(p) }))),
    );
  }
  rows.push(
    el(
      "tr",
      { class: "ca-totals" },
      el("th", { scope: "row", text: "Total" }),
      table.totals.map((p, seat) => el("td", { "data-total-seat": seat, text: String(p) })),
    ),
  );
  return el(
    "table",
    { class: "ca-sheet" },
    el("caption", { text: "Scores" }),
    el("thead", {}, head),
    el("tbody", {}, rows),
  );
}

/** The whole table for one position of the viewer. */
export function drawTable(doc, table) {
  const centre = el(
    "div",
    { class: "ca-centre" },
    el("h3", { class: "ca-heading", text: table.heading || "" }),
    factsBlock(table),
    trickBlock(doc, "Trick", table.trick),
    trickBlock(doc, "Last trick", table.last_trick),
    pileBlock(table),
    meldsBlock(doc, table),
    callsBlock(table),
  );
  const seats = el("div", { class: `ca-seats ca-seats-${table.seats.length}` }, table.seats.map((seat, i) => seatPanel(doc, table, seat, i)));
  return el("div", { class: "ca-board" }, seats, centre, el("div", { class: "ca-sheet-wrap" }, sheetTable(doc, table)));
}
