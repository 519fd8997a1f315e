//! The writer's output read back by a minimal GGUF reader of its own (not the writer's
//! helpers): header, metadata, aligned tensors, weights, the vocabulary and its merges,
//! the template, the same bytes for the same seed, and bad shapes refused.

use super::*;

/// Minimal GGUF reader, independent of the writer's helpers, so the tests
/// check the layout rather than re-running the same code.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

#[derive(Debug, PartialEq)]
enum Read {
    U32(u32),
    F32(f32),
    Bool(bool),
    Str(String),
    Strs(Vec<String>),
    I32s(Vec<i32>),
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        slice
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn string(&mut self) -> String {
        let len = self.u64() as usize;
        String::from_utf8(self.take(len).to_vec()).unwrap()
    }
    fn value(&mut self) -> Read {
        match self.u32() {
            4 => Read::U32(self.u32()),
            6 => Read::F32(f32::from_le_bytes(self.take(4).try_into().unwrap())),
            7 => Read::Bool(self.take(1)[0] != 0),
            8 => Read::Str(self.string()),
            9 => {
                let kind = self.u32();
                let n = self.u64() as usize;
                match kind {
                    8 => Read::Strs((0..n).map(|_| self.string()).collect()),
                    5 => Read::I32s(
                        (0..n)
                            .map(|_| i32::from_le_bytes(self.take(4).try_into().unwrap()))
                            .collect(),
                    ),
                    other => panic!("unexpected array type {other}"),
                }
            }
            other => panic!("unexpected value type {other}"),
        }
    }
}

struct Parsed {
    kvs: Vec<(String, Read)>,
    /// (name, dims, type, offset)
    tensors: Vec<(String, Vec<u64>, u32, u64)>,
    data_start: usize,
    len: usize,
}

fn parse(bytes: &[u8]) -> Parsed {
    let mut r = Reader { bytes, pos: 0 };
    assert_eq!(r.take(4), b"GGUF");
    assert_eq!(r.u32(), 3, "GGUF version");
    let n_tensors = r.u64();
    let n_kv = r.u64();
    let kvs = (0..n_kv).map(|_| (r.string(), r.value())).collect();
    let tensors = (0..n_tensors)
        .map(|_| {
            let name = r.string();
            let n_dims = r.u32();
            let dims = (0..n_dims).map(|_| r.u64()).collect();
            (name, dims, r.u32(), r.u64())
        })
        .collect();
    let data_start = r.pos.div_ceil(GGUF_ALIGNMENT) * GGUF_ALIGNMENT;
    assert!(bytes[r.pos..data_start].iter().all(|&b| b == 0));
    Parsed {
        kvs,
        tensors,
        data_start,
        len: bytes.len(),
    }
}

fn kv<'p>(parsed: &'p Parsed, key: &str) -> &'p Read {
    &parsed.kvs.iter().find(|(k, _)| k == key).unwrap().1
}

#[test]
fn header_and_metadata_layout() {
    let model = TinyModel::default();
    let parsed = parse(&tiny_gguf_bytes(&model).unwrap());
    assert_eq!(
        kv(&parsed, "general.architecture"),
        &Read::Str("llama".into())
    );
    assert_eq!(
        kv(&parsed, "general.name"),
        &Read::Str("wright-tiny".into())
    );
    assert_eq!(kv(&parsed, "llama.block_count"), &Read::U32(2));
    assert_eq!(kv(&parsed, "llama.embedding_length"), &Read::U32(64));
    assert_eq!(kv(&parsed, "llama.attention.head_count_kv"), &Read::U32(2));
    assert_eq!(kv(&parsed, "llama.rope.dimension_count"), &Read::U32(16));
    assert!(matches!(
        kv(&parsed, "llama.attention.layer_norm_rms_epsilon"),
        Read::F32(_)
    ));
    assert_eq!(
        kv(&parsed, "tokenizer.ggml.add_bos_token"),
        &Read::Bool(false)
    );
    assert_eq!(
        kv(&parsed, "tokenizer.ggml.eos_token_id"),
        &Read::U32(TOKEN_IM_END)
    );
    assert_eq!(
        kv(&parsed, "tokenizer.chat_template"),
        &Read::Str(TINY_CHAT_TEMPLATE.into())
    );
    // 3 global tensors + 9 per block.
    assert_eq!(parsed.tensors.len(), 3 + 9 * 2);
    assert!(parsed.tensors.iter().all(|t| t.2 == GGML_TYPE_F32));
    let Read::Strs(tokens) = kv(&parsed, "tokenizer.ggml.tokens") else {
        panic!("tokens not a string array");
    };
    let embd = &parsed.tensors[0];
    assert_eq!(embd.0, "token_embd.weight");
    assert_eq!(embd.1, vec![64, tokens.len() as u64]);
    let down = parsed
        .tensors
        .iter()
        .find(|t| t.0 == "blk.1.ffn_down.weight")
        .unwrap();
    assert_eq!(down.1, vec![128, 64]);
    let k = parsed
        .tensors
        .iter()
        .find(|t| t.0 == "blk.0.attn_k.weight")
        .unwrap();
    assert_eq!(k.1, vec![64, 32]);
}

