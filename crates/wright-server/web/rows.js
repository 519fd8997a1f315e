// The pieces every event row is made of: the row itself (its label, its event id, the
// fork button) and a <details> whose body is made only when first opened.

import { h, append } from "./dom.js";

export const row = (ev, kind, label, ...body) =>
  h("li", { class: `ev ${kind}`, id: `ev-${ev.id}`, data: { id: ev.id, at: ev.id, kind: ev.kind } },
    h("div", { class: "ev-head" },
      h("span", { class: "label" }, label),
      h("span", { class: "ev-id", title: "event id (what a fork takes)" }, `#${ev.id}`),
      h("button", { type: "button", class: "fork link", title: "Fork a new conversation from here" }, "fork")),
    ...body);

// A <details> whose body is made when first opened: a long output costs nothing until
// someone reads it.
export function lazy(summaryNodes, make, className) {
  const body = h("div", { class: "details-body" });
  const details = h("details", { class: className }, h("summary", {}, ...summaryNodes), body);
  let made = false;
  details.addEventListener("toggle", () => {
    if (details.open && !made) {
      made = true;
      append(body, [make()]);
    }
  });
  return { details, body, made: () => made };
}
