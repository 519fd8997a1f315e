//! Doctor's speed measure: one short streamed request, its prefill and generation rates
//! as this machine gets them (only the tokens the server processed count).

use super::Report;
use crate::hints::explain;
use crate::hints::Front;
use serde_json::json;
use wright_llm::ChatMessage;
use wright_llm::Client;

/// One short streamed request: prefill and generation speed as this machine gets them.
pub(super) async fn measure_speed(client: &Client, report: &mut Report) {
    let mut config = client.config().clone();
    config.max_tokens = Some(32);
    config.temperature = Some(0.0);
    config.stream = true;
    let Ok(probe) = client.reconfigured(config) else {
        return;
    };
    let messages = [ChatMessage::User {
        // A prompt the server has not seen (so nothing comes from its cache) and long
        // enough for the prefill rate to mean something.
        content: format!(
            "Request {}. {} Count from 1 to 20, separated by spaces.",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
            "This line is only here to give the model something to read before it answers. "
                .repeat(6)
        ),
    }];
    match probe.complete(&messages, &[], "speed", &mut |_| {}).await {
        Ok(response) => {
            let usage = response.usage.clone().unwrap_or_default();
            let prefill_ms = usage.prompt_ms.unwrap_or(response.first_byte_ms);
            let generation_ms = usage.predicted_ms.unwrap_or(response.generation_ms);
            let rate = |tokens: u64, ms: f64| {
                (ms > 0.0 && tokens > 0).then(|| tokens as f64 * 1000.0 / ms)
            };
            // Only the tokens the server actually processed: a cached prefix costs nothing.
            let processed = usage
                .prompt_tokens
                .saturating_sub(usage.cached_tokens.unwrap_or(0));
            let prefill = rate(processed, prefill_ms);
            let generation = rate(usage.completion_tokens, generation_ms);
            let shown =
                |r: Option<f64>| r.map_or("unknown".to_string(), |r| format!("{r:.0} tokens/s"));
            report.set(
                "speed",
                json!({"prefill_tokens_per_s": prefill, "generation_tokens_per_s": generation}),
                format!(
                    "speed      prefill {}, generation {}",
                    shown(prefill),
                    shown(generation)
                ),
            );
        }
        Err(err) => report.fail(
            "speed",
            "speed      the request failed".into(),
            format!(
                "a short request failed: {}",
                explain(&err, Front::CommandLine)
            ),
        ),
    }
}
