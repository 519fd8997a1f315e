// The server's automations (`GET /api/automations`): each one's trigger, repository and
// what it does with a result, and its last firings — when, for which issue, how each
// ended and why, with a link to the conversation it started. What a firing says (an
// issue's number, a failure's words, a pull request's address) came partly from a forge:
// shown as text; the only links are to this UI's own conversations.

import { h, ago, errorBox, fill } from "./dom.js";
import { api, isId } from "./api.js";

// A firing's last step, in words.
const OUTCOMES = {
  fired: "fired",
  ignored: "ignored (not an event it fires for)",
  skipped: "skipped (busy)",
  started: "running",
  ended: "ended",
  pushed: "pushed its branch",
  pull_request_opened: "opened a pull request",
  pull_request_updated: "updated its pull request",
  failed: "failed",
};
const GOOD = new Set(["ended", "pushed", "pull_request_opened", "pull_request_updated"]);
const BAD = new Set(["failed"]);

function trigger(a) {
  if (a.on === "schedule") return `on a schedule: ${a.schedule || "?"}${a.timezone ? ` (${a.timezone})` : ""}`;
  const forge = a.forge ? ` from ${a.forge}` : "";
  return `on a webhook${forge}: POST ${a.hook || `/hooks/${a.name}`}${a.label ? `, issues labelled ${a.label}` : ""}`;
}

function result(a) {
  const parts = [];
  if (a.push) parts.push("pushes its branch");
  if (a.pull_request) parts.push("opens a pull request");
  return parts.length ? parts.join(", ") : "keeps its branch here";
}

function firingRow(f) {
  const outcome = OUTCOMES[f.outcome] || String(f.outcome);
  const cls = GOOD.has(f.outcome) ? "badge good" : BAD.has(f.outcome) ? "badge bad" : "badge pending";
  const conversation = isId(f.conversation)
    ? h("a", { href: `#/c/${f.conversation}`, class: "conversation-link", data: { id: f.conversation } }, "open its conversation")
    : h("span", { class: "muted" }, "no conversation");
  return h("li", { class: "firing", data: { firing: f.firing, outcome: f.outcome } },
    h("div", { class: "firing-head" },
      h("span", { class: cls }, outcome),
      h("span", { class: "muted" }, ago(f.at)),
      typeof f.issue === "number" ? h("span", {}, `issue #${f.issue}`) : null,
      conversation),
    f.detail ? h("div", { class: f.outcome === "failed" ? "error detail" : "muted detail" }, f.detail) : null,
    f.pull_request ? h("div", { class: "muted" }, `pull request: ${f.pull_request}`) : null);
}

function automation(a) {
  const firings = a.firings || [];
  return h("section", { class: "automation", data: { name: a.name } },
    h("h2", {}, a.name),
    h("p", { class: "muted" }, trigger(a)),
    h("p", {}, `Repository ${a.repository}; ${result(a)}.`),
    firings.length
      ? h("ol", { class: "firings" }, firings.map(firingRow))
      : h("p", { class: "muted no-firing" }, "It has not fired yet."));
}

export function automationsPage(main) {
  const list = h("div", { id: "automations" }, h("p", { class: "muted" }, "Reading the automations…"));
  main.append(h("div", { class: "toolbar" }, h("h1", {}, "Automations")), list);
  async function load() {
    try {
      const data = await api.automations();
      const all = data.automations || [];
      fill(list, all.length
        ? all.map(automation)
        : h("p", { class: "muted", id: "no-automations" }, "No automation: they are defined in the server's configuration file ([automations.NAME])."));
      list.dataset.loaded = "1";
    } catch (err) {
      fill(list, errorBox(err, "automations-error"));
    }
  }
  // Firings come without a person: the page looks again every few seconds while shown.
  const poll = setInterval(() => {
    if (!document.hidden) load();
  }, 5000);
  return { ready: load(), dispose: () => clearInterval(poll) };
}
