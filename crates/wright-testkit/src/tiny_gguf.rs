//! Test-only writer of a tiny random `llama` GGUF model (byte-level BPE vocab, Qwen2.5-style ChatML tokens and template) that llama.cpp loads in milliseconds; guarantees: no downloads, < 1 MB by default, and identical bytes for identical `TinyModel`s.
//!
//! The file follows GGUF v3 as `ggml/src/gguf.cpp` reads it: header, metadata
//! key/values, tensor infos, padding to [`GGUF_ALIGNMENT`], then the tensor data
//! with every tensor starting on an aligned offset. Weights are F32 so no
//! quantisation code is involved, and small (uniform ±0.05, norms 1.0) so the
//! logits stay finite while sampling still produces varied text.
//!
//! Random byte-level weights would mostly emit invalid UTF-8, so one hidden
//! dimension is wired as a constant that pushes the logits of every byte
//! token outside printable ASCII, tab and newline far down: sampled text is
//! in practice printable ASCII, sprinkled with `<|im_end|>`/`<|endoftext|>`
//! stops, while still varying with the prompt and the seed.
//!
//! The vocabulary is GPT-2's 256 byte-level symbols (token id == byte value),
//! then five special tokens at fixed ids (see [`TOKEN_ENDOFTEXT`] and friends),
//! then tokens produced by a few dozen BPE merges, so common words and JSON
//! punctuation become single tokens and tokenisation is not one byte per token.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::Path;

/// Data section alignment. 32 is GGUF's default, so no `general.alignment`
/// override is needed, but it is written anyway to make the file self-describing.
pub const GGUF_ALIGNMENT: usize = 32;

/// `<|endoftext|>`: control token, used as BOS and padding (as Qwen2.5 does).
pub const TOKEN_ENDOFTEXT: u32 = 256;
/// `<|im_start|>`: control token opening a ChatML turn.
pub const TOKEN_IM_START: u32 = 257;
/// `<|im_end|>`: control token closing a ChatML turn; the EOS/EOT token.
pub const TOKEN_IM_END: u32 = 258;
/// `<tool_call>`: user-defined (not control) so it is rendered in output text
/// and a tool-call parser can see it, as in Qwen2.5.
pub const TOKEN_TOOL_CALL: u32 = 259;
/// `</tool_call>`: user-defined, see [`TOKEN_TOOL_CALL`].
pub const TOKEN_TOOL_CALL_END: u32 = 260;

/// ChatML template in the Qwen2.5 style, written for this crate.
///
/// It uses only plain Jinja (no Python string methods, no `namespace`, no
/// whitespace-control dashes) and never puts a newline right after a `{% %}`
/// tag, so it renders byte-identically with and without `trim_blocks` /
/// `lstrip_blocks` — that is, the same under minijinja, llama.cpp's engine and
/// Jinja2. Tool-call arguments are accepted both as a JSON string (OpenAI wire
/// format) and as a mapping.
pub const TINY_CHAT_TEMPLATE: &str = concat!(
    // `nl` stands in for a newline wherever one would directly follow a tag.
    "{% set nl = '\\n' %}",
    "{% set has_system = messages | length > 0 and messages[0].role == 'system' %}",
    "<|im_start|>system\n",
    "{% if has_system %}{{ messages[0].content }}",
    "{% else %}You are the Wright tiny test model. Your replies are random.{% endif %}",
    "{% if tools %}{{ nl }}{{ nl }}# Tools\n\n",
    "These functions are available to you. Their signatures are listed inside <tools></tools>:\n",
    "<tools>\n{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}</tools>\n\n",
    "To use a function, answer with one JSON object per call, wrapped in <tool_call></tool_call> tags:\n",
    "<tool_call>\n{\"name\": <function name>, \"arguments\": <arguments as a JSON object>}\n</tool_call>",
    "{% endif %}<|im_end|>\n",
    "{% for message in messages %}",
    // The leading system message was rendered above.
    "{% if loop.first and has_system %}",
    // Consecutive tool results share one user turn.
    "{% elif message.role == 'tool' %}",
    "{% if loop.first or messages[loop.index0 - 1].role != 'tool' %}<|im_start|>user{% endif %}",
    "{{ nl }}<tool_response>\n{{ message.content }}\n</tool_response>",
    "{% if loop.last or messages[loop.index0 + 1].role != 'tool' %}<|im_end|>\n{% endif %}",
    "{% elif message.role == 'assistant' and message.tool_calls %}",
    "<|im_start|>assistant{% if message.content %}{{ nl }}{{ message.content }}{% endif %}",
    "{% for call in message.tool_calls %}",
    "{% set func = call.function if call.function is defined else call %}",
    "{{ nl }}<tool_call>\n{\"name\": \"{{ func.name }}\", \"arguments\": ",
    "{% if func.arguments is string %}{{ func.arguments }}",
    "{% else %}{{ func.arguments | tojson }}{% endif %}}\n</tool_call>",
    "{% endfor %}<|im_end|>\n",
    "{% else %}",
    "<|im_start|>{{ message.role }}\n{% if message.content %}{{ message.content }}{% endif %}<|im_end|>\n",
    "{% endif %}",
    "{% endfor %}",
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
);

