//! The embedded engine as a model choice: a GGUF file (or the name of a model in wright's
//! store) loaded once per process and shared by every conversation on it, wrapped in a
//! `Client` like any server's.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::Weak;
use wright_engine::Conversation;
use wright_engine::Engine;
use wright_engine::EngineConfig;
use wright_llm::Client;
use wright_llm::ClientConfig;
use wright_llm::LlmError;
use wright_models::DefaultModel;

/// The engines loaded in this process, by model file: one model is loaded once.
fn loaded() -> &'static Mutex<HashMap<PathBuf, Weak<Engine>>> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Weak<Engine>>>> = OnceLock::new();
    LOADED.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Conversations an engine loaded from now on runs side by side (its slots): 1 for a
/// run (a side request parks the conversation's cache), more for a server.
static CONVERSATIONS: AtomicUsize = AtomicUsize::new(1);

/// Sets how many conversations an engine loaded after this runs side by side, each
/// with a cache of its own (the server: its runs at once, plus one for side requests).
pub fn set_conversations(count: usize) {
    CONVERSATIONS.store(count.max(1), Ordering::Relaxed);
}

/// The engine for `file` (a path, or a stored model's name), loaded on first use.
pub fn engine(file: &str, window: Option<u64>) -> Result<Arc<Engine>, LlmError> {
    let path = resolve(file)?;
    let failed = |message: String| LlmError::Engine {
        model: file.to_string(),
        message,
    };
    let mut loaded = loaded()
        .lock()
        .map_err(|_| failed("the engine registry is poisoned".into()))?;
    if let Some(engine) = loaded.get(&path).and_then(Weak::upgrade) {
        return Ok(engine);
    }
    let mut config = EngineConfig::new(&path);
    config.window = window.and_then(|w| u32::try_from(w).ok());
    config.conversations = CONVERSATIONS.load(Ordering::Relaxed);
    let engine = Engine::load(&config).map_err(|err| failed(err.to_string()))?;
    loaded.insert(path, Arc::downgrade(&engine));
    Ok(engine)
}

/// The engine loaded in this process whose model is called `name` (`wright doctor`
/// reports on it).
pub fn loaded_engine(name: &str) -> Option<Arc<Engine>> {
    let loaded = loaded().lock().ok()?;
    loaded
        .values()
        .filter_map(Weak::upgrade)
        .find(|engine| engine.info().name == name)
}

fn resolve(file: &str) -> Result<PathBuf, LlmError> {
    let direct = PathBuf::from(file);
    if direct.is_file() {
        return Ok(direct);
    }
    wright_models::Store::default_location()
        .and_then(|store| store.resolve(file))
        .map_err(|err| LlmError::Engine {
            model: file.to_string(),
            message: err.to_string(),
        })
}

/// The stored model to run when nothing is configured and no server answered (`tried`:
/// where discovery looked): the catalog's default, else the only one stored.
pub fn stored_default(tried: String) -> Result<String, LlmError> {
    let failed = |message: String| LlmError::Engine {
        model: wright_models::DEFAULT_MODEL.to_string(),
        message,
    };
    let dir = wright_models::location::models_dir()
        .ok_or_else(|| failed(wright_models::StoreError::NoLocation.to_string()))?;
    let nothing = || LlmError::NothingToRun {
        tried: tried.clone(),
        store: dir.display().to_string(),
    };
    // Only looked at: a run that finds nothing does not leave an empty store behind.
    if !dir.is_dir() {
        return Err(nothing());
    }
    let store = wright_models::Store::open(&dir).map_err(|err| failed(err.to_string()))?;
    match store.default_model(wright_models::DEFAULT_MODEL) {
        Ok(DefaultModel::Found(model)) => Ok(model.path.display().to_string()),
        Ok(DefaultModel::Several(models)) => Err(LlmError::SeveralStoredModels {
            tried,
            models: models.into_iter().map(|model| model.name).collect(),
        }),
        Ok(DefaultModel::Empty) => Err(nothing()),
        Err(err) => Err(failed(err.to_string())),
    }
}

/// A client whose model is `file`, run in this process.
pub fn client(
    file: &str,
    window: Option<u64>,
    mut config: ClientConfig,
) -> Result<Client, LlmError> {
    let engine = engine(file, window)?;
    config.model = engine.info().name.clone();
    let conversation = Conversation {
        engine,
        state_file: None,
    };
    Ok(Client::in_process(config, Arc::new(conversation)))
}
