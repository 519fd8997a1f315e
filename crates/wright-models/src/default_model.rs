//! Which stored model runs when the user named none and no server answers: the
//! catalog's default model if it is stored, else the only model stored. With several and
//! no default, none is picked: guessing among them would run a model nobody chose.

use crate::error::StoreError;
use crate::store::Store;
use crate::store::StoredModel;

/// The catalog model wright runs, and offers to pull, when nothing else is configured:
/// small enough for a laptop CPU, and the smallest that calls tools well.
pub const DEFAULT_MODEL: &str = "qwen2.5-coder-1.5b";

/// What the store holds for a run that named no model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefaultModel {
    /// This one runs.
    Found(StoredModel),
    /// Nothing is stored.
    Empty,
    /// Several are stored, the default not among them: the user must name one.
    Several(Vec<StoredModel>),
}

impl Store {
    /// The model to run when none is named: the catalog model `default` if it is stored
    /// (under any name, recognised by its digest), else the only stored model.
    pub fn default_model(&self, default: &str) -> Result<DefaultModel, StoreError> {
        let stored = self.list()?;
        let named = match self.resolve(default) {
            Ok(path) => stored.iter().find(|model| model.path == path).cloned(),
            Err(_) => None,
        };
        if let Some(model) = named {
            return Ok(DefaultModel::Found(model));
        }
        let mut stored = stored;
        if stored.len() > 1 {
            return Ok(DefaultModel::Several(stored));
        }
        Ok(stored
            .pop()
            .map_or(DefaultModel::Empty, DefaultModel::Found))
    }
}
