// A value the page has no special view for (an unknown tool's arguments, an event kind
// this page does not know) as text fields: an object's names and values, a list's items,
// nested ones indented — never as JSON. Every name and value goes in as text.

import { h } from "./dom.js";

const scalar = (value) => (value === null || value === undefined ? "–" : String(value));

export function fieldsView(value, depth = 0) {
  if (depth > 6) return h("span", { class: "muted" }, "…");
  if (Array.isArray(value)) {
    if (value.length === 0) return h("span", { class: "muted" }, "none");
    return h("ol", { class: "field-list" }, value.map((item) => h("li", {}, fieldsView(item, depth + 1))));
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return h("span", { class: "muted" }, "nothing");
    return h("dl", { class: "fields" }, entries.map(([name, v]) => [
      h("dt", {}, name.replace(/_/g, " ")),
      h("dd", {}, v && typeof v === "object" ? fieldsView(v, depth + 1) : h("span", { class: "value" }, scalar(v))),
    ]));
  }
  return h("span", { class: "value" }, scalar(value));
}