#[test]
fn tensor_data_is_aligned_contiguous_and_in_bounds() {
    let parsed = parse(&tiny_gguf_bytes(&TinyModel::default()).unwrap());
    assert_eq!(parsed.data_start % GGUF_ALIGNMENT, 0);
    let mut expected = 0u64;
    for (name, dims, _, offset) in &parsed.tensors {
        assert_eq!(*offset, expected, "{name} offset");
        assert_eq!(offset % GGUF_ALIGNMENT as u64, 0, "{name} aligned");
        let bytes = dims.iter().product::<u64>() * 4;
        expected += bytes.div_ceil(GGUF_ALIGNMENT as u64) * GGUF_ALIGNMENT as u64;
    }
    assert_eq!(parsed.data_start as u64 + expected, parsed.len as u64);
}

fn tensor_values(bytes: &[u8], parsed: &Parsed, name: &str) -> (Vec<u64>, Vec<f32>) {
    let (_, dims, _, offset) = parsed.tensors.iter().find(|t| t.0 == name).unwrap();
    let start = parsed.data_start + *offset as usize;
    let count = dims.iter().product::<u64>() as usize;
    let values = bytes[start..start + count * 4]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (dims.clone(), values)
}

#[test]
fn weights_are_small_finite_and_norms_are_one() {
    let bytes = tiny_gguf_bytes(&TinyModel::default()).unwrap();
    let parsed = parse(&bytes);
    for (name, ..) in &parsed.tensors {
        let (dims, values) = tensor_values(&bytes, &parsed, name);
        assert!(values.iter().all(|v| v.is_finite()), "{name}");
        if name.contains("norm") {
            assert!(values.iter().all(|&v| v == 1.0), "{name}");
            continue;
        }
        assert!(values.iter().any(|&v| v != values[0]), "{name} varied");
        // Apart from the steering column/row, everything is small.
        let row_len = dims[0] as usize;
        let small = values.iter().enumerate().all(|(i, v)| {
            let steering = match name.as_str() {
                "token_embd.weight" | "output.weight" => i % row_len == BIAS_DIM,
                n if n.ends_with("attn_output.weight") || n.ends_with("ffn_down.weight") => {
                    i / row_len == BIAS_DIM
                }
                _ => false,
            };
            steering || v.abs() <= WEIGHT_RANGE
        });
        assert!(small, "{name}");
    }
}

#[test]
fn non_printable_tokens_are_steered_away() {
    let bytes = tiny_gguf_bytes(&TinyModel::default()).unwrap();
    let parsed = parse(&bytes);
    let vocab = Vocab::build();
    let (dims, embd) = tensor_values(&bytes, &parsed, "token_embd.weight");
    let row_len = dims[0] as usize;
    assert!(embd.chunks(row_len).all(|row| row[BIAS_DIM] == BIAS_VALUE));
    for writer in ["blk.0.attn_output.weight", "blk.1.ffn_down.weight"] {
        let (dims, values) = tensor_values(&bytes, &parsed, writer);
        let row = &values[BIAS_DIM * dims[0] as usize..(BIAS_DIM + 1) * dims[0] as usize];
        assert!(row.iter().all(|&v| v == 0.0), "{writer}");
    }
    let (_, output) = tensor_values(&bytes, &parsed, "output.weight");
    for (id, row) in output.chunks(row_len).enumerate() {
        let byte_ok = id > 255 || matches!(id as u8, b'\t' | b'\n' | b' '..=b'~');
        assert_eq!(vocab.is_suppressed(id), !byte_ok, "token {id}");
        assert_eq!(row[BIAS_DIM] == SUPPRESS_WEIGHT, !byte_ok, "token {id}");
    }
    // 256 bytes minus tab, newline and the 95 printable ASCII characters.
    assert_eq!(vocab.suppressed.iter().filter(|&&s| s).count(), 256 - 97);
}

#[test]
fn same_seed_same_bytes_other_seed_other_weights() {
    let model = TinyModel::default();
    let a = tiny_gguf_bytes(&model).unwrap();
    assert_eq!(a, tiny_gguf_bytes(&model).unwrap());
    let other = tiny_gguf_bytes(&TinyModel { seed: 2, ..model }).unwrap();
    assert_eq!(a.len(), other.len());
    assert_ne!(a, other);
}

