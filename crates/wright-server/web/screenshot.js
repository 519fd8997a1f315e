// A screenshot the `browser` tool saved, shown beside its step: an <img> of the server's
// own screenshot route (`GET /api/conversations/ID/screenshots/screenshot-N.png`, PNG
// only, behind the key's cookie). Only the tool's own answer names one — a `browser`
// observation that begins with the tool's sentence (page text comes wrapped as outside
// data and never begins so) — and only a name of the tool's form is put in the address,
// so nothing the agent or a page wrote leads the image anywhere else.

import { h } from "./dom.js";

const SAVED = /^screenshot saved for the user: .*\/screenshots\/(screenshot-[1-9][0-9]{0,4}\.png) \(\d+ KiB\)/;

// The screenshot's file name in `observation`, or null.
export function screenshotName(observation) {
  if (!observation || observation.tool !== "browser" || observation.is_error) return null;
  const saved = SAVED.exec(String(observation.output ?? ""));
  return saved ? saved[1] : null;
}

// The screenshot of `observation` in conversation `id`, as a figure; null when it has none.
export function screenshotView(id, observation) {
  const name = screenshotName(observation);
  if (!name) return null;
  const img = document.createElement("img");
  img.className = "screenshot";
  img.alt = `screenshot of the page (${name})`;
  img.loading = "lazy";
  img.src = `/api/conversations/${encodeURIComponent(id)}/screenshots/${name}`;
  return h("figure", { class: "screenshot" }, img, h("figcaption", { class: "muted" }, name));
}
