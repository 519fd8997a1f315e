//! The engine as the rest of wright sees it: a GGUF file loaded once per process, its chat
//! template compiled, its thread started; then requests in the OpenAI shape answered as a
//! server would answer them (`wright_llm::in_process::InProcessModel`), every reply with
//! tools held by a grammar to one valid call of one of them.

use crate::error::EngineError;
use crate::grammar::tool_call_grammar;
use crate::grammar::CallFormat;
use crate::grammar::Limits;
use crate::machine::physical_cores;
use crate::neutralize::Neutralizer;
use crate::reply;
use crate::template::ChatTemplate;
use crate::worker;
use crate::worker::Event;
use crate::worker::Job;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::thread::JoinHandle;
use wright_llm::in_process::InProcessModel;
use wright_llm::in_process::Reply;
use wright_llm::probe::ContextWindow;
use wright_llm::probe::ServerInfo;
use wright_llm::probe::ServerKind;
use wright_llm::LlmError;
use wright_llm::Response;
use wright_llm::StreamDelta;
use wright_llm::TokenUsage;

/// How the engine is to run a model.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub model_file: PathBuf,
    /// The window of each conversation; default: the model's trained length, at most
    /// `DEFAULT_WINDOW`.
    pub window: Option<u32>,
    /// Threads; default: the physical cores.
    pub threads: Option<u32>,
    /// Conversations whose caches are kept at once (a server runs several).
    pub conversations: usize,
    /// Layers offloaded to a GPU back end, when one is built in.
    pub gpu_layers: u32,
}

impl EngineConfig {
    pub fn new(model_file: impl Into<PathBuf>) -> Self {
        Self {
            model_file: model_file.into(),
            window: None,
            threads: None,
            conversations: 1,
            gpu_layers: 0,
        }
    }
}

/// The window when nobody chose one: room for real agent work, without reserving a
/// 128k-token cache on a laptop.
pub const DEFAULT_WINDOW: u32 = 32_768;

/// Longest reply when the request sets no cap.
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// What is known about the loaded model.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineInfo {
    /// The model's name as wright shows it (its file name without `.gguf`).
    pub name: String,
    pub model_file: PathBuf,
    pub file_bytes: u64,
    pub parameters: u64,
    pub trained_window: u32,
    pub window: u32,
    pub threads: u32,
    pub layers: u32,
    pub cache_bytes_per_token: u64,
    /// The GPU back ends compiled in (empty: CPU only).
    pub gpu_backends: Vec<&'static str>,
    pub call_format: CallFormat,
}

impl EngineInfo {
    /// Memory one conversation's cache takes at the chosen window.
    pub fn cache_bytes(&self) -> u64 {
        self.cache_bytes_per_token * u64::from(self.window)
    }
}

/// A loaded model and its thread.
pub struct Engine {
    info: EngineInfo,
    template: ChatTemplate,
    neutralizer: Neutralizer,
    jobs: Mutex<Option<Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    calls: AtomicU64,
    /// What the engine's thread has done since it started, every request together.
    counters: Arc<worker::Counters>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("info", &self.info).finish()
    }
}

/// The reasoning room of a JSON-framed call; a Hermes-framed call gets none (measured: the
/// 1.5B wrote a code block there, was cut at the bound, and called the wrong tool 3 times
/// in 6).
const JSON_REASONING_CHARS: u32 = 400;

fn limits(format: CallFormat) -> Limits {
    Limits {
        reasoning_chars: match format {
            CallFormat::Hermes => 0,
            CallFormat::Json => JSON_REASONING_CHARS,
        },
        string_chars: 8000,
        array_items: 64,
        depth: 8,
    }
}

