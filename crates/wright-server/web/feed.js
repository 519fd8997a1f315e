// A conversation's events as they come: the log so far read in pages over HTTP, then its
// WebSocket from the last event read (each event as it is logged, with streamed pieces of
// the model's reply between), reopened after a drop from the last event received so
// nothing is missed or shown twice. A long log comes in a few responses, not a frame per
// event: on 2,000 events the socket's frames were most of the time to show them.
// Events are rendered in time slices, a few milliseconds a frame, into a fragment
// appended once per frame: two thousand events arrive in a burst and the page keeps
// answering while they are laid out.

import { api, socketUrl } from "./api.js";

// Events asked for per page of the log.
const PAGE = 1000;

const SLICE_MS = 6;

export class Feed {
  // handlers: event(ev, fragment) renders one event; delta(piece) a streamed piece;
  // flushed(fragment) puts the frame's fragment in place; idle() when all are shown.
  constructor(id, handlers) {
    this.id = id;
    this.handlers = handlers;
    this.queue = [];
    this.head = 0;
    this.lastId = null;
    this.frame = 0;
    this.socket = null;
    this.closed = false;
    this.retry = 0;
    this.read = false;
  }

  async open() {
    if (this.closed) return;
    if (!this.read) {
      this.read = true;
      try {
        await this.backlog();
      } catch {
        // The socket sends the log from after the last event taken instead.
      }
      if (this.closed) return;
    }
    const socket = new WebSocket(socketUrl(this.id, this.lastId));
    this.socket = socket;
    socket.addEventListener("open", () => {
      this.retry = 0;
    });
    socket.addEventListener("message", (message) => this.receive(message.data));
    socket.addEventListener("close", () => {
      if (this.closed || this.socket !== socket) return;
      this.retry = Math.min(this.retry + 1, 5);
      this.timer = setTimeout(() => this.open(), 400 * this.retry);
    });
  }

  // The log as it is now, page by page.
  async backlog() {
    let after;
    for (;;) {
      const page = await api.events(this.id, after, PAGE);
      if (this.closed) return;
      for (const event of page.events || []) this.take(event);
      if (page.next_after === null || page.next_after === undefined) return;
      after = page.next_after;
    }
  }

  receive(text) {
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    if (!value || typeof value !== "object") return;
    if (value.kind === "delta") {
      this.handlers.delta(value);
      return;
    }
    this.take(value);
  }

  take(value) {
    if (!value || typeof value !== "object") return;
    if (typeof value.id !== "number" || (this.lastId !== null && value.id <= this.lastId)) return;
    this.lastId = value.id;
    this.queue.push(value);
    this.schedule();
  }

  schedule() {
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  flush() {
    this.frame = 0;
    const start = performance.now();
    const fragment = document.createDocumentFragment();
    while (this.head < this.queue.length && performance.now() - start < SLICE_MS) {
      const event = this.queue[this.head++];
      // How many are queued behind it: the page may keep rows that far back off-screen.
      this.handlers.event(event, fragment, this.queue.length - this.head);
    }
    this.handlers.flushed(fragment);
    if (this.head < this.queue.length) {
      this.schedule();
    } else {
      this.queue = [];
      this.head = 0;
      this.handlers.idle();
    }
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.frame) cancelAnimationFrame(this.frame);
    if (this.socket) this.socket.close();
  }
}
