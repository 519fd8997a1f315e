// A conversation, live: its task and state, the numbers as they happen, every event as a
// row (from its WebSocket), the reply being written as it streams, and the controls.

import { h, errorBox, baseName, ACTIVE, fill } from "./dom.js";
import { api } from "./api.js";
import { Feed } from "./feed.js";
import { Stats } from "./stats.js";
import { createRenderer } from "./events.js";
import { createControls } from "./controls.js";
import { confirmationArea, showConfirmation } from "./confirm.js";

// The reply the model is writing, as its pieces come: text, reasoning, calls.
class Streaming {
  constructor(list) {
    this.list = list;
    this.li = null;
  }
  add(delta) {
    if (!this.li) {
      this.reasoning = document.createTextNode("");
      this.text = document.createTextNode("");
      this.call = h("div", { class: "streaming-call" });
      this.li = h("li", { class: "ev streaming", id: "streaming" },
        h("div", { class: "ev-head" }, h("span", { class: "label" }, "agent · writing…")),
        h("div", { class: "text reasoning" }, this.reasoning),
        h("div", { class: "text", id: "streaming-text" }, this.text),
        this.call);
      this.list.append(this.li);
    }
    if (typeof delta.text === "string") this.text.appendData(delta.text);
    if (typeof delta.reasoning === "string") this.reasoning.appendData(delta.reasoning);
    if (typeof delta.tool_call === "string") {
      this.args = document.createTextNode("");
      this.call.append(h("div", { class: "tool" }, `calling ${delta.tool_call}`), h("pre", { class: "json" }, this.args));
    }
    if (typeof delta.arguments === "string" && this.args) this.args.appendData(delta.arguments);
  }
  keepLast() {
    if (this.li && this.list.lastChild !== this.li) this.list.append(this.li);
  }
  clear() {
    if (this.li) this.li.remove();
    this.li = null;
  }
}

const nearBottom = () => window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120;

export function conversationPage(main, id) {
  const stats = new Stats();
  const title = h("h1", { class: "task", id: "task-title" }, "…");
  const state = h("span", { class: "badge", id: "state" }, "…");
  const meta = h("div", { class: "meta", id: "conv-meta" });
  const notices = h("div", { id: "notices" });
  const confirm = confirmationArea();
  const list = h("ol", { class: "events", id: "events" });
  const streaming = new Streaming(list);
  const ctx = { id, stats, lastAction: null };
  const render = createRenderer(ctx);
  let info = null;
  let disposed = false;

  const controls = createControls(id, {
    forked: (newId) => {
      location.hash = `#/c/${newId}`;
    },
    changed: () => refresh(),
  });
  main.append(
    h("section", { class: "conv-head" }, h("div", { class: "title-row" }, state, title), meta, notices),
    stats.el, confirm, list, controls.el);

  list.addEventListener("click", (event) => {
    const button = event.target.closest("button.fork");
    if (!button) return;
    const li = button.closest("li.ev");
    if (li) controls.openFork(li.dataset.at);
  });

  function showInfo() {
    state.textContent = info.state.replace("_", " ");
    state.className = `badge state-${info.state}`;
    state.dataset.state = info.state;
    document.body.dataset.state = info.state;
    title.textContent = info.task || "(no task)";
    const facts = [];
    if (info.model) facts.push(info.model);
    if (info.repository) facts.push(baseName(info.repository));
    if (info.branch) facts.push(info.branch);
    facts.push(`${info.steps} step${info.steps === 1 ? "" : "s"}`);
    fill(meta, h("span", { title: info.repository || "" }, facts.join(" · ")), " · ", h("span", { class: "muted" }, id));
    fill(notices, 
      info.error ? h("p", { class: "error", id: "conv-error" }, info.error) : null,
      ...(info.notices || []).map((n) => h("p", { class: n.warning ? "warning" : "muted" }, n.text)));
    controls.update(info);
    showConfirmation(confirm, info, ctx.lastAction && ctx.lastAction.ev);
  }

  async function refresh() {
    try {
      info = await api.get(id);
      if (!disposed) showInfo();
    } catch (err) {
      if (disposed) return;
      fill(notices, errorBox(err));
      // No such conversation: nothing will come on its socket either.
      if (err.status === 404) feed.close();
    }
  }

  let soon = 0;
  const refreshSoon = () => {
    clearTimeout(soon);
    soon = setTimeout(refresh, 50);
  };
  let shown = null;
  let statsFrame = 0;
  const feed = new Feed(id, {
    event(ev, fragment) {
      const el = render(ev);
      if (el) fragment.append(el);
      shown = ev.id;
      if ((ev.kind === "message" && ev.source === "agent") || ev.kind === "action" || ev.kind === "usage" || ev.kind === "state") streaming.clear();
      if (ev.kind === "state" || ev.kind === "changes" || ev.kind === "start") refreshSoon();
    },
    flushed(fragment) {
      const stick = nearBottom();
      list.append(fragment);
      streaming.keepLast();
      if (shown !== null) list.dataset.last = String(shown);
      stats.render();
      if (stick) window.scrollTo(0, document.documentElement.scrollHeight);
    },
    idle() {
      list.dataset.idle = "1";
    },
    delta(delta) {
      const stick = nearBottom();
      streaming.add(delta);
      if (typeof delta.text === "string" || typeof delta.arguments === "string" || typeof delta.reasoning === "string") stats.piece();
      if (!statsFrame) {
        statsFrame = requestAnimationFrame(() => {
          statsFrame = 0;
          stats.render();
          if (stick) window.scrollTo(0, document.documentElement.scrollHeight);
        });
      }
    },
  });
  feed.open();
  stats.render();
  // The server's own phase (queued, starting) is no event: asked while it moves.
  const poll = setInterval(() => {
    if (!document.hidden && (!info || ACTIVE.has(info.state))) refresh();
  }, 2000);
  return {
    ready: refresh(),
    dispose() {
      disposed = true;
      clearInterval(poll);
      clearTimeout(soon);
      feed.close();
    },
  };
}