impl Engine {
    /// Loads `config.model_file` and starts the engine's thread.
    pub fn load(config: &EngineConfig) -> Result<Arc<Engine>, EngineError> {
        let path = config.model_file.clone();
        let file_bytes = std::fs::metadata(&path)
            .map_err(|err| EngineError::ModelFile {
                path: path.clone(),
                reason: err.to_string(),
            })?
            .len();
        let threads = config.threads.unwrap_or_else(physical_cores).max(1);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (jobs_tx, jobs_rx) = std::sync::mpsc::channel::<Job>();
        let requested = config.clone();
        let counters = Arc::new(worker::Counters::default());
        let counted = counters.clone();
        let thread = std::thread::Builder::new()
            .name("wright-engine".into())
            .spawn(move || {
                let loaded = load_model(&requested, threads, file_bytes, counted);
                match loaded {
                    Err(err) => {
                        let _ = ready_tx.send(Err(err));
                    }
                    Ok((backend, model, loaded)) => {
                        let settings = loaded.settings.clone();
                        let _ = ready_tx.send(Ok(loaded));
                        worker::run(backend, &model, &settings, &jobs_rx);
                    }
                }
            })
            .map_err(|err| {
                EngineError::Llama(format!("cannot start the engine's thread: {err}"))
            })?;
        let loaded = ready_rx.recv().map_err(|_| EngineError::Stopped)??;
        let template = ChatTemplate::new(&loaded.template, &loaded.bos, &loaded.eos)?;
        Ok(Arc::new(Engine {
            info: loaded.info,
            template,
            neutralizer: Neutralizer::new(loaded.special_texts),
            jobs: Mutex::new(Some(jobs_tx)),
            thread: Mutex::new(Some(thread)),
            calls: AtomicU64::new(0),
            counters,
        }))
    }

    /// Tokens generated since the engine started, every request together (a cancelled
    /// request's count stops growing within a token).
    pub fn generated_tokens(&self) -> u64 {
        self.counters.generated.load(Ordering::Relaxed)
    }

    /// Prompt tokens read since the engine started, every request together (a cancelled
    /// request's count stops growing within one prefill turn).
    pub fn prefilled_tokens(&self) -> u64 {
        self.counters.prefilled.load(Ordering::Relaxed)
    }

    pub fn info(&self) -> &EngineInfo {
        &self.info
    }

