// Confirmations. A conversation whose policy asks before a risky action waits in
// `awaiting_confirmation` with that action logged and not run: this area, at the top of
// the conversation, shows the action (the server's `pending`: tool, arguments, risk, why,
// any flag) and the user's three answers — approve, approve always for this tool, reject
// with a reason — each sent to the server's confirm route with the action's event id, so
// an answer can never approve another action than the one shown. (Not the model's call
// id alone: servers repeat it from step to step, and the next question would look like
// the one just answered.)
// Whatever goes in here is the agent's text: as text. The buttons are the page's own;
// their handlers take nothing from the agent's content but the ids the server gave.

import { h, fill } from "./dom.js";
import { api } from "./api.js";
import { summary } from "./tools.js";

// What wright flagged about the call, in words (the server says it as a sentence, or as
// the log's typed flag).
function flagWords(flag) {
  if (typeof flag === "string") return flag;
  if (flag && flag.kind === "prompt_injection") return `possible prompt injection: it follows text the agent read (event #${flag.source}) that looks like instructions to it: “${flag.excerpt ?? ""}”`;
  return flag && flag.kind ? String(flag.kind) : "something";
}

export function confirmationArea() {
  return h("section", { class: "confirmation", id: "confirmation", hidden: true, "aria-live": "assertive" });
}

// Shows what the conversation waits on, or hides the area when it waits on nothing.
// `answered` is called once the server took an answer.
export function showConfirmation(area, id, info, answered) {
  const pending = info && info.pending;
  if (!info || info.state !== "awaiting_confirmation" || !pending) {
    area.hidden = true;
    area.replaceChildren();
    delete area.dataset.call;
    return;
  }
  // The same question: leave what the user is typing alone.
  const asked = String(pending.action);
  if (area.dataset.call === asked && !area.hidden) return;
  area.dataset.call = asked;
  area.hidden = false;
  // An external agent's own tool: the protocol tells it only "rejected", so the reason
  // is for the log (and the people reading it), not for its model.
  const why = pending.tool === "reported" ? "why not (logged; the agent is told only no)" : "why not (told to the model)";
  const reason = h("input", { type: "text", id: "confirm-reason", placeholder: why, maxlength: "2000" });
  const said = h("p", { class: "muted", id: "confirm-said" });
  const answer = async (approve, always) => {
    for (const b of area.querySelectorAll("button")) b.disabled = true;
    try {
      const body = { call_id: pending.call_id, action: pending.action, approve, always };
      if (!approve && reason.value.trim()) body.reason = reason.value.trim();
      await api.confirm(id, body);
      said.textContent = approve ? "Approved." : "Rejected.";
      if (answered) answered();
    } catch (err) {
      said.textContent = `Not taken: ${err.message}`;
      for (const b of area.querySelectorAll("button")) b.disabled = false;
    }
  };
  fill(area,
    h("h2", {}, `Waiting for a confirmation (risk ${pending.risk || "unknown"})`),
    h("pre", { class: "cmd", id: "pending-action" }, summary(pending.tool, pending.arguments)),
    pending.reason ? h("p", { class: "muted" }, pending.reason) : null,
    pending.flag ? h("p", { class: "warning", id: "confirm-flag" }, `Flagged: ${flagWords(pending.flag)}`) : null,
    h("div", { class: "control-row" },
      h("button", { type: "button", id: "confirm-approve", on: { click: () => answer(true, false) } }, "Approve"),
      h("button", { type: "button", id: "confirm-always", on: { click: () => answer(true, true) } }, pending.tool === "reported" ? "Always for this agent" : `Always for ${pending.tool}`),
      reason,
      h("button", { type: "button", id: "confirm-reject", class: "danger", on: { click: () => answer(false, false) } }, "Reject")),
    said);
}
