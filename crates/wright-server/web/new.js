// The new conversation form: a workspace (a local directory), the task, the model from
// the server's discovery (/api/models), and what the server's doctor says of it
// (/api/doctor: window, tool calling, speed, warnings), shown before anything starts.

import { h, errorBox, fill } from "./dom.js";
import { api } from "./api.js";

const LAST_WORKSPACE = "wright.workspace";

export function newPage(main) {
  const workspace = h("input", { id: "workspace", name: "workspace", required: true, placeholder: "/home/you/project", autocomplete: "off", spellcheck: "false" });
  workspace.value = localStorage.getItem(LAST_WORKSPACE) || "";
  const task = h("textarea", { id: "task", name: "task", required: true, rows: 5, placeholder: "The test test_export_csv fails since the last commit, fix it." });
  const model = h("select", { id: "model", name: "model" }, h("option", { value: "" }, "the server's default"));
  const modelNote = h("p", { class: "muted", id: "model-note" }, "Asking the model server…");
  const doctor = h("section", { class: "doctor", id: "doctor", "aria-live": "polite" }, h("p", { class: "muted" }, "Checking the model server…"));
  const start = h("button", { type: "submit", class: "primary", id: "start" }, "Start");
  const failure = h("div", { id: "form-error" });
  const form = h("form", { class: "new", id: "new-form" },
    h("label", { for: "workspace" }, "Workspace (a directory on the server's machine)"), workspace,
    h("label", { for: "task" }, "Task"), task,
    h("label", { for: "model" }, "Model"), model, modelNote,
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
    try {
      const created = await api.create({ workspace: workspace.value.trim(), task: task.value, settings });
      localStorage.setItem(LAST_WORKSPACE, workspace.value.trim());
      location.hash = `#/c/${created.id}`;
    } catch (err) {
      fill(failure, errorBox(err));
      start.disabled = false;
    }
  });

  const models = api.models().then((found) => {
    model.append(...found.models.map((name) => h("option", { value: name }, name)));
    if (found.models.length === 1) model.value = found.models[0];
    fill(modelNote, `${found.models.length} model${found.models.length === 1 ? "" : "s"} at ${found.base_url}`);
  }, (err) => fill(modelNote, errorBox(err)));

  const checked = api.doctor().then((report) => fill(doctor, ...doctorView(report)),
    (err) => fill(doctor, h("h2", {}, "Model server"), errorBox(err)));

  return { ready: Promise.allSettled([models, checked]), dispose() {} };
}

// The doctor's report: its warnings first, then what it measured, each field as text.
function doctorView(report) {
  const warnings = Array.isArray(report.warnings) ? report.warnings : [];
  const facts = Object.entries(report).filter(([key, value]) => key !== "warnings" && value !== null && typeof value !== "object");
  return [
    h("h2", {}, "Model server"),
    warnings.length
      ? h("ul", { class: "warnings", id: "doctor-warnings" }, warnings.map((w) => h("li", { class: "warning" }, typeof w === "string" ? w : w.message || w.text || JSON.stringify(w))))
      : h("p", { class: "ok", id: "doctor-warnings" }, "No warnings."),
    h("dl", { class: "facts" }, facts.map(([key, value]) => [h("dt", {}, key.replaceAll("_", " ")), h("dd", {}, String(value))])),
  ];
}
