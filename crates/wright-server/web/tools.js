// How each tool call reads: a one-line summary (the command, the file), its arguments
// (a terminal command as typed, an edit as a diff) and its output in a monospace pane.
// All of it is the agent's text, put in as text.

import { h } from "./dom.js";

// Terminal colour and cursor codes: shown as the text they wrap.
const ESCAPES = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(\u0007|\u001b\\)/g;
export const plain = (text) => String(text ?? "").replace(ESCAPES, "");

const firstLine = (text, max = 120) => {
  const line = String(text ?? "").split("\n", 1)[0];
  return line.length > max ? `${line.slice(0, max)}…` : line;
};

const args = (a) => (a && typeof a === "object" && !Array.isArray(a) ? a : {});

// The summary line of a call.
export function summary(tool, a) {
  const x = args(a);
  switch (tool) {
    case "terminal":
      return `$ ${firstLine(x.command)}`;
    case "file_editor":
      return `${x.command || "edit"} ${x.path || ""}`;
    case "grep":
      return `grep ${firstLine(x.pattern)}${x.path ? ` in ${x.path}` : ""}`;
    case "glob":
      return `glob ${firstLine(x.pattern)}`;
    case "finish":
      return `finish: ${firstLine(x.message)}`;
    case "think":
      return `think: ${firstLine(x.thought)}`;
    case "task_tracker":
      return "plan";
    default:
      return `${tool} ${firstLine(typeof a === "string" ? a : JSON.stringify(a), 80)}`;
  }
}

// Lines of a diff as spans: added, removed, hunk headers, file headers.
export function diffText(text, className = "diff") {
  const pre = h("pre", { class: className });
  const lines = String(text).split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) {
    let kind = "ctx";
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("index ")) kind = "meta";
    else if (line.startsWith("+")) kind = "add";
    else if (line.startsWith("-")) kind = "del";
    else if (line.startsWith("@@")) kind = "hunk";
    pre.append(h("span", { class: kind }, `${line}\n`));
  }
  return pre;
}

// Each line of `text` marked (a last newline ends the last line, it adds none).
const prefixed = (text, mark) =>
  String(text ?? "").replace(/\n$/, "").split("\n").map((l) => `${mark}${l}`).join("\n");

// The call's arguments, readably.
export function argumentsView(tool, a) {
  const x = args(a);
  if (tool === "terminal" && typeof x.command === "string") {
    return h("pre", { class: "cmd" }, `$ ${x.command}`);
  }
  if (tool === "file_editor") {
    const head = h("div", { class: "edit-head" }, `${x.command || "edit"} ${x.path || ""}`);
    if (x.command === "str_replace") {
      return h("div", {}, head, diffText(`${prefixed(x.old_str, "-")}\n${prefixed(x.new_str, "+")}`));
    }
    if (x.command === "create") return h("div", {}, head, diffText(prefixed(x.file_text, "+")));
    if (x.command === "insert") {
      return h("div", {}, h("div", { class: "edit-head" }, `insert into ${x.path || ""} after line ${x.insert_line ?? "?"}`), diffText(prefixed(x.new_str, "+")));
    }
    if (x.command === "view") {
      return h("div", { class: "edit-head" }, `view ${x.path || ""}${Array.isArray(x.view_range) ? ` lines ${x.view_range.join("–")}` : ""}`);
    }
  }
  if (tool === "finish" && typeof x.message === "string") return h("div", { class: "text" }, x.message);
  if (tool === "think" && typeof x.thought === "string") return h("div", { class: "text" }, x.thought);
  return h("pre", { class: "json" }, typeof a === "string" ? a : JSON.stringify(a, null, 2));
}

// What the call printed, in a monospace pane, with its exit code.
export function outputView(observation) {
  const exit = observation.exit_code;
  return h("div", { class: "observation" },
    h("div", { class: "obs-head" },
      observation.is_error ? h("span", { class: "badge bad" }, "error") : null,
      exit !== undefined && exit !== null ? h("span", { class: `badge ${exit === 0 ? "good" : "bad"}` }, `exit ${exit}`) : null),
    h("pre", { class: `out${observation.is_error ? " failed" : ""}` }, plain(observation.output)));
}
