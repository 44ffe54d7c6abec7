// Cards as text: "QS" -> "Q♠" with its suit's colour and a spoken name (docs/replay-frames.md).

const SUITS = {
  C: { symbol: "♣", word: "clubs", colour: "black" },
  D: { symbol: "♦", word: "diamonds", colour: "red" },
  H: { symbol: "♥", word: "hearts", colour: "red" },
  S: { symbol: "♠", word: "spades", colour: "black" },
};

const RANKS = {
  A: ["A", "ace"], K: ["K", "king"], Q: ["Q", "queen"], J: ["J", "jack"], T: ["10", "ten"],
  9: ["9", "nine"], 8: ["8", "eight"], 7: ["7", "seven"], 6: ["6", "six"], 5: ["5", "five"],
  4: ["4", "four"], 3: ["3", "three"], 2: ["2", "two"],
};

/** The parts of a card name ("QS", "TH", Pinochle's "QS#1"), or null if it is not one. */
export function parseCard(name) {
  const match = /^([2-9TJQKA])([CDHS])(?:#([01]))?$/.exec(name);
  if (!match) return null;
  const [, rank, suit, copy] = match;
  return { rank, suit, copy: copy === undefined ? null : Number(copy) };
}

/** The card as people read it: "10♥". */
export function cardText(name) {
  const card = parseCard(name);
  return card ? RANKS[card.rank][0] + SUITS[card.suit].symbol : name;
}

/** The card as a screen reader says it: "ten of hearts". */
export function cardWords(name) {
  const card = parseCard(name);
  return card ? `${RANKS[card.rank][1]} of ${SUITS[card.suit].word}` : name;
}

/** A face-up card element; data-card holds the exact name (tests check it). */
export function cardElement(name, extraClass = "") {
  const card = parseCard(name);
  const span = document.createElement("span");
  span.className = `ca-card ${card ? "ca-" + SUITS[card.suit].colour : ""} ${extraClass}`.trim();
  span.dataset.card = name;
  span.setAttribute("role", "img");
  span.setAttribute("aria-label", cardWords(name));
  span.textContent = cardText(name);
  return span;
}

/** A suit sign ("♠ spades") for trumps and announced suits. */
export function suitElement(letter, words) {
  const suit = SUITS[letter];
  const span = document.createElement("span");
  span.className = `ca-suit ca-${suit ? suit.colour : "black"}`;
  span.setAttribute("aria-label", words || (suit ? suit.word : letter));
  span.textContent = suit ? `${suit.symbol} ${words || suit.word}` : letter;
  return span;
}

/** A hidden hand: one card back and how many cards it holds, if known. */
export function backElement(count) {
  const span = document.createElement("span");
  span.className = "ca-card ca-back";
  span.setAttribute("role", "img");
  const words = count === null || count === undefined ? "hidden hand" : `${count} hidden cards`;
  span.setAttribute("aria-label", words);
  span.textContent = count === null || count === undefined ? "🂠" : `🂠 × ${count}`;
  return span;
}

/** A move's text with its cards written as people read them ("play Q♠"); plain text only. */
export function moveText(text) {
  return text.replace(/\b(10|[2-9TJQKA])([CDHS])(#[01])?(?![\w#])/g, (whole, rank, suit) =>
    cardText((rank === "10" ? "T" : rank) + suit),
  );
}
