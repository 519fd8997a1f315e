//! The host side of the git store replicas share (`server.git_store`): one bare
//! repository per conversation, made and written by wright alone. The agent's objects
//! reach it only as a pack made in the sandbox and checked here by `index-pack --strict`
//! (`AgentRepo::send_objects`); nothing of the agent's clone — its config, hooks,
//! attributes — is read by the git that runs here, which gets the hardening of every host
//! git (see `command`).

use super::GitError;
use super::Oid;
use super::UserRepo;
use std::path::Path;

impl UserRepo {
    /// The bare repository at `dir`, made (with its parents) when it is not one yet, of
    /// the object format of `like` (the repository whose commits it is to hold).
    pub fn bare_store(dir: &Path, like: &UserRepo) -> Result<UserRepo, GitError> {
        let store = UserRepo::at(dir);
        if dir.join("HEAD").is_file() && dir.join("objects").is_dir() {
            return Ok(store);
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| GitError::Spawn(format!("{}: {e}", dir.display())))?;
        let format = if like.empty_tree() == Oid::empty_tree_sha256() {
            "--object-format=sha256"
        } else {
            "--object-format=sha1"
        };
        store.run(&["init", "--bare", "--quiet", format])?;
        Ok(store)
    }

    /// The empty tree of this repository's object format: what a pack of a commit's whole
    /// history is sent from.
    pub fn empty_tree_id(&self) -> Oid {
        self.empty_tree()
    }

    /// Points `reference` (a full ref name of wright's) at `tip`, by value.
    pub fn set_reference(&self, reference: &str, tip: &Oid) -> Result<(), GitError> {
        self.run(&["update-ref", "--no-deref", reference, tip.as_str()])
            .map(drop)
    }

    /// The commit `reference` names, if it names one.
    pub fn reference(&self, reference: &str) -> Option<Oid> {
        let spec = format!("{reference}^{{commit}}");
        self.run(&["rev-parse", "--verify", "--quiet", &spec])
            .ok()
            .and_then(|printed| Oid::parse(&printed))
    }
}