    /// Stops the thread after the running requests, saving the caches that were asked
    /// for. Later requests are refused.
    pub fn stop(&self) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.take();
        }
        let thread = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }

    fn sender(&self) -> Option<Sender<Job>> {
        self.jobs.lock().ok().and_then(|jobs| jobs.clone())
    }

    /// Answers one request body; `state_file`: where this conversation's cache is saved
    /// when the engine stops, and read back from when no slot holds it.
    pub async fn answer(
        &self,
        body: &[u8],
        state_file: Option<&Path>,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Response, EngineError> {
        let request = crate::request::parse(body)?;
        let callable = request.callable_tools();
        let messages = self.neutralizer.messages(request.messages);
        let prompt = self.template.render(&messages, &request.tools)?;
        let format = (!request.tools.is_empty()).then_some(self.info.call_format);
        let grammar = match format {
            Some(format) => Some(
                tool_call_grammar(&callable, format, &limits(format))
                    .map_err(|err| EngineError::Grammar(err.to_string()))?,
            ),
            None => None,
        };
        let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
        let job = Job {
            prompt,
            grammar,
            temperature: request.temperature,
            max_tokens: request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).max(1),
            seed: request.seed.unwrap_or_else(random_seed),
            state_file: state_file.map(Path::to_path_buf),
            events: events_tx,
        };
        self.sender()
            .ok_or(EngineError::Stopped)?
            .send(job)
            .map_err(|_| EngineError::Stopped)?;
        let started = std::time::Instant::now();
        let mut first: Option<std::time::Instant> = None;
        while let Some(event) = events.recv().await {
            match event {
                Event::Progress(progress) => on_delta(StreamDelta::PromptProgress(progress)),
                Event::Text(text) => {
                    first.get_or_insert_with(std::time::Instant::now);
                    on_delta(match format {
                        Some(_) => StreamDelta::ToolCallArguments(text),
                        None => StreamDelta::Text(text),
                    });
                }
                Event::Done(result) => {
                    let finished = result?;
                    let end = std::time::Instant::now();
                    let first = first.unwrap_or(end);
                    let call = self.calls.fetch_add(1, Ordering::Relaxed);
                    let mut response = reply::read(
                        &finished.text,
                        format,
                        finished.ending,
                        &format!("call_{call}"),
                    );
                    response.usage = Some(TokenUsage {
                        prompt_tokens: finished.prompt_tokens as u64,
                        completion_tokens: finished.generated_tokens as u64,
                        cached_tokens: Some(finished.cached_tokens as u64),
                        prompt_ms: Some(finished.prompt_ms),
                        predicted_ms: Some(finished.predicted_ms),
                    });
                    response.first_byte_ms = first.duration_since(started).as_secs_f64() * 1000.0;
                    response.generation_ms = end.duration_since(first).as_secs_f64() * 1000.0;
                    return Ok(response);
                }
            }
        }
        Err(EngineError::Stopped)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One conversation on a shared engine: its cache saved in `state_file` when the engine
/// stops and read back when the conversation resumes.
pub struct Conversation {
    pub engine: Arc<Engine>,
    pub state_file: Option<PathBuf>,
}

impl InProcessModel for Conversation {
    fn complete<'a>(
        &'a self,
        body: &'a [u8],
        on_delta: &'a mut (dyn FnMut(StreamDelta) + Send),
    ) -> Reply<'a> {
        Box::pin(async move {
            self.engine
                .answer(body, self.state_file.as_deref(), on_delta)
                .await
                .map_err(|err| LlmError::Engine {
                    model: self.engine.info.name.clone(),
                    message: err.to_string(),
                })
        })
    }

    fn info(&self) -> ServerInfo {
        self.engine.server_info()
    }

    fn for_conversation(&self, dir: &Path) -> Option<Arc<dyn InProcessModel>> {
        Some(Arc::new(Conversation {
            engine: self.engine.clone(),
            state_file: Some(dir.join(self.engine.state_file_name())),
        }))
    }
}

impl Engine {
    /// The name of a conversation's saved cache for this model file: its name, size and
    /// modification time, so a cache is never read into another model (or a changed file).
    pub fn state_file_name(&self) -> String {
        let modified = std::fs::metadata(&self.info.model_file)
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |since| since.as_secs());
        let stem: String = self
            .info
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!(
            "engine-cache-{stem}-{}-{modified}.bin",
            self.info.file_bytes
        )
    }

    /// What a probe of a server would learn.
    pub fn server_info(&self) -> ServerInfo {
        ServerInfo {
            kind: ServerKind::Embedded,
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
            models: vec![self.info.name.clone()],
            context: Some(ContextWindow {
                tokens: u64::from(self.info.window),
                model_max: Some(u64::from(self.info.trained_window)),
                source: "the embedded engine's window".into(),
            }),
            processor: Some(processor(&self.info)),
            allocated_context: Some(u64::from(self.info.window)),
        }
    }
}

fn processor(info: &EngineInfo) -> String {
    if info.gpu_backends.is_empty() {
        format!("CPU, {} threads", info.threads)
    } else {
        format!(
            "{} built in, {} threads",
            info.gpu_backends.join(", "),
            info.threads
        )
    }
}

fn random_seed() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
}

struct Loaded {
    info: EngineInfo,
    settings: worker::Settings,
    template: String,
    bos: String,
    eos: String,
    special_texts: Vec<String>,
}

/// The GPU back ends this build has (cargo features).
pub fn gpu_backends() -> Vec<&'static str> {
    let mut backends = Vec::new();
    if cfg!(feature = "cuda") {
        backends.push("CUDA");
    }
    if cfg!(feature = "metal") {
        backends.push("Metal");
    }
    if cfg!(feature = "vulkan") {
        backends.push("Vulkan");
    }
    backends
}

