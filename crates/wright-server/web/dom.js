// The one way the UI makes elements. Text (everything the agent wrote among it) goes in
// as text nodes or attribute values, never parsed as HTML; handlers are functions, never
// strings; links go only to the UI's own pages and the server's own routes.

export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "on") for (const [name, fn] of Object.entries(value)) el.addEventListener(name, fn);
    else if (key === "data") for (const [name, v] of Object.entries(value)) el.dataset[name] = String(v);
    else if (key === "href") el.setAttribute("href", ownLink(value));
    else if (/^on/i.test(key) || key === "style" || key === "src") throw new Error(`refused attribute ${key}`);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  return append(el, children);
}

// Appends children: nodes as they are, anything else as text.
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

// Replaces an element's children, with `append`'s rules (DOM's own replaceChildren
// would write a null as the text "null").
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// A link to one of the UI's pages (#/...) or the server's API (/api/...), else refused.
function ownLink(value) {
  const text = String(value);
  if (text.startsWith("#/") || text.startsWith("/api/")) return text;
  throw new Error(`refused link ${text}`);
}

// How long ago, in words: "12 s", "3 min", "5 h", "2 d".
export function ago(seconds) {
  if (seconds === null || seconds === undefined) return "";
  const s = Math.max(0, Math.round(Date.now() / 1000 - seconds));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

// The last part of a path.
export function baseName(path) {
  if (!path) return "";
  const parts = String(path).split("/").filter(Boolean);
  return parts.length ? parts[parts.length - 1] : String(path);
}

// 12345 -> "12.3k".
export function count(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return "–";
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

// An error as a box of text (its code and what the server said).
export function errorBox(err, id) {
  const code = err && err.code ? `${err.code}: ` : "";
  return h("p", { class: "error", role: "alert", id }, `${code}${err && err.message ? err.message : String(err)}`);
}

// The states a conversation is still moving in.
export const ACTIVE = new Set(["queued", "starting", "running", "awaiting_confirmation"]);
