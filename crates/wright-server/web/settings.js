// The settings page: the model server and its models with the doctor's findings, each
// profile with its own on a click, the configuration's values with where each came from
// and whether a repository's file may set it, and the consent record's decisions. A few
// values (the server's list: the model server, the default profile, the run's limits)
// can be changed here — written into the user's own file by the server, its comments
// kept, refused when the loader would refuse them; everything else stays in that file and
// `wright allow`/`wright deny`.

import { h, errorBox, fill } from "./dom.js";
import { api } from "./api.js";
import { doctorView } from "./new.js";

const MAY = {
  allowed: "a repository may set it",
  lower: "a repository may lower it",
  needs_approval: "only with its content approved",
  user_only: "your file only",
};

function table(id, head, rows) {
  return h("table", { class: "settings-table", id },
    h("thead", {}, h("tr", {}, head.map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((c) => h("td", {}, c))))));
}

// The profiles named in the configuration (`profiles.NAME.KEY`), with their values.
function profilesOf(values) {
  const profiles = new Map();
  for (const v of values) {
    const m = /^profiles\.([^.]+)\.(.+)$/.exec(v.key);
    if (!m) continue;
    if (!profiles.has(m[1])) profiles.set(m[1], []);
    profiles.get(m[1]).push([m[2], v.value, v.origin]);
  }
  return profiles;
}

function profileView(name, values) {
  const found = h("div", { class: "doctor", data: { profile: name } });
  const check = h("button", { type: "button", class: "check-profile", data: { profile: name } }, "Check with the doctor");
  check.addEventListener("click", async () => {
    check.disabled = true;
    fill(found, h("p", { class: "muted" }, "Checking…"));
    try {
      fill(found, ...doctorView(await api.doctor(undefined, undefined, name)));
    } catch (err) {
      fill(found, errorBox(err));
    } finally {
      check.disabled = false;
    }
  });
  return h("section", { class: "profile", data: { profile: name } },
    h("h3", {}, name), table(null, ["key", "value", "from"], values), check, found);
}

// The form that changes one value of the user's file (`PUT /api/settings`): a key of the
// server's list, its value typed or chosen; `done` gets the configuration as it is now.
function changeForm(s, done) {
  const key = h("select", { id: "change-key", name: "key" },
    s.changeable.map((c) => h("option", { value: c.key }, c.key)));
  const slot = h("div", { id: "change-slot", class: "slot" });
  const doc = h("p", { class: "muted", id: "change-doc" });
  const save = h("button", { type: "submit", class: "primary", id: "change-save" }, "Save to my file");
  const remove = h("button", { type: "button", id: "change-remove" }, "Remove from my file");
  const outcome = h("div", { id: "change-outcome", "aria-live": "polite" });
  let value = null;
  const pick = () => {
    const offered = s.changeable.find((c) => c.key === key.value);
    if (!offered) return;
    const now = s.values.find((v) => v.key === offered.key);
    const current = now ? now.value.replace(/^"(.*)"$/, "$1") : "";
    value = offered.choices.length
      ? h("select", { id: "change-value", name: "value" }, offered.choices.map((c) => h("option", { value: c }, c)))
      : h("input", { id: "change-value", name: "value", autocomplete: "off", spellcheck: "false" });
    value.value = current;
    fill(slot, h("label", { for: "change-value" }, "Value"), value);
    fill(doc, `${offered.doc} (${offered.expected})`);
  };
  key.addEventListener("change", pick);
  pick();
  const send = async (text) => {
    save.disabled = remove.disabled = true;
    outcome.replaceChildren();
    try {
      done(await api.changeSetting(key.value, text), key.value);
    } catch (err) {
      fill(outcome, errorBox(err, "change-error"));
      save.disabled = remove.disabled = false;
    }
  };
  const form = h("form", { class: "change", id: "change-form" },
    h("label", { for: "change-key" }, "Change a value in your file"), key, slot, doc, outcome,
    h("div", { class: "actions" }, save, remove));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send(value ? value.value : "");
  });
  remove.addEventListener("click", () => send(null));
  return form;
}

export function settingsPage(main) {
  const models = h("section", { id: "settings-models" }, h("p", { class: "muted" }, "Asking the model server…"));
  const doctor = h("section", { class: "doctor", id: "doctor" });
  const profiles = h("section", { id: "settings-profiles" });
  const values = h("section", { id: "settings-values" }, h("p", { class: "muted" }, "Reading the configuration…"));
  const consent = h("section", { id: "settings-consent" });
  main.append(h("div", { class: "toolbar" }, h("h1", {}, "Settings")),
    h("p", { class: "muted" }, "A few values can be changed below (the server writes them into your own file, its comments kept); the rest in that file (wright config path) and with wright allow / wright deny."),
    h("h2", {}, "Model server"), models, doctor,
    h("h2", {}, "Profiles"), profiles,
    h("h2", {}, "Configuration"), values,
    h("h2", {}, "Consent decisions"), consent);

  const found = api.models().then((m) => {
    fill(models, h("p", {}, `${m.models.length} model${m.models.length === 1 ? "" : "s"} at ${m.base_url}`),
      h("ul", { id: "model-names" }, m.models.map((name) => h("li", {}, name))));
  }, (err) => fill(models, errorBox(err)));
  const checked = api.doctor().then((report) => fill(doctor, ...doctorView(report)), (err) => fill(doctor, errorBox(err)));
  const show = (s, saved) => {
    const rows = s.values.map((v) => [v.key, v.value, v.origin, MAY[v.repository] || v.repository]);
    fill(values,
      s.error ? h("p", { class: "error", id: "settings-error" }, s.error) : null,
      s.files.length ? h("p", { class: "muted" }, `Read from: ${s.files.join(", ")}`) : h("p", { class: "muted" }, "No configuration file: the defaults, the environment and the server's flags."),
      saved ? h("p", { class: "notice", id: "change-done" }, `Saved in ${s.user_file || "your file"}: ${saved}`) : null,
      s.changeable.length ? changeForm(s, show) : null,
      table("config-values", ["key", "value", "from", "repository"], rows));
    const named = profilesOf(s.values);
    fill(profiles, named.size
      ? [...named].map(([name, vals]) => profileView(name, vals))
      : h("p", { class: "muted", id: "no-profiles" }, "No profile: [profiles.NAME] in your configuration file names one."));
    fill(consent,
      s.consent_error ? h("p", { class: "error" }, s.consent_error) : null,
      s.consent.length
        ? table("consent-decisions", ["allowed", "repository", "what"], s.consent.map((d) => [d.kind, d.repository, d.subject]))
        : h("p", { class: "muted", id: "no-consent" }, "Nothing allowed yet."));
    values.dataset.loaded = String(Number(values.dataset.loaded || 0) + 1);
  };
  const read = api.settings().then((s) => show(s, null), (err) => fill(values, errorBox(err, "settings-error")));
  return { ready: Promise.allSettled([found, checked, read]), dispose() {} };
}
