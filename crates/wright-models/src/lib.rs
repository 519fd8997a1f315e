//! The store of GGUF model files for wright's embedded inference engine.
//!
//! A directory (`WRIGHT_MODELS_DIR`, else `$XDG_CACHE_HOME/wright/models`, else
//! `~/.cache/wright/models`) of `.gguf` files: the [`catalog`] of models wright knows by
//! name, each pinned to one Hugging Face file with its size and sha256; [`Store`] to list,
//! import ([`Store::add`]), remove and find ([`Store::resolve`]) them; [`pull`] to download
//! one, resumably, with a progress callback.
//!
//! What it guarantees: a `.gguf` name in the store is always a whole file — imports and
//! downloads are written under other names and renamed into place — and a catalog model
//! is kept only when its sha256 is the catalog's. It does not load models, and it never
//! prints: the front end draws the progress and says the errors.

pub mod catalog;
pub mod digest;
pub mod error;
pub mod gguf;
pub mod location;
pub mod pull;

mod add;
mod default_model;
mod store;

pub use add::AddOutcome;
pub use add::Added;
pub use add::OnConflict;
pub use catalog::CatalogEntry;
pub use catalog::CATALOG;
pub use default_model::DefaultModel;
pub use default_model::DEFAULT_MODEL;
pub use error::NotGguf;
pub use error::StoreError;
pub use pull::error::PullError;
pub use pull::error::Unreachable;
pub use pull::progress::Progress;
pub use pull::progress::Stage;
pub use pull::pull;
pub use pull::Checksum;
pub use pull::Pulled;
pub use pull::Puller;
pub use store::CatalogMatch;
pub use store::Removed;
pub use store::Store;
pub use store::StoredModel;
