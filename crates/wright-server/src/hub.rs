//! One conversation's events as they are logged, for its WebSockets: every event its run
//! logs is kept here in order (seeded from the log, deduplicated by id) and a watch says
//! how far it goes, so a subscriber reads what it has not sent, then waits — it never
//! misses one (a watch cannot lag) and never sends one twice (it sends by id). Streamed
//! token deltas go through a broadcast beside it: they are not in the log, and a slow
//! subscriber may lose some.

use std::sync::Mutex;
use tokio::sync::broadcast;
use tokio::sync::watch;
use wright_llm::StreamDelta;
use wright_protocol::Event;

pub struct Hub {
    events: Mutex<Vec<Event>>,
    /// The number of events kept, each time it grows.
    grown: watch::Sender<usize>,
    deltas: broadcast::Sender<serde_json::Value>,
}

impl Hub {
    /// A hub holding the log's events so far.
    pub fn new(logged: Vec<Event>) -> Self {
        let (grown, _) = watch::channel(logged.len());
        let (deltas, _) = broadcast::channel(256);
        Self {
            events: Mutex::new(logged),
            grown,
            deltas,
        }
    }

    /// Keeps `event` unless one with its id (or a later one) is kept already.
    pub fn push(&self, event: &Event) {
        let Ok(mut events) = self.events.lock() else {
            return;
        };
        if events.last().is_some_and(|last| last.id >= event.id) {
            return;
        }
        events.push(event.clone());
        let len = events.len();
        drop(events);
        self.grown.send_replace(len);
    }

    /// The events whose id is greater than `after` (all, for `None`).
    pub fn after(&self, after: Option<u64>) -> Vec<Event> {
        let Ok(events) = self.events.lock() else {
            return Vec::new();
        };
        let start = match after {
            None => 0,
            Some(after) => events.partition_point(|e| e.id <= after),
        };
        events[start..].to_vec()
    }

    /// The id of the last event kept, if any.
    pub fn last_id(&self) -> Option<u64> {
        self.events.lock().ok()?.last().map(|event| event.id)
    }

    pub fn subscribe(&self) -> watch::Receiver<usize> {
        self.grown.subscribe()
    }

    pub fn deltas(&self) -> broadcast::Receiver<serde_json::Value> {
        self.deltas.subscribe()
    }

    /// Passes a streamed piece of a reply on, when someone listens.
    pub fn delta(&self, delta: &StreamDelta) {
        let value = match delta {
            StreamDelta::Text(text) => serde_json::json!({"kind": "delta", "text": text}),
            StreamDelta::Reasoning(text) => {
                serde_json::json!({"kind": "delta", "reasoning": text})
            }
            StreamDelta::ToolCallStarted { name } => {
                serde_json::json!({"kind": "delta", "tool_call": name})
            }
            StreamDelta::ToolCallArguments(text) => {
                serde_json::json!({"kind": "delta", "arguments": text})
            }
            _ => return,
        };
        let _ = self.deltas.send(value);
    }
}

/// A run's observer: every event and delta into the hub.
pub struct HubObserver(pub std::sync::Arc<Hub>);

impl wright_session::Observer for HubObserver {
    fn event(&mut self, event: &Event) {
        self.0.push(event);
    }
    fn delta(&mut self, delta: &StreamDelta) {
        self.0.delta(delta);
    }
}
