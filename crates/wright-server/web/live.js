// The diff so far, while the agent works: the server's live-diff route (git inside the
// conversation's sandbox while it runs; what it handed over once it ended), read again
// when an event says files may have changed — a tool's result, the changes handed over,
// a new state — never on a timer. Reads are coalesced: one at a time, and one more after
// it when events came meanwhile. The diff is the agent's text: put in as text.

import { h, fill, errorBox } from "./dom.js";
import { api } from "./api.js";
import { Feed } from "./feed.js";
import { fileBlocks } from "./diff.js";

// How often a 409 (the run ending, or not started) is asked again.
const ENDING_TRIES = 8;

// The states a run ends in.
const ENDED = new Set(["finished", "stopped", "stuck", "failed", "interrupted"]);

// Events after which the files may differ.
const CHANGING = new Set(["observation", "changes", "state"]);

export function livePage(main, id) {
  const status = h("p", { class: "muted", id: "live-status", "aria-live": "polite" }, "Reading the changes…");
  const files = h("div", { class: "files", id: "live-files" });
  main.append(status, files);
  let reads = 0;
  let busy = false;
  let again = false;
  let disposed = false;
  let ending = 0;
  // Whether the log says its run ended.
  let over = false;
  let retry = 0;

  // A run that is ending (its changes being handed over) or not started yet answers 409
  // or still live, and no event may come to say when that is done: asked again a few
  // times, slower each time, then left to the next event.
  function later() {
    if (ending >= ENDING_TRIES) return;
    ending += 1;
    clearTimeout(retry);
    retry = setTimeout(read, 300 * ending);
  }

  async function read() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    again = false;
    try {
      const answer = await api.liveDiff(id);
      if (disposed) return;
      reads += 1;
      files.dataset.reads = String(reads);
      files.dataset.live = answer.live ? "1" : "0";
      status.textContent = answer.live ? "Live: the agent's files as they are now, against where it started." : "The run ended: the change it handed over.";
      if (answer.diff) fill(files, fileBlocks(id, answer.diff));
      else fill(files, h("p", { class: "muted", id: "no-diff" }, answer.none || "No change."));
      // The log says the run ended, the server still reads it live: it is ending.
      if (answer.live && over) later();
      else ending = 0;
    } catch (err) {
      if (disposed) return;
      fill(files, errorBox(err, "live-error"));
      if (err.status === 409) later();
    } finally {
      busy = false;
      if (again && !disposed) read();
    }
  }

  // The log is replayed first: only what comes after it asks for a new read.
  let caughtUp = false;
  const feed = new Feed(id, {
    event(ev) {
      if (ev.kind === "state") over = ENDED.has(ev.state);
      if (ev.kind === "changes") over = true;
      if (caughtUp && CHANGING.has(ev.kind)) again = true;
    },
    flushed() {},
    idle() {
      if (!caughtUp) {
        caughtUp = true;
        again = false;
        return;
      }
      if (again) read();
    },
    delta() {},
  });
  feed.open();
  return {
    ready: read(),
    dispose() {
      disposed = true;
      clearTimeout(retry);
      feed.close();
    },
  };
}