/// Shape and seed of the generated model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TinyModel {
    /// Number of transformer blocks.
    pub layers: u32,
    /// Hidden size; must be a multiple of `heads`.
    pub embedding: u32,
    /// Attention heads; the head size (`embedding / heads`) must be even for RoPE.
    pub heads: u32,
    /// Key/value heads (grouped-query attention); must divide `heads`.
    pub kv_heads: u32,
    /// Feed-forward (SwiGLU) hidden size.
    pub feed_forward: u32,
    /// Training context length advertised to llama.cpp.
    pub context: u32,
    /// Seed for the weight PRNG.
    pub seed: u64,
    /// Jinja chat template stored as `tokenizer.chat_template`.
    pub chat_template: String,
}

impl Default for TinyModel {
    fn default() -> Self {
        Self {
            layers: 2,
            embedding: 64,
            heads: 4,
            kv_heads: 2,
            feed_forward: 128,
            context: 8192,
            seed: 1,
            chat_template: TINY_CHAT_TEMPLATE.to_string(),
        }
    }
}

/// Writes the model described by `model` to `path` (created or truncated).
pub fn write_tiny_gguf(path: &Path, model: &TinyModel) -> io::Result<()> {
    std::fs::write(path, tiny_gguf_bytes(model)?)
}

/// The complete GGUF file for `model`, in memory (a few hundred KiB for the
/// default shape, so building it in one buffer is simpler than streaming).
pub fn tiny_gguf_bytes(model: &TinyModel) -> io::Result<Vec<u8>> {
    validate(model)?;
    let vocab = Vocab::build();
    let kvs = metadata(model, &vocab)?;
    let tensors = tensor_shapes(model, to_u64(vocab.tokens.len())?);

    let mut out = Vec::new();
    out.extend_from_slice(b"GGUF");
    put_u32(&mut out, 3);
    put_u64(&mut out, to_u64(tensors.len())?);
    put_u64(&mut out, to_u64(kvs.len())?);
    for (key, value) in &kvs {
        put_str(&mut out, key)?;
        value.write(&mut out)?;
    }

    // Offsets are relative to the start of the data section. gguf.cpp rejects a
    // file unless each offset equals the padded end of the previous tensor.
    let mut offset = 0usize;
    for tensor in &tensors {
        put_str(&mut out, &tensor.name)?;
        put_u32(&mut out, to_u32(tensor.dims.len())?);
        for &dim in &tensor.dims {
            put_u64(&mut out, dim);
        }
        put_u32(&mut out, GGML_TYPE_F32);
        put_u64(&mut out, to_u64(offset)?);
        offset += padded(tensor.byte_len()?);
    }

    pad_to_alignment(&mut out);
    let mut rng = SplitMix64::new(model.seed);
    for tensor in &tensors {
        let count = tensor.byte_len()? / 4;
        // dims[0] is the row length; validate() rules out zero-sized dims.
        let row_len = usize::try_from(tensor.dims.first().copied().unwrap_or(1))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        for index in 0..count {
            // Always draw, so every tensor's values depend only on the seed
            // and the shapes before it, not on the overrides below.
            let random = rng.next_uniform(WEIGHT_RANGE);
            let (row, column) = (index / row_len, index % row_len);
            let value = match tensor.init {
                Init::Ones => 1.0f32,
                Init::Uniform => random,
                Init::Embedding if column == BIAS_DIM => BIAS_VALUE,
                Init::Embedding => random,
                Init::ResidualWriter if row == BIAS_DIM => 0.0,
                Init::ResidualWriter => random,
                Init::Unembedding if column == BIAS_DIM && vocab.is_suppressed(row) => {
                    SUPPRESS_WEIGHT
                }
                Init::Unembedding => random,
            };
            out.extend_from_slice(&value.to_le_bytes());
        }
        // Pad after every tensor, the last one included: llama.cpp checks that
        // the padded data section fits inside the file.
        pad_to_alignment(&mut out);
    }
    Ok(out)
}

