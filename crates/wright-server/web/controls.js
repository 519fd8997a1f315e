// The controls of a conversation: stop it while it runs, send a message to go on once it
// stopped or ended, fork a new conversation from an event, open its diff. Each button
// says what the server answered when it refuses (a 409 says why).

import { h, errorBox, ACTIVE, fill } from "./dom.js";
import { api } from "./api.js";

export function createControls(id, { forked, changed }) {
  const stop = h("button", { type: "button", id: "stop", class: "danger" }, "Stop");
  const text = h("textarea", { id: "message", rows: 2, "aria-label": "Message to the agent", placeholder: "Tell the agent how to go on" });
  const send = h("button", { type: "button", id: "send", class: "primary" }, "Send");
  const diff = h("a", { href: `#/c/${id}/diff`, id: "open-diff", class: "button" }, "Diff");
  const files = h("a", { href: `#/c/${id}/files`, id: "open-files", class: "button" }, "Files");
  const shell = h("a", { href: `#/c/${id}/terminal`, id: "open-terminal", class: "button" }, "Terminal");
  const note = h("div", { id: "control-error", "aria-live": "polite" });
  const forkPanel = h("div", { class: "fork-panel", id: "fork-panel", hidden: true });
  const el = h("section", { class: "controls", id: "controls" }, forkPanel, note,
    h("div", { class: "control-row" }, text, h("div", { class: "buttons" }, send, stop, diff, files, shell)));

  const attempt = async (button, work) => {
    note.replaceChildren();
    button.disabled = true;
    try {
      await work();
    } catch (err) {
      fill(note, errorBox(err));
    } finally {
      button.disabled = false;
    }
  };

  stop.addEventListener("click", () => attempt(stop, async () => {
    await api.interrupt(id);
    changed();
  }));

  const sendMessage = () => {
    const message = text.value.trim();
    if (!message) {
      text.focus();
      return;
    }
    attempt(send, async () => {
      await api.message(id, message);
      text.value = "";
      changed();
    });
  };
  send.addEventListener("click", sendMessage);
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) sendMessage();
  });

  function openFork(at) {
    const message = h("textarea", { id: "fork-message", rows: 2, "aria-label": "Message for the fork", placeholder: "What the fork should do instead (optional)" });
    const confirm = h("button", { type: "button", id: "fork-confirm", class: "primary" }, "Fork");
    const cancel = h("button", { type: "button", id: "fork-cancel" }, "Cancel");
    const failure = h("div", {});
    cancel.addEventListener("click", () => {
      forkPanel.hidden = true;
      forkPanel.replaceChildren();
    });
    confirm.addEventListener("click", async () => {
      confirm.disabled = true;
      failure.replaceChildren();
      try {
        const created = await api.fork(id, Number(at), message.value.trim() || undefined);
        forked(created.id);
      } catch (err) {
        fill(failure, errorBox(err, "fork-error"));
        confirm.disabled = false;
      }
    });
    fill(forkPanel, 
      h("div", { class: "fork-title" }, `Fork a new conversation from event #${at}: its history up to there, its files as they were then.`),
      message, failure, h("div", { class: "buttons" }, confirm, cancel));
    forkPanel.hidden = false;
    message.focus();
  }

  function update(info) {
    const active = ACTIVE.has(info.state);
    stop.hidden = !active;
    send.disabled = active;
    text.disabled = active;
    text.placeholder = active ? "It is running: stop it to send a message" : "Tell the agent how to go on";
    diff.hidden = active;
  }

  return { el, update, openFork };
}
