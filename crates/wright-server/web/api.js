// The server's REST routes, as the UI calls them (same origin: the browser's cookie is
// the key). Every failure is an ApiError with the server's code and sentence.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const isId = (id) => typeof id === "string" && /^[A-Za-z0-9-]+$/.test(id);

const one = (id) => {
  if (!isId(id)) throw new ApiError(400, "bad_id", "a conversation's id is letters, digits and dashes");
  return `/api/conversations/${id}`;
};

async function call(method, path, body) {
  const init = { method, credentials: "same-origin", cache: "no-store", headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, "unreachable", `the server did not answer (${err.message})`);
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const code = data && typeof data.error === "string" ? data.error : `http_${response.status}`;
    const message = data && typeof data.message === "string" ? data.message : `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, code, message);
  }
  return data;
}

// A download's bytes (the file route answers bytes; its errors are JSON).
async function bytes(path) {
  let response;
  try {
    response = await fetch(path, { credentials: "same-origin", cache: "no-store" });
  } catch (err) {
    throw new ApiError(0, "unreachable", `the server did not answer (${err.message})`);
  }
  if (!response.ok) {
    let data = null;
    try {
      data = await response.json();
    } catch {
      data = null;
    }
    throw new ApiError(response.status, data && typeof data.error === "string" ? data.error : `http_${response.status}`,
      data && typeof data.message === "string" ? data.message : `${response.status} ${response.statusText}`);
  }
  return new Uint8Array(await response.arrayBuffer());
}

const query = (params) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
};

export const api = {
  list: (q, state) => call("GET", `/api/conversations${query({ q, state })}`),
  get: (id) => call("GET", one(id)),
  create: (body) => call("POST", "/api/conversations", body),
  events: (id, after, limit) => call("GET", `${one(id)}/events${query({ after, limit })}`),
  interrupt: (id) => call("POST", `${one(id)}/interrupt`),
  message: (id, text) => call("POST", `${one(id)}/messages`, { text }),
  fork: (id, at, message) => call("POST", `${one(id)}/fork`, message ? { at, message } : { at }),
  diff: (id) => call("GET", `${one(id)}/diff`),
  liveDiff: (id) => call("GET", `${one(id)}/live-diff`),
  apply: (id) => call("POST", `${one(id)}/apply`, {}),
  discard: (id) => call("POST", `${one(id)}/discard`),
  confirm: (id, body) => call("POST", `${one(id)}/confirm`, body),
  models: () => call("GET", "/api/models"),
  automations: () => call("GET", "/api/automations"),
  ask: (id, question) => call("POST", `${one(id)}/ask`, { question }),
  doctor: (model, sandbox, profile) => call("GET", `/api/doctor${query({ model, sandbox, profile })}`),
  settings: () => call("GET", "/api/settings"),
  agents: () => call("GET", "/api/agents"),
  changeSetting: (key, value) => call("PUT", "/api/settings", { key, value }),
  fileUrl: (id, path) => `${one(id)}/file${query({ path })}`,
  files: (id, path) => call("GET", `${one(id)}/files${query({ path })}`),
  fileBytes: (id, path) => bytes(`${one(id)}/file${query({ path })}`),
};

// Every event of a conversation, page by page.
export async function allEvents(id) {
  const events = [];
  let after;
  for (;;) {
    const page = await api.events(id, after, 1000);
    events.push(...page.events);
    if (page.next_after === null || page.next_after === undefined) return events;
    after = page.next_after;
  }
}

// The conversation's event socket (the cookie goes with it), from after `after`.
export function socketUrl(id, after) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const tail = after === null || after === undefined ? "" : `?after=${after}`;
  return `${scheme}//${location.host}/sockets/events/${one(id).split("/").pop()}${tail}`;
}