/// Half-width of the uniform weight distribution.
const WEIGHT_RANGE: f32 = 0.05;

// Random byte-level weights would mostly sample lone bytes >= 0x80 and control
// characters, i.e. invalid UTF-8 (llama-server even fails to serialise such a
// reply). So the model is steered to printable output: hidden dimension
// `BIAS_DIM` holds the constant `BIAS_VALUE` in every token embedding, no layer
// writes to it (those weight rows are zero), so after the final RMS norm it is
// a large positive constant; suppressed tokens weigh it by `SUPPRESS_WEIGHT`,
// which puts their logits tens of units below every other token's.
const BIAS_DIM: usize = 0;
const BIAS_VALUE: f32 = 1.0;
const SUPPRESS_WEIGHT: f32 = -16.0;

const GGML_TYPE_F32: u32 = 0;
/// `general.file_type` value meaning "all tensors F32" (LLAMA_FTYPE_ALL_F32).
const FILE_TYPE_ALL_F32: u32 = 0;

// GGUF metadata value type tags (enum gguf_type).
const GGUF_TYPE_UINT32: u32 = 4;
const GGUF_TYPE_INT32: u32 = 5;
const GGUF_TYPE_FLOAT32: u32 = 6;
const GGUF_TYPE_BOOL: u32 = 7;
const GGUF_TYPE_STRING: u32 = 8;
const GGUF_TYPE_ARRAY: u32 = 9;

// llama.cpp token types (tokenizer.ggml.token_type).
const TOKEN_TYPE_NORMAL: i32 = 1;
const TOKEN_TYPE_CONTROL: i32 = 3;
const TOKEN_TYPE_USER_DEFINED: i32 = 4;

/// Special tokens in id order starting at [`TOKEN_ENDOFTEXT`].
const SPECIAL_TOKENS: [(&str, i32); 5] = [
    ("<|endoftext|>", TOKEN_TYPE_CONTROL),
    ("<|im_start|>", TOKEN_TYPE_CONTROL),
    ("<|im_end|>", TOKEN_TYPE_CONTROL),
    ("<tool_call>", TOKEN_TYPE_USER_DEFINED),
    ("</tool_call>", TOKEN_TYPE_USER_DEFINED),
];

/// Pieces that become single tokens. Each must be a whole "word" under the
/// qwen2 pre-tokenizer regex (letters with at most one leading non-letter,
/// a run of punctuation with an optional leading space, or whitespace),
/// otherwise the merges building it could never fire.
const MERGED_PIECES: &[&str] = &[
    "in",
    "er",
    "on",
    "re",
    "at",
    "en",
    "ing",
    " t",
    " a",
    " the",
    " to",
    " and",
    " of",
    " is",
    " you",
    "name",
    " name",
    "file",
    " file",
    "_file",
    "path",
    "read",
    " read",
    "tool",
    " tool",
    "call",
    " call",
    " it",
    " with",
    "hello",
    " hello",
    " world",
    "user",
    "assistant",
    "function",
    "arguments",
    "{\"",
    "\":",
    " \"",
    "\",",
    " {\"",
    "\"}",
    "\"}}",
    "\n\n",
    "  ",
    "    ",
];

