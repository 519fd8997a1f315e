// One row per event of the log, by kind: messages (the task, the agent's words, wright's
// nudges), each action with its observation (collapsible, filled when first opened),
// condensations, reviews, retries, plans, states, errors, the changes, and what wright
// did around them (kinds.js). `usage` feeds the numbers instead of a row; a kind this
// page does not know is said to be unknown, its fields as text: no event is ever shown
// as JSON. Every row can be forked from (its `data-at`: for an action,
// its observation once it came). Everything the agent wrote goes in as text.

import { h } from "./dom.js";
import { summary, argumentsView, outputView, untrusted } from "./tools.js";
import { row, lazy } from "./rows.js";
import { fieldsView } from "./fields.js";
import { screenshotView } from "./screenshot.js";
import * as kinds from "./kinds.js";

export function createRenderer(ctx) {
  const actions = new Map();
  let sawTask = false;
  ctx.call = (callId) => {
    const entry = actions.get(callId);
    return entry ? entry.ev : null;
  };

  function action(ev) {
    const status = h("span", { class: "badge pending status" }, "running");
    // wright's rating of the call, when it is worth a look (medium and up).
    const risky = ev.risk && ev.risk !== "low"
      ? h("span", { class: `badge risk risk-${ev.risk}`, title: ev.risk_reason || "" }, `risk ${ev.risk}`)
      : null;
    const entry = { ev, observation: null, status, li: null };
    const parts = lazy(
      [h("span", { class: "tool" }, ev.tool), h("span", { class: "call" }, summary(ev.tool, ev.arguments)), risky, status],
      () => {
        const nodes = [argumentsView(ev.tool, ev.arguments)];
        if (ev.risk_reason) nodes.push(h("p", { class: "muted risk-reason" }, `risk ${ev.risk}: ${ev.risk_reason}`));
        if (entry.observation) nodes.push(outputView(entry.observation));
        return nodes;
      },
      "call");
    entry.parts = parts;
    entry.li = row(ev, `action tool-${ev.tool.replace(/[^a-z_]/gi, "")}`, `step ${ev.step}`, parts.details);
    entry.li.dataset.call = ev.call_id;
    actions.set(ev.call_id, entry);
    ctx.lastAction = entry;
    return entry.li;
  }

  function observation(ev) {
    const entry = actions.get(ev.call_id);
    if (!entry || entry.observation) {
      return row(ev, "observation", `output of ${ev.tool}`, outputView(ev));
    }
    entry.observation = ev;
    entry.li.dataset.at = String(ev.id);
    entry.li.dataset.done = "1";
    const exit = ev.exit_code;
    entry.status.className = `badge status ${ev.is_error || (exit !== undefined && exit !== null && exit !== 0) ? "bad" : "good"}`;
    entry.status.textContent = ev.is_error ? "error" : exit !== undefined && exit !== null ? `exit ${exit}` : "done";
    if (untrusted(ev.output)) entry.status.after(h("span", { class: "badge outside", title: "what it printed came from outside: data, never instructions" }, "outside data"));
    if (entry.parts.made()) entry.parts.body.append(outputView(ev));
    // A screenshot is shown beside its step, without opening it.
    const shot = screenshotView(ctx.id, ev);
    if (shot) entry.li.append(shot);
    if (ctx.lastAction === entry) ctx.lastAction = null;
    return null;
  }

  function message(ev) {
    if (ev.source === "environment") {
      return row(ev, "nudge", "wright nudged the model", h("div", { class: "text" }, ev.text));
    }
    if (ev.source === "user") {
      const label = sawTask ? "you" : "task";
      sawTask = true;
      return row(ev, "message user", label, h("div", { class: "text" }, ev.text));
    }
    const reasoning = ev.reasoning
      ? lazy(["reasoning"], () => h("div", { class: "text reasoning" }, ev.reasoning), "reasoning").details
      : null;
    return row(ev, "message agent", `agent · step ${ev.step ?? "?"}`, reasoning, ev.text ? h("div", { class: "text" }, ev.text) : null);
  }

  // The conversation goes on with another model from this step on: a fallback, or one
  // named when it went on. Every word is the log's: shown as text.
  function modelSwitch(ev) {
    const at = (m) => (m ? `${m.model || "?"}${m.profile ? ` (${m.profile})` : ""}` : "?");
    const why = {
      unreachable: "its server could not be reached",
      overloaded: "its server stayed overloaded",
      too_large: "its server refused the request's size",
      stuck: "it was stuck",
      chosen: "another was named when the conversation went on",
    }[ev.reason] || String(ev.reason);
    const to = ev.to || {};
    return row(ev, "model-switch", `model switch · step ${ev.step ?? "?"}`,
      h("div", { class: "text" }, `${at(ev.from)} → ${at(to)} on ${to.base_url || "?"}: ${why}`),
      ev.detail ? h("div", { class: "muted" }, ev.detail) : null);
  }

  function start(ev) {
    const facts = [`model ${ev.model}`, `tool calling ${ev.tool_calling || "native"}`];
    if (ev.destination) facts.push(`requests go to ${ev.destination.replace("_", " ")}`);
    if (Array.isArray(ev.secrets) && ev.secrets.length) facts.push(`secrets ${ev.secrets.join(", ")}`);
    let fork = null;
    if (typeof ev.forked_from === "string") {
      const [from, at] = ev.forked_from.split("@");
      fork = h("div", { class: "forked" }, "forked from ",
        /^[A-Za-z0-9-]+$/.test(from) ? h("a", { href: `#/c/${from}` }, from) : from, at ? ` at event #${at}` : "");
    }
    return row(ev, "start", "started", h("div", { class: "meta" }, facts.join(" · ")), h("div", { class: "meta", title: ev.workspace }, ev.workspace), fork);
  }

  function condensation(ev) {
    const masked = Array.isArray(ev.masked) && ev.masked.length ? `; ${ev.masked.length} outputs cut to their first and last lines` : "";
    const text = `History condensed: about ${ev.tokens_before} → ${ev.tokens_after} tokens; the model sees events from #${ev.keep_from} on${masked}.`;
    const summaryText = ev.summary ? lazy(["summary the model wrote"], () => h("div", { class: "text" }, ev.summary), "summary").details : null;
    return row(ev, "condensation", "condensed", h("div", { class: "text" }, text), summaryText);
  }

  function review(ev) {
    const lines = [];
    if (ev.test_files_changed?.length) lines.push(`test files changed: ${ev.test_files_changed.join(", ")}`);
    for (const r of ev.tests_removed || []) lines.push(`test or assertion removed: ${r}`);
    for (const s of ev.tests_skipped || []) lines.push(`test skipped: ${s}`);
    if (ev.unmentioned_files?.length) lines.push(`files the task does not mention: ${ev.unmentioned_files.join(", ")}`);
    return row(ev, "review", "review", h("ul", {}, lines.map((l) => h("li", {}, l))));
  }

  function changes(ev) {
    const says = {
      branch: `Changes on branch ${ev.branch || "?"}.`,
      committed: `Committed in place${ev.commit ? ` (${String(ev.commit).slice(0, 12)})` : ""}.`,
      uncommitted: "Left uncommitted in place, beside your own changes.",
      none: "No changes.",
      not_git: "Not a git repository: no diff to show.",
      failed: `The hand-over failed: ${ev.reason || ""}${ev.kept ? ` (kept in ${ev.kept})` : ""}`,
    }[ev.outcome] || `Changes: ${ev.outcome}`;
    const link = ["branch", "committed", "uncommitted"].includes(ev.outcome) ? h("a", { href: `#/c/${ctx.id}/diff`, class: "open-diff" }, "Open the diff") : null;
    const configuring = ev.configuring?.length ? h("div", { class: "warning" }, `changes files that configure git or wright: ${ev.configuring.join(", ")}`) : null;
    return row(ev, "changes", "changes", h("div", { class: "text" }, says, " ", link), configuring);
  }

  // wright's own run of the first look's failing command, after an edit or before a
  // finish: the verdict in a line, what it printed folded.
  function check(ev) {
    const when = ev.moment === "before_finish" ? "before taking a finish" : "after the edit";
    const exit = ev.exit_code;
    const verdict = exit === 0 ? "passes" : typeof exit === "number" ? `still fails (exit ${exit})` : "did not finish";
    const output = lazy(["what it printed"], () => outputView(ev), "output").details;
    return row(ev, `check ${exit === 0 ? "check-passed" : "check-failed"}`, "check",
      h("div", { class: "text" }, `wright ran `, h("code", {}, ev.command), ` ${when}: ${verdict}`,
        ev.undone ? " (it passed before this edit: wright undid the edit)" : ""), output);
  }

  // A version of the failing function the model wrote, asked apart, tried by wright
  // before the first step: what came of it in a line, the answer folded.
  function candidate(ev) {
    const o = ev.outcome || {};
    const verdict = {
      passed: "passes with it",
      // With wright's check of the task, the tests or the check may have failed: the log
      // does not say which, so neither is blamed alone.
      failed: typeof o.exit_code !== "number" ? "did not finish with it"
        : ev.check ? `and wright's check of the task do not both pass with it (exit ${o.exit_code})`
        : `still fails with it (exit ${o.exit_code})`,
      fails_further: `fails further on with it, in ${o.next}: kept while that one is tried`,
      no_code: "not run: the answer wrote no such function",
      unchanged: "not run: the answer left it as it is",
      repeated: "not run: the same as an earlier one",
      not_tried: `not tried: ${o.why || ""}`,
    }[o.kind] || String(o.kind);
    const answer = h("details", {}, h("summary", {}, "the answer"), h("pre", { class: "output" }, ev.answer || ""));
    return row(ev, `check ${o.kind === "passed" ? "check-passed" : "check-failed"}`, "candidate",
      h("div", { class: "text" }, ev.name ? `a version of ${ev.name} in ${ev.path}, asked apart: ` : `a version of ${ev.path} asked apart: `, h("code", {}, ev.command), ` ${verdict}`), answer);
  }

  // The badge of an action that has no output yet, from what the log says of it: waiting
  // for the user's answer, answered, or never run (its run ended first).
  function mark(entry, text, className) {
    if (!entry || entry.observation) return;
    entry.status.className = `badge status ${className}`;
    entry.status.textContent = text;
  }

  // A state change; waiting for an answer names the call it waits on.
  function state(ev) {
    if (ev.state === "awaiting_confirmation" && ev.call_id) mark(actions.get(ev.call_id), "waiting for your answer", "waiting");
    if (!["running", "awaiting_confirmation"].includes(ev.state)) {
      for (const entry of actions.values()) {
        if (!entry.observation && !entry.status.classList.contains("waiting") && !entry.answered) mark(entry, "not run", "muted");
      }
    }
    const waiting = ev.state === "awaiting_confirmation" && ev.call_id ? ctx.call(ev.call_id) : null;
    const waits = waiting ? `waiting for your answer about step ${waiting.step} · ${summary(waiting.tool, waiting.arguments)}`
      : ev.state === "awaiting_confirmation" ? "waiting for your answer" : null;
    const mode = ev.confirm ? `asks before ${{ risky: "risky actions", always: "every action", never: "no action" }[ev.confirm] || ev.confirm}` : null;
    const text = [ev.reason, waits, mode].filter(Boolean).join(" · ");
    return row(ev, `state state-${ev.state}`, ev.state.replace("_", " "), text ? h("div", { class: "text" }, text) : null);
  }

  return function render(ev) {
    switch (ev.kind) {
      case "start":
        return start(ev);
      case "message":
        if (typeof ev.step === "number") ctx.stats.step(ev.step);
        return message(ev);
      case "action":
        ctx.stats.step(ev.step);
        return action(ev);
      case "observation":
        return observation(ev);
      case "usage":
        ctx.stats.usage(ev);
        return null;
      case "condensation":
        ctx.stats.condensed();
        return condensation(ev);
      case "state":
        return state(ev);
      case "error":
        return row(ev, "error-ev", "error", h("div", { class: "text" }, ev.message));
      case "retry":
        return row(ev, "retry", "retry", h("div", { class: "text" }, `Model request sent again (attempt ${ev.attempt}): ${ev.reason}`));
      case "review":
        return review(ev);
      case "plan":
        return row(ev, "plan", "plan", h("ul", { class: "plan-list" }, (ev.tasks || []).map((t) =>
          h("li", { class: `task-${t.status}` }, `${{ done: "☑", doing: "◐", todo: "☐" }[t.status] || "·"} ${t.title}`, t.notes ? h("span", { class: "muted" }, ` — ${t.notes}`) : null))));
      case "together":
        return row(ev, "together", "together", h("div", { class: "muted" }, `${(ev.call_ids || []).length} read-only calls ran at the same time`));
      case "changes":
        return changes(ev);
      case "model_switch":
        return modelSwitch(ev);
      case "check":
        return check(ev);
      case "candidate":
        return candidate(ev);
      case "confirmation": {
        const entry = actions.get(ev.call_id);
        if (entry) entry.answered = true;
        mark(entry, ev.decision === "rejected" ? "rejected" : "approved", ev.decision === "rejected" ? "bad" : "good");
        return kinds.confirmation(ev, ctx);
      }
      case "flagged":
        return kinds.flagged(ev, ctx);
      case "skill":
        return kinds.skill(ev);
      case "hook":
        return kinds.hook(ev, ctx);
      case "second_look":
        return kinds.secondLook(ev);
      case "route":
        return kinds.route(ev);
      case "side_question":
        return kinds.sideQuestion(ev);
      case "reading":
        return kinds.reading(ev, ctx);
      case "assist":
        return kinds.assist(ev);
      case "network":
        return kinds.network(ev);
      case "account":
        return kinds.account(ev);
      case "handed_back":
        return kinds.handedBack(ev);
      default: {
        // A kind this page does not know (a newer wright's log): said so, its fields as
        // text, folded.
        const { id, ts, source, kind, ...rest } = ev;
        return row(ev, "unknown", String(kind),
          h("div", { class: "muted" }, `an event this page does not know how to show (from ${source})`),
          lazy(["its fields"], () => fieldsView(rest), "fields").details);
      }
    }
  };
}
