// The controls of a conversation: stop it while it runs, send a message to go on once it
// stopped or ended, ask a side question (`/ask`: answered from its context, never part
// of its history; while it runs, between two steps), fork a new conversation from an
// event, open its diff. Each button
// says what the server answered when it refuses (a 409 says why).

import { h, errorBox, ACTIVE, fill } from "./dom.js";
import { api } from "./api.js";

export function createControls(id, { forked, changed }) {
  const stop = h("button", { type: "button", id: "stop", class: "danger" }, "Stop");
  const text = h("textarea", { id: "message", rows: 2, "aria-label": "Message to the agent", placeholder: "Tell the agent how to go on" });
  const send = h("button", { type: "button", id: "send", class: "primary" }, "Send");
  const diff = h("a", { href: `#/c/${id}/diff`, id: "open-diff", class: "button" }, "Diff");
  const live = h("a", { href: `#/c/${id}/changes`, id: "open-changes", class: "button" }, "Changes so far");
  const files = h("a", { href: `#/c/${id}/files`, id: "open-files", class: "button" }, "Files");
  const shell = h("a", { href: `#/c/${id}/terminal`, id: "open-terminal", class: "button" }, "Terminal");
  const askButton = h("button", { type: "button", id: "open-ask" }, "Ask aside");
  const askPanel = h("div", { class: "ask-panel", id: "ask-panel", hidden: true });
  const note = h("div", { id: "control-error", "aria-live": "polite" });
  const forkPanel = h("div", { class: "fork-panel", id: "fork-panel", hidden: true });
  const el = h("section", { class: "controls", id: "controls" }, forkPanel, askPanel, note,
    h("div", { class: "control-row" }, text, h("div", { class: "buttons" }, send, stop, askButton)));
  // Where its work is: in the page's head, not the sticky controls (a phone's screen
  // has room for one row of buttons there).
  const links = h("nav", { class: "buttons work-links", id: "work-links" }, diff, live, files, shell);

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

  // A side question: its answer shown here (it is also logged, as a row of its own).
  askButton.addEventListener("click", () => {
    if (!askPanel.hidden) {
      askPanel.hidden = true;
      return;
    }
    const question = h("textarea", { id: "ask-question", rows: 2, "aria-label": "Side question", placeholder: "A question about this conversation (it does not change its work)" });
    const ask = h("button", { type: "button", id: "ask-send", class: "primary" }, "Ask");
    const answer = h("div", { id: "ask-answer", class: "ask-answer", "aria-live": "polite" });
    ask.addEventListener("click", async () => {
      const text = question.value.trim();
      if (!text) {
        question.focus();
        return;
      }
      ask.disabled = true;
      fill(answer, h("p", { class: "muted" }, "Asking… (a running conversation answers between two steps)"));
      try {
        const replied = await api.ask(id, text);
        fill(answer, h("p", { class: "muted" }, "Answer:"), h("div", { class: "text", id: "ask-reply" }, String(replied.answer ?? "")));
      } catch (err) {
        fill(answer, errorBox(err, "ask-error"));
      } finally {
        ask.disabled = false;
      }
    });
    fill(askPanel, question, h("div", { class: "buttons" }, ask), answer);
    askPanel.hidden = false;
    question.focus();
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
    live.hidden = !active;
  }

  return { el, links, update, openFork };
}
