// The new conversation form: a workspace (a local directory), the task, the model from
// the server's discovery (/api/models), and what the server's doctor says of it
// (/api/doctor: window, tool calling, speed, warnings), shown before anything starts.

import { h, errorBox, fill } from "./dom.js";
import { api } from "./api.js";

const LAST_WORKSPACE = "wright.workspace";

const SANDBOXES = [
  ["", "the server's default"],
  ["auto", "auto: the strongest this machine has"],
  ["namespaces", "namespaces: its own root, Landlock, seccomp"],
  ["landlock", "landlock: Landlock and seccomp, no namespaces"],
  ["docker", "docker: a Docker container"],
];

export function newPage(main) {
  const workspace = h("input", { id: "workspace", name: "workspace", required: true, placeholder: "/home/you/project", autocomplete: "off", spellcheck: "false" });
  workspace.value = localStorage.getItem(LAST_WORKSPACE) || "";
  const task = h("textarea", { id: "task", name: "task", required: true, rows: 5, placeholder: "The test test_export_csv fails since the last commit, fix it." });
  const model = h("select", { id: "model", name: "model" }, h("option", { value: "" }, "the server's default"));
  const modelNote = h("p", { class: "muted", id: "model-note" }, "Asking the model server…");
  // The sandbox the conversation's commands run in: the server's choice, or one named
  // here (never "none" from a browser: running unconfined is the user's own setting).
  const sandbox = h("select", { id: "sandbox", name: "sandbox" },
    SANDBOXES.map(([value, words]) => h("option", { value }, words)));
  // Who takes the steps: wright's own loop, or an external agent of the server's own
  // configuration file ([agents.NAME]), named, never a command.
  const agent = h("select", { id: "agent", name: "agent" }, h("option", { value: "" }, "wright's own loop"));
  const agentNote = h("p", { class: "muted", id: "agent-note" });
  const doctor = h("section", { class: "doctor", id: "doctor", "aria-live": "polite" }, h("p", { class: "muted" }, "Checking the model server…"));
  const start = h("button", { type: "submit", class: "primary", id: "start" }, "Start");
  const failure = h("div", { id: "form-error" });
  const form = h("form", { class: "new", id: "new-form" },
    h("label", { for: "workspace" }, "Workspace (a directory on the server's machine)"), workspace,
    h("label", { for: "task" }, "Task"), task,
    h("label", { for: "model" }, "Model"), model, modelNote,
    h("label", { for: "sandbox" }, "Sandbox"), sandbox,
    h("label", { for: "agent" }, "Agent"), agent, agentNote,
    doctor,
    failure,
    h("div", { class: "actions" }, start));
  main.append(h("h1", {}, "New conversation"), form);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    failure.replaceChildren();
    start.disabled = true;
    const settings = {};
    if (model.value) settings.model = model.value;
    if (sandbox.value) settings.sandbox = sandbox.value;
    if (agent.value) settings.agent = agent.value;
    try {
      const created = await api.create({ workspace: workspace.value.trim(), task: task.value, settings });
      localStorage.setItem(LAST_WORKSPACE, workspace.value.trim());
      location.hash = `#/c/${created.id}`;
    } catch (err) {
      fill(failure, errorBox(err));
      start.disabled = false;
    }
  });

  // The doctor runs once the model is known, and again when another is chosen: its
  // speed check is a real request to the model server.
  let asked = 0;
  const check = () => {
    const mine = ++asked;
    fill(doctor, h("p", { class: "muted" }, "Checking the model server…"));
    return api.doctor(model.value || undefined, sandbox.value || undefined).then(
      (report) => mine === asked && fill(doctor, ...doctorView(report)),
      (err) => mine === asked && fill(doctor, h("h2", {}, "Model server"), errorBox(err)));
  };
  model.addEventListener("change", check);
  sandbox.addEventListener("change", check);
  const models = api.models().then((found) => {
    model.append(...found.models.map((name) => h("option", { value: name }, name)));
    if (found.models.length === 1) model.value = found.models[0];
    fill(modelNote, `${found.models.length} model${found.models.length === 1 ? "" : "s"} at ${found.base_url}`);
  }, (err) => fill(modelNote, errorBox(err)));
  const checked = models.then(check);
  const agents = api.agents().then((found) => {
    agent.append(...found.agents.map((a) => h("option", { value: a.name }, `${a.name} (external, over ACP)`)));
    fill(agentNote, found.error || (found.agents.length
      ? "An external agent works in the conversation's sandbox, on its clone, reaching only the hosts of its table."
      : "No external agent: an [agents.NAME] table in the server's configuration file adds one."));
  }, (err) => fill(agentNote, errorBox(err)));

  return { ready: Promise.allSettled([models, checked, agents]), dispose() {} };
}

// The doctor's report (as `wright doctor --json` gives it): what would make a run fail
// and what it would warn about first, then what it found.
export function doctorView(report) {
  const problems = Array.isArray(report.problems) ? report.problems : [];
  const notes = Array.isArray(report.notes) ? [...report.notes] : [];
  const window_ = report.context_window;
  if (window_ && window_.warning && !notes.includes(window_.warning)) notes.push(window_.warning);
  const facts = [];
  const fact = (name, value) => {
    if (value !== undefined && value !== null && value !== "") facts.push(h("dt", {}, name), h("dd", {}, String(value)));
  };
  const server = report.server;
  if (server && typeof server === "object") fact("server", [server.kind, server.version, server.url && `at ${server.url}`].filter(Boolean).join(" "));
  fact("model", report.model);
  if (window_ && typeof window_ === "object") {
    fact("context window", typeof window_.tokens === "number" ? `${window_.tokens} tokens${window_.source ? ` (${window_.source})` : ""}` : window_.source || "unknown");
  }
  fact("tool calling", report.tool_calling);
  if (report.constraint && typeof report.constraint === "object") fact("constrained calls", [report.constraint.in_force, report.constraint.why].filter(Boolean).join(": "));
  const speed = report.speed;
  if (speed && typeof speed === "object") {
    const rate = (n) => (typeof n === "number" ? `${n.toFixed(1)} tok/s` : "?");
    fact("speed", `prompt ${rate(speed.prefill_tokens_per_s)}, generation ${rate(speed.generation_tokens_per_s)}`);
  }
  fact("processor", typeof report.processor === "string" ? report.processor : undefined);
  const box = report.sandbox;
  if (typeof box === "string") fact("sandbox", box);
  else if (box && typeof box === "object") {
    // What the sandbox enforces, part by part (the doctor's report, in its words).
    fact("sandbox", box.namespaces);
    fact("files", box.landlock);
    fact("network", box.network);
    fact("syscalls", box.seccomp);
    fact("capabilities", box.capabilities);
    fact("limits", box.limits);
    if (Array.isArray(box.writable) && box.writable.length) fact("writable", box.writable.join(", "));
  }
  return [
    h("h2", {}, report.ok === false ? "Model server: a run would fail" : "Model server: ready"),
    h("div", { id: "doctor-warnings" },
      problems.length ? h("ul", { class: "problems" }, problems.map((p) => h("li", { class: "error" }, String(p)))) : null,
      notes.length ? h("ul", { class: "warnings" }, notes.map((n) => h("li", { class: "warning" }, String(n)))) : null,
      !problems.length && !notes.length ? h("p", { class: "ok" }, "No warnings.") : null),
    h("dl", { class: "facts" }, facts),
  ];
}