fn validate(model: &TinyModel) -> io::Result<()> {
    let invalid = |why: &str| Err(io::Error::new(io::ErrorKind::InvalidInput, why.to_string()));
    if model.layers == 0 || model.embedding == 0 || model.feed_forward == 0 || model.context == 0 {
        return invalid("layers, embedding, feed_forward and context must be non-zero");
    }
    if model.heads == 0 || !model.embedding.is_multiple_of(model.heads) {
        return invalid("embedding must be a non-zero multiple of heads");
    }
    // llama.cpp's RoPE rotates pairs of values, so the head size must be even.
    if !(model.embedding / model.heads).is_multiple_of(2) {
        return invalid("head size (embedding / heads) must be even");
    }
    if model.kv_heads == 0 || !model.heads.is_multiple_of(model.kv_heads) {
        return invalid("kv_heads must be non-zero and divide heads");
    }
    Ok(())
}

/// Metadata key/values in file order.
fn metadata(model: &TinyModel, vocab: &Vocab) -> io::Result<Vec<(&'static str, Value)>> {
    let head_size = model.embedding / model.heads;
    let n_vocab = to_u32(vocab.tokens.len())?;
    Ok(vec![
        ("general.architecture", Value::Str("llama".into())),
        ("general.name", Value::Str("wright-tiny".into())),
        ("general.alignment", Value::U32(to_u32(GGUF_ALIGNMENT)?)),
        ("general.file_type", Value::U32(FILE_TYPE_ALL_F32)),
        ("llama.vocab_size", Value::U32(n_vocab)),
        ("llama.context_length", Value::U32(model.context)),
        ("llama.embedding_length", Value::U32(model.embedding)),
        ("llama.block_count", Value::U32(model.layers)),
        ("llama.feed_forward_length", Value::U32(model.feed_forward)),
        ("llama.attention.head_count", Value::U32(model.heads)),
        ("llama.attention.head_count_kv", Value::U32(model.kv_heads)),
        ("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-6)),
        ("llama.rope.freq_base", Value::F32(10_000.0)),
        // llama.cpp insists the rotary dimension equals the head size for `llama`.
        ("llama.rope.dimension_count", Value::U32(head_size)),
        ("tokenizer.ggml.model", Value::Str("gpt2".into())),
        // "qwen2" selects Qwen2's pre-tokenizer regex without the "missing
        // pre-tokenizer" warning that an absent key triggers.
        ("tokenizer.ggml.pre", Value::Str("qwen2".into())),
        (
            "tokenizer.ggml.tokens",
            Value::StrArray(vocab.tokens.clone()),
        ),
        (
            "tokenizer.ggml.token_type",
            Value::I32Array(vocab.types.clone()),
        ),
        (
            "tokenizer.ggml.merges",
            Value::StrArray(vocab.merges.clone()),
        ),
        ("tokenizer.ggml.bos_token_id", Value::U32(TOKEN_ENDOFTEXT)),
        ("tokenizer.ggml.eos_token_id", Value::U32(TOKEN_IM_END)),
        // Without this llama.cpp guesses EOT from token texts, and either
        // <|im_end|> or <|endoftext|> may win depending on hash-map order.
        ("tokenizer.ggml.eot_token_id", Value::U32(TOKEN_IM_END)),
        (
            "tokenizer.ggml.padding_token_id",
            Value::U32(TOKEN_ENDOFTEXT),
        ),
        // ChatML prompts carry their own structure; a BOS would only add noise.
        ("tokenizer.ggml.add_bos_token", Value::Bool(false)),
        (
            "tokenizer.chat_template",
            Value::Str(model.chat_template.clone()),
        ),
    ])
}

enum Value {
    U32(u32),
    F32(f32),
    Bool(bool),
    Str(String),
    StrArray(Vec<String>),
    I32Array(Vec<i32>),
}

impl Value {
    fn write(&self, out: &mut Vec<u8>) -> io::Result<()> {
        match self {
            Value::U32(v) => {
                put_u32(out, GGUF_TYPE_UINT32);
                put_u32(out, *v);
            }
            Value::F32(v) => {
                put_u32(out, GGUF_TYPE_FLOAT32);
                out.extend_from_slice(&v.to_le_bytes());
            }
            Value::Bool(v) => {
                put_u32(out, GGUF_TYPE_BOOL);
                out.push(u8::from(*v));
            }
            Value::Str(v) => {
                put_u32(out, GGUF_TYPE_STRING);
                put_str(out, v)?;
            }
            Value::StrArray(items) => {
                put_u32(out, GGUF_TYPE_ARRAY);
                put_u32(out, GGUF_TYPE_STRING);
                put_u64(out, to_u64(items.len())?);
                for item in items {
                    put_str(out, item)?;
                }
            }
            Value::I32Array(items) => {
                put_u32(out, GGUF_TYPE_ARRAY);
                put_u32(out, GGUF_TYPE_INT32);
                put_u64(out, to_u64(items.len())?);
                for item in items {
                    out.extend_from_slice(&item.to_le_bytes());
                }
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Init {
    /// Norm weights.
    Ones,
    Uniform,
    /// `token_embd`: uniform, but column `BIAS_DIM` is `BIAS_VALUE`.
    Embedding,
    /// Projections that add into the residual stream: uniform, but the row
    /// producing `BIAS_DIM` is zero so that dimension stays constant.
    ResidualWriter,
    /// `output`: uniform, but suppressed tokens read `BIAS_DIM` with
    /// `SUPPRESS_WEIGHT`.
    Unembedding,
}

struct TensorShape {
    name: String,
    /// ggml order: `dims[0]` is the contiguous (fastest-varying) dimension.
    dims: Vec<u64>,
    init: Init,
}

impl TensorShape {
    fn new(name: impl Into<String>, dims: &[u64], init: Init) -> Self {
        Self {
            name: name.into(),
            dims: dims.to_vec(),
            init,
        }
    }

    fn byte_len(&self) -> io::Result<usize> {
        let elements = self
            .dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d));
        elements
            .and_then(|n| n.checked_mul(4))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "tensor too large"))
    }
}

/// Tensor names and shapes as llama.cpp's `llama` architecture creates them
/// (`src/models/llama.cpp`): matrices are `{input width, output width}`.
fn tensor_shapes(model: &TinyModel, n_vocab: u64) -> Vec<TensorShape> {
    let embd = u64::from(model.embedding);
    let ff = u64::from(model.feed_forward);
    let head_size = embd / u64::from(model.heads);
    let kv_width = head_size * u64::from(model.kv_heads);

    let mut tensors = vec![
        TensorShape::new("token_embd.weight", &[embd, n_vocab], Init::Embedding),
        TensorShape::new("output_norm.weight", &[embd], Init::Ones),
        TensorShape::new("output.weight", &[embd, n_vocab], Init::Unembedding),
    ];
    for layer in 0..model.layers {
        let name = |suffix: &str| format!("blk.{layer}.{suffix}.weight");
        tensors.extend([
            TensorShape::new(name("attn_norm"), &[embd], Init::Ones),
            TensorShape::new(name("attn_q"), &[embd, embd], Init::Uniform),
            TensorShape::new(name("attn_k"), &[embd, kv_width], Init::Uniform),
            TensorShape::new(name("attn_v"), &[embd, kv_width], Init::Uniform),
            TensorShape::new(name("attn_output"), &[embd, embd], Init::ResidualWriter),
            TensorShape::new(name("ffn_norm"), &[embd], Init::Ones),
            TensorShape::new(name("ffn_gate"), &[embd, ff], Init::Uniform),
            TensorShape::new(name("ffn_up"), &[embd, ff], Init::Uniform),
            TensorShape::new(name("ffn_down"), &[ff, embd], Init::ResidualWriter),
        ]);
    }
    tensors
}

struct Vocab {
    tokens: Vec<String>,
    types: Vec<i32>,
    /// Tokens the model is steered away from generating: bytes other than
    /// printable ASCII, tab and newline.
    suppressed: Vec<bool>,
    /// `"left right"` pairs, highest priority first (GGUF merges order).
    merges: Vec<String>,
}

impl Vocab {
    fn build() -> Self {
        let byte_symbols = byte_to_unicode();
        let mut tokens: Vec<String> = byte_symbols.iter().map(|c| c.to_string()).collect();
        let mut types = vec![TOKEN_TYPE_NORMAL; tokens.len()];
        let mut suppressed: Vec<bool> = (0..=255u8)
            .map(|b| !matches!(b, b'\t' | b'\n' | b' '..=b'~'))
            .collect();
        for (text, kind) in SPECIAL_TOKENS {
            tokens.push(text.to_string());
            types.push(kind);
            suppressed.push(false);
        }

        let mut known: HashSet<String> = tokens.iter().cloned().collect();
        let mut ranks: HashMap<(String, String), usize> = HashMap::new();
        let mut merges = Vec::new();
        for piece in MERGED_PIECES {
            let symbols: String = piece
                .bytes()
                .map(|b| byte_symbols[usize::from(b)])
                .collect();
            // Apply the merges so far, then chain the leftover parts left to
            // right. New merges rank below all earlier ones, so adding them
            // never changes how earlier pieces tokenize, and this piece always
            // ends as one token.
            let mut parts = bpe(&symbols, &ranks).into_iter();
            let Some(mut acc) = parts.next() else {
                continue;
            };
            for part in parts {
                ranks.insert((acc.clone(), part.clone()), merges.len());
                merges.push(format!("{acc} {part}"));
                acc.push_str(&part);
                if known.insert(acc.clone()) {
                    tokens.push(acc.clone());
                    types.push(TOKEN_TYPE_NORMAL);
                    // Merged pieces are built from printable ASCII only.
                    suppressed.push(false);
                }
            }
        }
        Self {
            tokens,
            types,
            suppressed,
            merges,
        }
    }
}

impl Vocab {
    fn is_suppressed(&self, id: usize) -> bool {
        self.suppressed.get(id).copied().unwrap_or(false)
    }
}

/// Byte-pair encoding of one pre-tokenized word, lowest rank first and the
/// leftmost pair on ties, the order llama.cpp's BPE session uses.
fn bpe(word: &str, ranks: &HashMap<(String, String), usize>) -> Vec<String> {
    let mut parts: Vec<String> = word.chars().map(String::from).collect();
    loop {
        let best = parts
            .windows(2)
            .enumerate()
            .filter_map(|(i, pair)| {
                ranks
                    .get(&(pair[0].clone(), pair[1].clone()))
                    .map(|&r| (r, i))
            })
            .min();
        let Some((_, i)) = best else {
            return parts;
        };
        let right = parts.remove(i + 1);
        parts[i].push_str(&right);
    }
}

/// GPT-2's reversible byte -> printable character mapping used by byte-level
/// BPE: printable Latin-1 bytes map to themselves, the rest to U+0100 onward.
fn byte_to_unicode() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut next_spare = 0u32;
    for byte in 0..=255u8 {
        let printable = matches!(byte, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        let code = if printable {
            u32::from(byte)
        } else {
            next_spare += 1;
            255 + next_spare
        };
        table[usize::from(byte)] = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
    }
    table
}

/// splitmix64: tiny, fast, and good enough for weights that only need to be
/// varied and reproducible.
struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[-range, range)`. Uses the top 24 bits, which an f32
    /// mantissa represents exactly.
    fn next_uniform(&mut self, range: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        (unit * 2.0 - 1.0) * range
    }
}

fn padded(len: usize) -> usize {
    len.div_ceil(GGUF_ALIGNMENT) * GGUF_ALIGNMENT
}

fn pad_to_alignment(out: &mut Vec<u8>) {
    out.resize(padded(out.len()), 0);
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) -> io::Result<()> {
    put_u64(out, to_u64(s.len())?);
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

fn to_u64(n: usize) -> io::Result<u64> {
    u64::try_from(n).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

fn to_u32(n: usize) -> io::Result<u32> {
    u32::try_from(n).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

#[cfg(test)]
mod tests;
