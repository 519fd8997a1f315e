// The rows of the events that are not the conversation itself but what wright did around
// it: the user's answers to confirmations, flags, skills, hooks, a second agent's
// review, how the profile was chosen, questions asked aside, readings of a failure, help
// turned on, network connections, and what was handed back for an automation. Each is a sentence for people (the folded
// details, when there are any, are text fields); `ctx.call(id)` is the action a call id
// names, when the page has it.

import { h } from "./dom.js";
import { row, lazy } from "./rows.js";
import { summary } from "./tools.js";

const who = (origin) => (origin === "repository" ? "the repository's" : "yours");

// "step 3 · $ make test", the call a row is about, or its id when the page has not seen it.
function callNamed(ctx, callId) {
  const action = ctx.call(callId);
  if (!action) return `call ${callId || "?"}`;
  return `step ${action.step ?? "?"} · ${summary(action.tool, action.arguments)}`;
}

// Text fields folded under a line: a <dl> of what is there.
function facts(pairs) {
  const shown = pairs.filter(([, v]) => v !== undefined && v !== null && v !== "");
  if (!shown.length) return null;
  return h("dl", { class: "fields" }, shown.map(([name, v]) => [h("dt", {}, name), h("dd", {}, h("span", { class: "value" }, String(v)))]));
}

export function confirmation(ev, ctx) {
  const action = ctx.call(ev.call_id);
  const said = {
    approved: "You approved",
    always: `You approved, and always for ${ev.tool} in this conversation,`,
    rejected: "You rejected",
  }[ev.decision] || `You answered ${ev.decision} to`;
  const risk = action && action.risk ? ` (risk ${action.risk}${action.risk_reason ? `: ${action.risk_reason}` : ""})` : "";
  return row(ev, `confirmation decision-${ev.decision}`, "confirmation",
    h("div", { class: "text" }, `${said} ${callNamed(ctx, ev.call_id)}${risk}`),
    ev.reason ? h("div", { class: "text reason" }, `Reason: ${ev.reason}`) : null);
}

export function flagged(ev, ctx) {
  const flag = ev.flag || {};
  const text = flag.kind === "prompt_injection"
    ? `Possible prompt injection: ${callNamed(ctx, ev.call_id)} is risky and follows text the agent read (event #${flag.source}) that looks like instructions to it: “${flag.excerpt ?? ""}”`
    : `wright flagged ${callNamed(ctx, ev.call_id)} (${flag.kind || "?"})`;
  return row(ev, "flagged", "flagged", h("div", { class: "text warning" }, text));
}

export function skill(ev) {
  const cause = ev.cause || {};
  const why = cause.kind === "keyword" ? `the message says “${cause.word}”` : cause.kind === "path" ? `the agent touched ${cause.path}` : "";
  const text = lazy(["what it adds"], () => h("div", { class: "text" }, ev.text || ""), "skill-text").details;
  return row(ev, "skill compact", "skill", h("div", { class: "line" }, `skill ${ev.name} added (${ev.path})${why ? `: ${why}` : ""}`), text);
}

// A hook on one line with its decision; what it said folded. A hook on every step stays
// one thin line per step.
export function hook(ev, ctx) {
  const what = ev.event === "Setup" ? `setup script ${ev.command}` : `hook ${ev.event} (${who(ev.origin)})`;
  const decision = { allowed: "allowed", blocked: "blocked", failed: "failed", timed_out: "timed out" }[ev.outcome] || String(ev.outcome);
  const about = ev.call_id ? ` · ${callNamed(ctx, ev.call_id)}` : "";
  const line = [h("span", { class: `badge decision ${ev.outcome === "allowed" ? "good" : "bad"}` }, decision), h("span", { class: "line-text" }, `${what}${about}`)];
  const folded = lazy(line, () => facts([
    ["command", ev.command],
    ["exit code", ev.exit_code],
    [ev.outcome === "blocked" ? "why it blocked" : "what went wrong", ev.reason],
    ["added for the model", ev.context],
  ]) || h("p", { class: "muted" }, "It said nothing more."), "hook-line");
  return row(ev, `hook compact outcome-${ev.outcome}`, "hook", folded.details);
}

