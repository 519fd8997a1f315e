// The run's numbers as they happen: steps, tokens read and written, how much of the
// prompt the server's cache served, and the generation speed — exact from each `usage`
// event, estimated while a reply streams (one streamed piece is about one token).

import { h, count, fill } from "./dom.js";

export class Stats {
  constructor() {
    this.steps = 0;
    this.prompt = 0;
    this.completion = 0;
    this.cached = 0;
    this.cachedKnown = false;
    this.lastPrompt = null;
    this.rate = null;
    this.live = null;
    this.condensations = 0;
    this.pieces = 0;
    this.since = 0;
    this.el = h("div", { class: "stats", id: "stats", "aria-live": "off" });
    this.dirty = true;
  }

  usage(u) {
    this.steps = Math.max(this.steps, u.step || 0);
    this.prompt += u.prompt_tokens || 0;
    this.completion += u.completion_tokens || 0;
    if (typeof u.cached_tokens === "number") {
      this.cached += u.cached_tokens;
      this.cachedKnown = true;
    }
    this.lastPrompt = u.prompt_tokens;
    if (u.generation_ms > 0 && u.completion_tokens > 0) this.rate = (u.completion_tokens * 1000) / u.generation_ms;
    this.live = null;
    this.pieces = 0;
    this.dirty = true;
  }

  step(n) {
    if (n > this.steps) {
      this.steps = n;
      this.dirty = true;
    }
  }

  condensed() {
    this.condensations++;
    this.dirty = true;
  }

  // A streamed piece of a reply.
  piece() {
    const now = performance.now();
    if (this.pieces === 0) this.since = now;
    this.pieces++;
    const seconds = (now - this.since) / 1000;
    if (seconds > 0.25) this.live = this.pieces / seconds;
    this.dirty = true;
  }

  render() {
    if (!this.dirty) return;
    this.dirty = false;
    const cache = this.cachedKnown && this.prompt > 0 ? `${Math.round((100 * this.cached) / this.prompt)} %` : "–";
    const speed = this.live !== null ? `≈${this.live.toFixed(1)}` : this.rate !== null ? this.rate.toFixed(1) : "–";
    const item = (name, value, id, title) => h("span", { class: "stat", id, title }, h("strong", {}, value), ` ${name}`);
    fill(this.el, 
      item(this.steps === 1 ? "step" : "steps", String(this.steps), "stat-steps"),
      item("tokens in", count(this.prompt), "stat-prompt", "prompt tokens sent, all steps"),
      item("out", count(this.completion), "stat-completion", "tokens the model wrote"),
      item("cache reuse", cache, "stat-cache", "prompt tokens served from the server's cache"),
      item("tok/s", speed, "stat-speed", "generation speed of the last reply (≈ while it streams)"),
      this.lastPrompt !== null ? item("context", count(this.lastPrompt), "stat-context", "prompt tokens of the last request") : null,
      this.condensations ? item(this.condensations === 1 ? "condensation" : "condensations", String(this.condensations), "stat-condensed") : null);
  }
}