/// One llama.cpp backend per process, shared by every engine in it and never freed:
/// llama.cpp may be initialised only once at a time, and a server runs several models.
fn backend() -> Result<&'static LlamaBackend, EngineError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    let started = BACKEND.get_or_init(|| {
        let mut backend = LlamaBackend::init().map_err(|err| err.to_string())?;
        if std::env::var_os("WRIGHT_ENGINE_LOG").is_none() {
            backend.void_logs();
        }
        Ok(backend)
    });
    started
        .as_ref()
        .map_err(|err| EngineError::Llama(format!("cannot start: {err}")))
}

fn load_model(
    config: &EngineConfig,
    threads: u32,
    file_bytes: u64,
    counters: Arc<worker::Counters>,
) -> Result<(&'static LlamaBackend, LlamaModel, Loaded), EngineError> {
    let backend = backend()?;
    let path = &config.model_file;
    check_magic(path)?;
    let params = LlamaModelParams::default().with_n_gpu_layers(config.gpu_layers);
    let model = LlamaModel::load_from_file(backend, path, &params)
        .map_err(|_| EngineError::Load { path: path.clone() })?;
    let template = model
        .meta_val_str("tokenizer.chat_template")
        .map_err(|_| EngineError::NoTemplate)?;
    let vocab = model.vocab();
    let piece =
        |token| String::from_utf8_lossy(&vocab.token_to_piece(token, true, None)).into_owned();
    let bos = piece(vocab.bos());
    let eos = piece(vocab.eos());
    let special_texts = vocab
        .tokens()
        .filter(|&token| vocab.is_control(token) || is_user_defined(&vocab, token))
        .map(piece)
        .filter(|text| text.len() > 1)
        .collect();
    let trained_window = model.n_ctx_train();
    let window = config
        .window
        .unwrap_or(DEFAULT_WINDOW)
        .min(trained_window.max(1))
        .max(256);
    let heads = model.n_head().max(1);
    let kv_width =
        u64::from(model.n_embd().unsigned_abs()) * u64::from(model.n_head_kv()) / u64::from(heads);
    // Keys and values, f16, every layer.
    let cache_bytes_per_token = 2 * 2 * u64::from(model.n_layer()) * kv_width;
    let call_format = if template.contains("<tool_call>") {
        CallFormat::Hermes
    } else {
        CallFormat::Json
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".gguf").to_string())
        .unwrap_or_else(|| "model".into());
    let info = EngineInfo {
        name,
        model_file: path.clone(),
        file_bytes,
        parameters: model.n_params(),
        trained_window,
        window,
        threads,
        layers: model.n_layer(),
        cache_bytes_per_token,
        gpu_backends: gpu_backends(),
        call_format,
    };
    let settings = worker::Settings {
        window,
        threads,
        batch: 512,
        max_slots: config.conversations.max(1),
        cache_bytes_per_token,
        reserve_bytes: 256 << 20,
        counters,
    };
    Ok((
        backend,
        model,
        Loaded {
            info,
            settings,
            template,
            bos,
            eos,
            special_texts,
        },
    ))
}

fn is_user_defined(
    vocab: &llama_cpp_2::vocab::LlamaVocab<'_>,
    token: llama_cpp_2::token::LlamaToken,
) -> bool {
    vocab
        .attr(token)
        .contains(llama_cpp_2::token_type::LlamaTokenAttr::UserDefined)
}

/// A file that is not GGUF gets a sentence, not llama.cpp's abort.
fn check_magic(path: &Path) -> Result<(), EngineError> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut magic))
        .map_err(|err| EngineError::ModelFile {
            path: path.to_path_buf(),
            reason: err.to_string(),
        })?;
    if &magic != b"GGUF" {
        return Err(EngineError::ModelFile {
            path: path.to_path_buf(),
            reason: "it is not a GGUF file (it does not start with GGUF)".into(),
        });
    }
    Ok(())
}
