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
      this.call.append(h("div", { class: "tool" }, `calling ${delta.tool_call}`), h("pre", { class: "streaming-args" }, this.args));
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

// At most this many rows stay on the page (and a few more before they are trimmed): a
// long history's layout costs what its last rows cost. Older rows wait, built, behind a
// button that brings them back a page at a time.
const WINDOW = 200;
const SLACK = 25;

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
  const anchor = h("div", { class: "anchor", id: "anchor" });
  const earlier = [];
  const more = h("button", { type: "button", class: "link earlier", id: "earlier", hidden: true });
  const showMore = () => {
    more.hidden = earlier.length === 0;
    more.textContent = `Show ${Math.min(WINDOW, earlier.length)} earlier of ${earlier.length} events not shown`;
  };
  more.addEventListener("click", () => {
    list.prepend(...earlier.splice(Math.max(0, earlier.length - WINDOW)));
    showMore();
  });
  // The page follows new rows until the reader scrolls up (a wheel, a touch, a key), and
  // again once they are back at the bottom: then it is kept there, and the rows it
  // scrolled past are trimmed. Rows coming or going never count as the reader's move.
  let following = true;
  const onScroll = () => {
    if (window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 150) following = true;
  };
  const away = (event) => {
    if (event.type !== "wheel" || event.deltaY < 0) following = false;
  };
  const gestures = ["wheel", "touchmove", "keydown"];
  window.addEventListener("scroll", onScroll, { passive: true });
  for (const name of gestures) window.addEventListener(name, away, { passive: true });
  // Scrolling lays the page out there and then: during a burst, a few times a second.
  let followed = 0;
  const follow = (now) => {
    if (!following || (!now && performance.now() - followed < 250)) return;
    followed = performance.now();
    anchor.scrollIntoView({ block: "end" });
  };
  const trim = () => {
    const excess = list.children.length - WINDOW;
    if (excess < SLACK || !following) return;
    for (let i = 0; i < excess; i++) {
      const row = list.firstElementChild;
      row.remove();
      earlier.push(row);
    }
    showMore();
  };
  main.append(
    h("section", { class: "conv-head" }, h("div", { class: "title-row" }, state, title), meta, controls.links, notices),
    stats.el, confirm, more, list, anchor, controls.el);

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
    showConfirmation(confirm, id, info, () => refresh());
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
  let parked = false;
  let statsFrame = 0;
  const feed = new Feed(id, {
    event(ev, fragment, behind) {
      const el = render(ev);
      // A row with a whole window of rows queued behind it would be laid out only to be
      // trimmed: while the list is still empty it waits with the earlier ones directly.
      if (el && following && behind >= WINDOW && list.childElementCount === 0) {
        earlier.push(el);
        parked = true;
      } else if (el) {
        fragment.append(el);
      }
      shown = ev.id;
      if ((ev.kind === "message" && ev.source === "agent") || ev.kind === "action" || ev.kind === "usage" || ev.kind === "state") streaming.clear();
      if (ev.kind === "state" || ev.kind === "changes" || ev.kind === "start") refreshSoon();
    },
    flushed(fragment) {
      list.append(fragment);
      trim();
      if (parked) {
        parked = false;
        showMore();
      }
      streaming.keepLast();
      if (shown !== null) list.dataset.last = String(shown);
      stats.render();
      follow();
    },
    idle() {
      follow(true);
      list.dataset.idle = "1";
    },
    delta(delta) {
      streaming.add(delta);
      if (typeof delta.text === "string" || typeof delta.arguments === "string" || typeof delta.reasoning === "string") stats.piece();
      if (!statsFrame) {
        statsFrame = requestAnimationFrame(() => {
          statsFrame = 0;
          stats.render();
          follow();
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
      window.removeEventListener("scroll", onScroll);
      for (const name of gestures) window.removeEventListener(name, away);
      clearInterval(poll);
      clearTimeout(soon);
      feed.close();
    },
  };
}
