//! The configuration a session resolves from: the user's file, the repository's (its
//! content approved where it asks for more than the defaults), the environment and the
//! flags, merged in that order, with the routing rules applied before the profile.

use super::console::console;
use super::CommonArgs;
use super::RepoConfigSource;
use super::RepoFile;
use anyhow::bail;
use anyhow::Result;
use std::path::Path;
use wright_config::consent;
use wright_config::consent::Consent;
use wright_config::Config;

/// The user's file, the repository's (`source`), the environment and `args`, merged.
pub fn merged(args: &CommonArgs, source: Option<&RepoConfigSource>) -> Result<Config> {
    Ok(merged_routed(args, source, None)?.0)
}

/// `merged`, with the routing rules of `command` applied before the profile is resolved
/// (the repository's files counted only when the large-repository rule is set), and the
/// route taken.
pub fn merged_routed(
    args: &CommonArgs,
    source: Option<&RepoConfigSource>,
    command: Option<wright_config::RouteCommand>,
) -> Result<(Config, Option<wright_protocol::Route>)> {
    let mut config = Config::default();
    if let Some(path) = Config::user_file() {
        config = config.with_user_file(&path)?;
    }
    if let Some(file) = source.map(RepoConfigSource::read).transpose()?.flatten() {
        // In a directory worked in directly, the agent can have written the file itself:
        // nothing of it counts before the user approved its content.
        let agents_to_write = matches!(source, Some(RepoConfigSource::Directory(_)));
        let asking = match Config::repo_file_asks_for(&file.text, &file.name)? {
            Some(keys) => Some(Asking::Weakens(keys)),
            None if agents_to_write => {
                let keys = Config::repo_file_keys(&file.text, &file.name)?;
                (!keys.is_empty()).then(|| Asking::AgentsToWrite(keys.join(", ")))
            }
            None => None,
        };
        let asks = asking.is_some();
        let approved = match &asking {
            Some(asking) => approve(args, source.map(RepoConfigSource::key), &file, asking)?,
            None => false,
        };
        if asks && !approved && agents_to_write {
            bail!(
                "{} is in a directory the agent works in directly, so wright reads it only once you have approved its content: `wright allow repo-config` shows it and approves it, --allow-repo-config takes it for one run",
                file.name
            );
        }
        config = config.with_repo_file(&file.text, &file.name, approved)?;
    }
    config = config.with_environment(|name| std::env::var(name).ok());
    for (key, value, flag) in args.flags() {
        config = config.with_flag(key, value, flag)?;
    }
    let route = match command {
        Some(command) => {
            let files = config
                .large_repo_files()
                .and_then(|enough| source.and_then(|s| s.file_count(enough)));
            config.route(Some(command), files)
        }
        None => None,
    };
    Ok((config.resolve_profile()?, route))
}

/// Why a repository's file needs the user's approval, with the keys that need it.
enum Asking {
    /// These keys ask for more than the defaults.
    Weakens(String),
    /// The agent can write the file (a directory worked in directly): every key it sets.
    AgentsToWrite(String),
}

/// Whether the repository's file that asks for more than the defaults may be taken.
fn approve(
    args: &CommonArgs,
    repo: Option<&Path>,
    file: &RepoFile,
    asking: &Asking,
) -> Result<bool> {
    let Some(repo) = repo else {
        return Ok(false);
    };
    let hash = consent::sha256(file.text.as_bytes());
    let mut record = Consent::open(&Consent::default_path())?;
    if args.allow_repo_config || record.allows(consent::Kind::RepoConfig, repo, &hash) {
        return Ok(true);
    }
    if !console().can_ask(args.json) {
        return Ok(false);
    }
    let why = match asking {
        Asking::Weakens(keys) => {
            format!("asks for {keys}, which a repository may only set with your approval")
        }
        Asking::AgentsToWrite(keys) => format!(
            "sets {keys}, and is in a directory the agent works in directly, so it counts only with your approval"
        ),
    };
    console().tell(&format!(
        "{} {why}:\n\n{}\n",
        file.name,
        file.text.trim_end()
    ));
    if !console().yes("Allow this file, with exactly this content, for this repository?") {
        bail!(
            "{} was not approved; remove what it asks for, or approve it later with `wright allow repo-config`",
            file.name
        );
    }
    record.allow(consent::Kind::RepoConfig, repo, &hash)?;
    Ok(true)
}
