//! Drawing a token held to a grammar as llama.cpp's own tools do: the token is drawn
//! without the grammar, then checked against it alone; only a token the grammar refuses
//! costs the grammar's pass over the whole vocabulary and a second draw from what it
//! allows. Every token is still one the grammar accepts, and most cost it one check
//! instead of one per vocabulary entry (150,000 for Qwen), which made generation with
//! tools markedly slower than llama-server's (measured by `cargo bench --bench engine`).

use super::Job;
use crate::error::EngineError;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;

/// One request's sampling: the chain (greedy, or top-k, top-p, min-p, temperature and a
/// seeded draw) and the grammar it is held to, if any.
pub struct Sampler {
    chain: LlamaSampler,
    grammar: Option<LlamaSampler>,
}

impl Sampler {
    pub fn new(model: &LlamaModel, job: &Job) -> Result<Self, EngineError> {
        let grammar = match &job.grammar {
            Some(grammar) => Some(
                LlamaSampler::grammar(model, grammar, "root")
                    .map_err(|err| EngineError::Grammar(format!("{err:?}")))?,
            ),
            None => None,
        };
        let chain = if job.temperature <= 0.0 {
            LlamaSampler::chain_simple([LlamaSampler::greedy()])
        } else {
            LlamaSampler::chain_simple([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::min_p(0.05, 1),
                LlamaSampler::temp(job.temperature),
                LlamaSampler::dist(job.seed),
            ])
        };
        Ok(Sampler { chain, grammar })
    }

    /// The next token from the last evaluated position of `ctx`, accepted by the grammar.
    pub fn sample(&mut self, ctx: &LlamaContext<'_>) -> LlamaToken {
        let drawn = self.chain.sample(ctx, -1);
        let Some(grammar) = &mut self.grammar else {
            return drawn;
        };
        let mut alone = LlamaTokenDataArray::new(vec![LlamaTokenData::new(drawn, 1.0, 0.0)], false);
        grammar.apply(&mut alone);
        let allowed = alone
            .data
            .first()
            .is_some_and(|data| data.logit().is_finite());
        let token = if allowed {
            drawn
        } else {
            let mut all = ctx.token_data_array_ith(-1);
            grammar.apply(&mut all);
            self.chain.apply(&mut all);
            all.selected_token().unwrap_or(drawn)
        };
        grammar.accept(token);
        token
    }
}
