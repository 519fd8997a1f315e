// A conversation's workspace as it is now: the diff so far (live.js), a file tree (one directory listed at a time,
// from the server's files route: links and FIFOs are listed, never followed or opened)
// beside a read-only viewer of the file chosen; and a terminal pane with every command
// the agent ran and its whole output, live from the conversation's event socket. All of
// it (names, contents, outputs) is the agent's text: put in as text.

import { h, fill, errorBox } from "./dom.js";
import { api } from "./api.js";
import { Feed } from "./feed.js";
import { plain, untrusted } from "./tools.js";
import { livePage } from "./live.js";

// The most of a file the viewer shows.
const VIEW_CAP = 1024 * 1024;

const join = (dir, name) => (dir === "." || dir === "" ? name : `${dir}/${name}`);

// The viewer: a file's text with its line numbers, or why it is not shown.
async function view(id, path, pane) {
  fill(pane, h("p", { class: "muted" }, `Reading ${path}…`));
  try {
    const bytes = await api.fileBytes(id, path);
    const head = h("div", { class: "viewer-head" }, h("span", { class: "path", id: "viewer-path" }, path), h("span", { class: "muted" }, `${bytes.byteLength} bytes`));
    if (bytes.subarray(0, 8000).includes(0)) {
      fill(pane, head, h("p", { class: "muted", id: "viewer-binary" }, "A binary file: not shown."));
      return;
    }
    const text = new TextDecoder().decode(bytes.subarray(0, VIEW_CAP));
    const lines = text.split("\n");
    if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
    const width = String(lines.length).length;
    const pre = h("pre", { class: "viewer", id: "viewer-text" },
      lines.map((line, i) => h("span", { class: "line" }, h("span", { class: "ln" }, String(i + 1).padStart(width)), `${line}\n`)));
    fill(pane, head, pre, bytes.byteLength > VIEW_CAP ? h("p", { class: "muted" }, "Cut at 1 MB.") : null);
  } catch (err) {
    fill(pane, errorBox(err, "viewer-error"));
  }
}

// One directory's entries as a list; a directory opens (listed then) on a click.
function directory(id, path, open) {
  const list = h("ul", { class: "tree", data: { path } }, h("li", { class: "muted" }, "…"));
  api.files(id, path).then((listing) => {
    const rows = listing.entries.map((entry) => {
      const full = join(listing.path, entry.name);
      if (entry.kind === "dir") {
        const button = h("button", { type: "button", class: "entry dir link", data: { path: full } }, `${entry.name}/`);
        const item = h("li", {}, button);
        let sub = null;
        button.addEventListener("click", () => {
          if (sub) {
            sub.hidden = !sub.hidden;
            return;
          }
          sub = directory(id, full, open);
          item.append(sub);
        });
        return item;
      }
      if (entry.kind === "file") {
        const button = h("button", { type: "button", class: "entry file link", data: { path: full } }, entry.name);
        button.addEventListener("click", () => open(full));
        return h("li", {}, button, h("span", { class: "muted size" }, ` ${entry.size ?? ""}`));
      }
      const what = entry.kind === "link" ? "a link, not followed" : "not a regular file, not opened";
      return h("li", { class: "entry other muted", data: { path: full } }, `${entry.name} (${what})`);
    });
    if (!rows.length) rows.push(h("li", { class: "muted" }, "empty"));
    if (listing.cut) rows.push(h("li", { class: "muted" }, "more entries not listed"));
    fill(list, rows);
  }, (err) => fill(list, h("li", {}, errorBox(err))));
  return list;
}

// Every command the agent ran and its whole output, as a terminal shows them.
function terminal(id) {
  const screen = h("pre", { class: "terminal", id: "terminal", "aria-label": "Commands and their output" });
  const calls = new Map();
  const feed = new Feed(id, {
    event(ev, fragment) {
      if (ev.kind === "action" && ev.tool === "terminal") {
        const command = ev.arguments && typeof ev.arguments.command === "string" ? ev.arguments.command : "";
        const block = h("span", { class: "term-block", data: { call: ev.call_id } }, h("span", { class: "prompt" }, `$ ${command}\n`));
        calls.set(ev.call_id, block);
        fragment.append(block);
      } else if (ev.kind === "observation" && calls.has(ev.call_id)) {
        const outside = untrusted(ev.output);
        const text = plain(outside ? outside.text : ev.output);
        const block = calls.get(ev.call_id);
        block.append(h("span", { class: "term-out" }, text.endsWith("\n") || !text ? text : `${text}\n`));
        if (typeof ev.exit_code === "number" && ev.exit_code !== 0) block.append(h("span", { class: "term-exit" }, `[exit ${ev.exit_code}]\n`));
      }
    },
    flushed(fragment) {
      screen.append(fragment);
    },
    idle() {
      screen.dataset.idle = "1";
      if (!screen.childElementCount) screen.dataset.empty = "1";
    },
    delta() {},
  });
  feed.open();
  return { el: screen, close: () => feed.close() };
}

const TITLES = { files: "Files", terminal: "Terminal", changes: "Changes so far" };

export function workspacePage(main, id, tab) {
  const tabs = h("nav", { class: "tabs" },
    h("a", { href: `#/c/${id}/files`, id: "tab-files", class: tab === "files" ? "current" : null }, "Files"),
    h("a", { href: `#/c/${id}/changes`, id: "tab-changes", class: tab === "changes" ? "current" : null }, "Changes"),
    h("a", { href: `#/c/${id}/terminal`, id: "tab-terminal", class: tab === "terminal" ? "current" : null }, "Terminal"));
  main.append(h("div", { class: "toolbar" }, h("h1", {}, TITLES[tab]),
    h("a", { href: `#/c/${id}`, class: "button", id: "back" }, "Back to the conversation")), tabs);
  if (tab === "changes") return livePage(main, id);
  if (tab === "terminal") {
    const pane = terminal(id);
    main.append(pane.el);
    return { ready: Promise.resolve(), dispose: pane.close };
  }
  const viewer = h("section", { class: "viewer-pane", id: "viewer" }, h("p", { class: "muted" }, "Choose a file."));
  const tree = h("section", { class: "tree-pane", id: "tree" }, directory(id, "", (path) => view(id, path, viewer)));
  main.append(h("div", { class: "workspace" }, tree, viewer));
  return { ready: Promise.resolve(), dispose() {} };
}
