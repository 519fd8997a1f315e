// A conversation's change, file by file: what wright's review found on top, then each
// file's diff (collapsible, added and removed lines marked, its new version downloadable
// as an attachment), and the buttons to apply it to your branch or discard it.

import { h, errorBox, fill } from "./dom.js";
import { api, allEvents } from "./api.js";
import { diffText } from "./tools.js";

// A path as git writes it in a `---`/`+++` line: maybe C-quoted, with its a/ or b/.
export function gitPath(field) {
  let text = field.replace(/\t$/, "");
  if (text === "/dev/null") return null;
  if (text.startsWith('"') && text.endsWith('"')) {
    const bytes = [];
    const inner = text.slice(1, -1);
    const escapes = { n: 10, t: 9, '"': 34, "\\": 92, a: 7, b: 8, f: 12, r: 13, v: 11 };
    for (let i = 0; i < inner.length; i++) {
      const c = inner[i];
      if (c === "\\" && /^[0-7]{3}$/.test(inner.slice(i + 1, i + 4))) {
        bytes.push(parseInt(inner.slice(i + 1, i + 4), 8));
        i += 3;
      } else if (c === "\\" && inner[i + 1] in escapes) {
        bytes.push(escapes[inner[i + 1]]);
        i += 1;
      } else {
        bytes.push(...new TextEncoder().encode(c));
      }
    }
    text = new TextDecoder().decode(new Uint8Array(bytes));
  }
  return text.replace(/^[ab]\//, "");
}

// The diff cut at each `diff --git`: each file's lines, path and counts.
export function splitDiff(text) {
  const files = [];
  let file = null;
  for (const line of String(text).split("\n")) {
    if (line.startsWith("diff --git ") || !file) {
      file = { lines: [], path: null, old: null, added: 0, removed: 0, hunks: false, binary: false };
      files.push(file);
    }
    file.lines.push(line);
    if (line.startsWith("@@")) file.hunks = true;
    else if (!file.hunks && line.startsWith("+++ ")) file.path = gitPath(line.slice(4));
    else if (!file.hunks && line.startsWith("--- ")) file.old = gitPath(line.slice(4));
    else if (!file.hunks && line.startsWith("rename to ")) file.path = line.slice(10);
    else if (!file.hunks && line.startsWith("Binary files ")) file.binary = true;
    else if (file.hunks && line.startsWith("+")) file.added++;
    else if (file.hunks && line.startsWith("-")) file.removed++;
  }
  return files.filter((f) => f.lines.some((l) => l !== ""));
}

// A diff as its summary line and one folded block per file (all open unless it is long).
export function fileBlocks(id, diff) {
  const parts = splitDiff(diff);
  const added = parts.reduce((n, f) => n + f.added, 0);
  const removed = parts.reduce((n, f) => n + f.removed, 0);
  const big = parts.reduce((n, f) => n + f.lines.length, 0) > 3000;
  return [
    h("p", { class: "muted", id: "diff-summary" }, `${parts.length} file${parts.length === 1 ? "" : "s"} changed, +${added} −${removed}`),
    ...parts.map((f, i) => {
      const name = f.path || f.old || f.lines[0];
      const download = f.path && !f.binary ? h("a", { href: api.fileUrl(id, f.path), download: "", class: "download", title: "Download this file as the change leaves it" }, "download") : null;
      return h("details", { class: "file", open: !big || i === 0, data: { path: name } },
        h("summary", {}, h("span", { class: "path" }, name), h("span", { class: "counts" }, h("span", { class: "add" }, `+${f.added}`), " ", h("span", { class: "del" }, `−${f.removed}`)), download),
        diffText(f.lines.join("\n")));
    }),
  ];
}

export function diffPage(main, id) {
  const outcome = h("div", { id: "outcome", "aria-live": "polite" });
  const apply = h("button", { type: "button", id: "apply", class: "primary", disabled: true }, "Apply to my branch");
  const discard = h("button", { type: "button", id: "discard", class: "danger", disabled: true }, "Discard");
  const review = h("section", { class: "review-box", id: "review" });
  const files = h("div", { class: "files", id: "files" }, h("p", { class: "muted" }, "Reading the change…"));
  const title = h("h1", {}, "Changes");
  main.append(
    h("div", { class: "toolbar" }, title, h("a", { href: `#/c/${id}`, class: "button", id: "back" }, "Back to the conversation")),
    review,
    h("section", { class: "decide" }, h("div", { class: "buttons" }, apply, discard), outcome),
    files);

  const decide = (button, work) => button.addEventListener("click", async () => {
    apply.disabled = discard.disabled = true;
    outcome.replaceChildren();
    try {
      fill(outcome, h("p", { class: "ok" }, await work()));
    } catch (err) {
      fill(outcome, errorBox(err, "decide-error"));
      apply.disabled = discard.disabled = false;
    }
  });
  decide(apply, async () => {
    const done = await api.apply(id);
    return `Applied ${done.branch || "the change"}${done.into ? ` into ${done.into}` : ""}.`;
  });
  // Discarding deletes work: the page asks first, in itself (no browser dialog), and
  // only the second button calls the server.
  const sure = h("div", { class: "confirm-discard", id: "discard-confirm", hidden: true });
  outcome.before(sure);
  discard.addEventListener("click", () => {
    const yes = h("button", { type: "button", id: "discard-yes", class: "danger" }, "Yes, discard it");
    const no = h("button", { type: "button", id: "discard-no" }, "Keep it");
    no.addEventListener("click", () => {
      sure.hidden = true;
      sure.replaceChildren();
      apply.disabled = discard.disabled = false;
    });
    decide(yes, async () => {
      sure.hidden = true;
      await api.discard(id);
      return "Discarded: its branch and its clone are gone.";
    });
    fill(sure, h("p", { class: "warning" }, "Discard deletes this conversation's work: its branch and its clone. It cannot be undone."),
      h("div", { class: "buttons" }, yes, no));
    sure.hidden = false;
    apply.disabled = discard.disabled = true;
    no.focus();
  });

  const change = api.diff(id).then((answer) => {
    if (!answer.diff) {
      fill(files, h("p", { class: "muted", id: "no-diff" }, answer.none || "No change."));
      return;
    }
    fill(files, fileBlocks(id, answer.diff));
    apply.disabled = discard.disabled = false;
  }, (err) => fill(files, errorBox(err, "diff-error")));

  // What wright's review found before it took `finish`: on top, where it is read first.
  const found = allEvents(id).then((events) => {
    const last = [...events].reverse().find((e) => e.kind === "review");
    const task = events.find((e) => e.kind === "message" && e.source === "user");
    if (task) title.textContent = `Changes: ${String(task.text).split("\n", 1)[0]}`;
    const lines = [];
    if (last) {
      if (last.test_files_changed?.length) lines.push(`test files changed: ${last.test_files_changed.join(", ")}`);
      for (const r of last.tests_removed || []) lines.push(`test or assertion removed: ${r}`);
      for (const s of last.tests_skipped || []) lines.push(`test skipped: ${s}`);
      if (last.unmentioned_files?.length) lines.push(`files the task does not mention: ${last.unmentioned_files.join(", ")}`);
    }
    const changes = [...events].reverse().find((e) => e.kind === "changes");
    if (changes?.configuring?.length) lines.push(`changes files that configure git or wright: ${changes.configuring.join(", ")}`);
    fill(review, lines.length
      ? h("div", {}, h("h2", {}, "Review findings"), h("ul", { class: "warnings" }, lines.map((l) => h("li", { class: "warning" }, l))))
      : h("p", { class: "ok" }, "Review: nothing to flag."));
  }, (err) => fill(review, errorBox(err)));

  return { ready: Promise.allSettled([change, found]), dispose() {} };
}