export function secondLook(ev) {
  const verdict = ev.verdict === "approve" ? "approved" : ev.verdict === "request_changes" ? "changes requested" : `no verdict${ev.error ? ` (${ev.error})` : ""}`;
  const then = ev.sent_back ? "The findings went back to the agent." : "Its finish was taken.";
  return row(ev, `second-look verdict-${ev.verdict || "none"}`, `second look · round ${ev.round}`,
    h("div", { class: "text" }, `Reviewer ${ev.model}: ${verdict}. ${then}`),
    ev.findings && ev.findings.length ? h("ul", { class: "findings" }, ev.findings.map((f) => h("li", {}, f))) : null,
    ev.reviewer ? h("div", { class: "meta" }, `its own conversation: ${ev.reviewer}`) : null);
}

export function route(ev) {
  return row(ev, "route compact", "profile", h("div", { class: "line" }, `profile ${ev.profile}: ${ev.why}`));
}

export function sideQuestion(ev) {
  return row(ev, "side-question", "asked aside",
    h("div", { class: "text question" }, h("strong", {}, "Q: "), ev.question),
    h("div", { class: "text answer" }, h("strong", {}, "A: "), ev.answer),
    h("div", { class: "meta" }, `${ev.prompt_tokens} tokens in, ${ev.completion_tokens} out; not part of the task's history`));
}

export function reading(ev, ctx) {
  const text = ev.failed
    ? `wright asked the model apart which line of ${ev.path} causes the failure of ${callNamed(ctx, ev.call_id)}: no answer (${ev.failed})`
    : `wright asked the model apart which line of ${ev.path} causes the failure of ${callNamed(ctx, ev.call_id)}:`;
  return row(ev, "reading", "reading",
    h("div", { class: "text" }, text),
    ev.failed ? null : h("div", { class: "text answer" }, ev.answer),
    lazy(["the question"], () => h("div", { class: "text" }, ev.question), "question").details);
}

export function assist(ev) {
  const need = {
    name_says_small: "its name says 8B or less",
    no_native_calls: "the probe found no native tool calls",
    unreadable_calls: `${ev.count} of its calls could not be read`,
    loop: `it went in circles${ev.pattern ? ` (${ev.pattern})` : ""}`,
  }[ev.need] || String(ev.need);
  const pieces = (ev.pieces || []).map((p) => String(p).replace(/_/g, " ")).join(", ");
  return row(ev, "assist", `help · after step ${ev.step}`, h("div", { class: "text" }, `The model needs help (${need}): wright turns on ${pieces}.`));
}

export function account(ev) {
  const said = [...(ev.kept || [])];
  const changed = ev.changed || [];
  said.push(changed.length ? `the change touches ${changed.join(", ")}` : "no change was made: the diff is empty");
  if ((ev.named_unchanged || []).length) {
    said.push(`the model's message names ${ev.named_unchanged.join(", ")}, which the change does not touch`);
  }
  const contradicts = (ev.claims_change && !changed.length) || (ev.named_unchanged || []).length > 0;
  const verdict = ev.sent_back
    ? "finish sent back: a change claimed, none made"
    : contradicts ? "the model's message disagrees with the change" : "the change as the model said";
  return row(ev, contradicts ? "account warn" : "account", "wright's account",
    h("div", { class: "text" }, `${said.join("; ")} (${verdict}).`));
}

const REFUSALS = {
  not_allowed: "not an allowed host and port",
  private_address: "a loopback, link-local or private address",
  unresolved: "the name does not resolve",
  unreachable: "the server did not answer",
  bad_request: "not a request the proxy understands",
  no_network: "the network is off for this run",
  other_name: "its TLS names another host than the one it was opened to",
};

export function network(ev) {
  const via = ev.via === "fetch" ? "fetch" : "a command";
  const allowed = ev.verdict === "allowed";
  const text = allowed
    ? `${via} reached ${ev.host}:${ev.port}: ${ev.bytes_sent} B sent, ${ev.bytes_received} B received`
    : `${via} was refused ${ev.host}:${ev.port}: ${REFUSALS[ev.reason] || ev.reason}`;
  return row(ev, `network compact ${allowed ? "net-allowed" : "net-refused"}`, "network", h("div", { class: "line" }, text));
}

const HANDED_BACK = {
  pushed: "pushed",
  pull_request_opened: "pull request opened",
  pull_request_updated: "pull request updated",
  commented: "commented on the issue",
  failed: "failed",
};

// What the server did with the result for the automation that started the run.
export function handedBack(ev) {
  const what = HANDED_BACK[ev.what] || ev.what;
  const line = h("div", { class: "line" }, `automation ${ev.automation}: ${what}: ${ev.detail}`);
  const failed = ev.what === "failed";
  return row(ev, `handed-back compact ${failed ? "net-refused" : "net-allowed"}`, "automation", line);
}
