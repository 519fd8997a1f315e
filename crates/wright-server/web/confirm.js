// The place for confirmations. A conversation whose policy asks before a risky action
// waits in `awaiting_confirmation` with that action logged and not run: this area, at
// the top of the conversation, shows the action it waits on. The approve / reject
// buttons belong here, wired to the server's confirmation routes once they exist; this
// server has none yet, so the area says so instead of offering a button that cannot work.
// Whatever goes in here is the agent's text: as text, and nothing in the page's content
// can press a button for the user (no button takes its action from page content).

import { h, fill } from "./dom.js";
import { summary } from "./tools.js";

export function confirmationArea() {
  return h("section", { class: "confirmation", id: "confirmation", hidden: true, "aria-live": "assertive" });
}

// Shows what the conversation waits on, or hides the area when it waits on nothing.
export function showConfirmation(area, info, pending) {
  if (!info || info.state !== "awaiting_confirmation") {
    area.hidden = true;
    area.replaceChildren();
    return;
  }
  area.hidden = false;
  fill(area, 
    h("h2", {}, "Waiting for a confirmation"),
    pending ? h("pre", { class: "cmd", id: "pending-action" }, summary(pending.tool, pending.arguments)) : null,
    h("p", { class: "muted" }, "This server cannot take an answer yet: stop the conversation, or answer where it runs."));
}