#[test]
fn write_matches_bytes() {
    let path = std::env::temp_dir().join(format!("tiny-gguf-test-{}.gguf", std::process::id()));
    let model = TinyModel::default();
    write_tiny_gguf(&path, &model).unwrap();
    let written = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(written, tiny_gguf_bytes(&model).unwrap());
    assert!(written.len() < 1024 * 1024, "{} bytes", written.len());
}

#[test]
fn vocab_has_fixed_special_ids_and_reachable_merges() {
    let vocab = Vocab::build();
    for (i, (text, kind)) in SPECIAL_TOKENS.iter().enumerate() {
        assert_eq!(vocab.tokens[TOKEN_ENDOFTEXT as usize + i], *text);
        assert_eq!(vocab.types[TOKEN_ENDOFTEXT as usize + i], *kind);
    }
    assert_eq!(vocab.tokens[TOKEN_IM_START as usize], "<|im_start|>");
    assert_eq!(vocab.tokens[TOKEN_IM_END as usize], "<|im_end|>");
    assert_eq!(vocab.tokens[TOKEN_TOOL_CALL as usize], "<tool_call>");
    assert_eq!(vocab.tokens[TOKEN_TOOL_CALL_END as usize], "</tool_call>");
    assert_eq!(vocab.tokens[usize::from(b'a')], "a");
    assert_eq!(vocab.tokens[usize::from(b' ')], "\u{120}");
    assert_eq!(vocab.tokens[usize::from(b'\n')], "\u{10A}");
    let unique: HashSet<&String> = vocab.tokens.iter().collect();
    assert_eq!(unique.len(), vocab.tokens.len(), "token texts unique");

    // Every merge joins two existing tokens into an existing token, and
    // every listed piece encodes to exactly one token.
    let ranks: HashMap<(String, String), usize> = vocab
        .merges
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let (l, r) = m.split_once(' ').unwrap();
            ((l.to_string(), r.to_string()), i)
        })
        .collect();
    for m in &vocab.merges {
        let (l, r) = m.split_once(' ').unwrap();
        assert!(unique.contains(&l.to_string()) && unique.contains(&r.to_string()));
        assert!(unique.contains(&format!("{l}{r}")), "{m}");
    }
    let table = byte_to_unicode();
    for piece in MERGED_PIECES {
        let symbols: String = piece.bytes().map(|b| table[b as usize]).collect();
        assert_eq!(bpe(&symbols, &ranks), vec![symbols], "{piece:?}");
    }
    assert!(vocab.merges.len() >= 24, "{} merges", vocab.merges.len());
}

#[test]
fn byte_mapping_is_a_bijection() {
    let table = byte_to_unicode();
    let unique: HashSet<char> = table.iter().copied().collect();
    assert_eq!(unique.len(), 256);
    assert!(!unique.contains(&char::REPLACEMENT_CHARACTER));
    assert_eq!(table[0], '\u{100}');
    assert_eq!(table[0xAD], '\u{143}');
}

#[test]
fn template_renders_the_same_with_or_without_trim_blocks() {
    // trim_blocks eats a newline right after `%}`; lstrip_blocks eats
    // indentation before `{%`. Neither may matter for this template.
    for (i, _) in TINY_CHAT_TEMPLATE.match_indices("%}") {
        let next = TINY_CHAT_TEMPLATE[i + 2..].chars().next();
        assert_ne!(next, Some('\n'), "newline after tag at {i}");
    }
    for (i, _) in TINY_CHAT_TEMPLATE.match_indices("{%") {
        let line_start = TINY_CHAT_TEMPLATE[..i].rfind('\n').map_or(0, |n| n + 1);
        let indent = &TINY_CHAT_TEMPLATE[line_start..i];
        assert!(
            indent.is_empty() || indent.contains(|c: char| !c.is_whitespace()),
            "indentation before tag at {i}"
        );
    }
    assert!(!TINY_CHAT_TEMPLATE.contains("{%-") && !TINY_CHAT_TEMPLATE.contains("-%}"));
}

#[test]
fn rejects_bad_shapes() {
    let bad = [
        TinyModel {
            heads: 3,
            ..TinyModel::default()
        },
        TinyModel {
            kv_heads: 3,
            ..TinyModel::default()
        },
        TinyModel {
            layers: 0,
            ..TinyModel::default()
        },
        TinyModel {
            embedding: 36,
            heads: 4,
            ..TinyModel::default()
        },
    ];
    for model in bad {
        let err = tiny_gguf_bytes(&model).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{model:?}");
    }
}
