// The conversation list: state, task, repository, model, steps and age of each, newest
// first; searched by a text of the task and filtered by state (the server does both),
// refreshed every few seconds while the page is shown.

import { h, ago, baseName, errorBox, fill } from "./dom.js";
import { api } from "./api.js";

const STATES = ["queued", "starting", "running", "awaiting_confirmation", "finished", "stopped", "stuck", "failed", "interrupted"];

export function listPage(main) {
  const search = h("input", { type: "search", id: "search", placeholder: "Search tasks", "aria-label": "Search tasks" });
  const state = h("select", { id: "state-filter", "aria-label": "State" },
    h("option", { value: "" }, "any state"),
    STATES.map((s) => h("option", { value: s }, s.replace("_", " "))));
  const list = h("ul", { class: "conversations", id: "conversations" });
  const status = h("div", { class: "list-status" });
  main.append(
    h("div", { class: "toolbar" },
      h("h1", {}, "Conversations"),
      h("a", { href: "#/new", class: "button primary", id: "new-conversation" }, "New conversation")),
    h("div", { class: "filters" }, search, state),
    status,
    list);

  let generation = 0;
  async function load() {
    const mine = ++generation;
    try {
      const data = await api.list(search.value.trim(), state.value);
      if (mine !== generation) return;
      status.replaceChildren();
      render(data.conversations);
    } catch (err) {
      if (mine === generation) fill(status, errorBox(err));
    }
  }

  function render(conversations) {
    if (conversations.length === 0) {
      const filtered = search.value.trim() || state.value;
      fill(list, h("li", { class: "empty muted" },
        filtered ? "No conversation matches." : "No conversation yet. Start one with “New conversation”."));
      return;
    }
    fill(list, ...conversations.map((c) =>
      h("li", { class: "conversation", data: { id: c.id, state: c.state } },
        h("a", { href: `#/c/${c.id}` },
          h("span", { class: `badge state-${c.state}` }, c.state.replace("_", " ")),
          h("span", { class: "task" }, c.task || "(no task)"),
          h("span", { class: "repo", title: c.repository || "" }, baseName(c.repository) || "–"),
          h("span", { class: "model" }, c.model || "–"),
          h("span", { class: "steps" }, `${c.steps} step${c.steps === 1 ? "" : "s"}`),
          h("span", { class: "age" }, ago(c.last_active))))));
  }

  let typing;
  search.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(load, 200);
  });
  state.addEventListener("change", load);
  const poll = setInterval(() => {
    if (!document.hidden) load();
  }, 3000);
  return {
    ready: load(),
    dispose() {
      clearInterval(poll);
      clearTimeout(typing);
      generation++;
    },
  };
}
