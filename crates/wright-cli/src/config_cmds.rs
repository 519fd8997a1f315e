//! `wright config show|path`, `wright allow …` and `wright deny …`: the merged
//! configuration with where each value came from, the files read, and the record of what
//! the user allowed.

use crate::settings::merged;
use crate::settings::CommonArgs;
use crate::settings::RepoConfigSource;
use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use clap::Args;
use clap::Subcommand;
use std::path::Path;
use std::path::PathBuf;
use wright_config::consent;
use wright_config::consent::Consent;
use wright_config::Config;
use wright_config::ConfigError;
use wright_config::Settings;

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Print the merged configuration, each value with where it came from.
    Show {
        /// The repository (or directory) whose configuration to merge in.
        #[arg(short = 'C', long, default_value = ".")]
        workspace: PathBuf,
        #[command(flatten)]
        common: Box<CommonArgs>,
    },
    /// List the files wright reads, and the record of what you allowed.
    Path {
        /// The repository (or directory) whose configuration file to list.
        #[arg(short = 'C', long, default_value = ".")]
        workspace: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum Grantable {
    /// The repository's .wright/config.toml, with exactly its content at HEAD.
    RepoConfig {
        /// The repository whose .wright/config.toml this is about.
        #[arg(short = 'C', long, default_value = ".")]
        workspace: PathBuf,
    },
    /// The repository's hooks and setup script (.wright/hooks.json,
    /// .openhands/hooks.json, .claude/settings.json, .wright/setup.sh or
    /// .openhands/setup.sh), with exactly their content at HEAD: they run in the sandbox.
    RepoHooks {
        /// The repository whose hooks this is about.
        #[arg(short = 'C', long, default_value = ".")]
        workspace: PathBuf,
    },
    /// The repository's MCP servers (.wright/mcp.json, .mcp.json), with exactly their
    /// content at HEAD: their programs run in the sandbox.
    RepoMcp {
        /// The repository whose MCP servers this is about.
        #[arg(short = 'C', long, default_value = ".")]
        workspace: PathBuf,
    },
    /// The repository's .wright/automations.toml, with exactly its content on the
    /// branch `wright serve` reads it from (server.automations_branch, default main).
    RepoAutomations {
        /// The repository whose automations these are.
        #[arg(short = 'C', long, default_value = ".")]
        workspace: PathBuf,
    },
    /// Sending the repository's code to a model server not on this machine.
    Egress {
        /// The server: its URL, or HOST:PORT.
        server: String,
        /// The repository whose code this is about.
        #[arg(short = 'C', long, default_value = ".")]
        workspace: PathBuf,
    },
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AllowArgs {
    /// List everything allowed.
    #[arg(long)]
    list: bool,
    #[command(subcommand)]
    what: Option<Grantable>,
}

/// The repository configuration of `workspace`, read as a new conversation would.
pub fn source_of(workspace: &Path) -> Result<RepoConfigSource> {
    let dir = workspace
        .canonicalize()
        .with_context(|| format!("{} must be an existing directory", workspace.display()))?;
    Ok(wright_session::working_copy::StartPoint::find(
        &dir,
        &crate::drive::Terminal { json: false },
    )
    .config_source())
}

pub fn config(command: ConfigCommand) -> Result<()> {
    match command {
        ConfigCommand::Show { workspace, common } => show(&workspace, &common),
        ConfigCommand::Path { workspace } => path(&workspace),
    }
}

fn show(workspace: &Path, common: &CommonArgs) -> Result<()> {
    let source = source_of(workspace)?;
    // Shown, never asked about here.
    let quiet = CommonArgs {
        json: true,
        ..common.clone()
    };
    let config = match merged(&quiet, Some(&source)) {
        Ok(config) => config,
        Err(err) => match err.downcast_ref::<ConfigError>() {
            Some(ConfigError::NeedsApproval { .. }) => {
                say!("# not used: {err}\n");
                merged(&quiet, None)?
            }
            _ => return Err(err),
        },
    };
    let full = config.clone().with_defaults();
    let width = full.entries().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (key, sourced) in full.entries() {
        let value = if key == "api_key" {
            "\"(hidden)\"".to_string()
        } else {
            sourced.value.to_string()
        };
        say!("{key:width$} = {value}  # {}", sourced.origin);
    }
    let settings =
        Settings::from_config(&config, Some(source.key()), |name| std::env::var(name).ok());
    match settings {
        Ok(settings) => say!(
            "\n# for {}: egress {} ({}){}",
            source.key().display(),
            settings.egress.as_str(),
            settings.egress_origin,
            settings
                .profile
                .map(|p| format!(", profile {p}"))
                .unwrap_or_default()
        ),
        Err(err) => say!("\n# cannot be used as it is: {err}"),
    }
    Ok(())
}

fn path(workspace: &Path) -> Result<()> {
    let source = source_of(workspace)?;
    let exists = |path: &Path| if path.exists() { "" } else { " (not there)" };
    match Config::user_file() {
        Some(user) => say!("your file        {}{}", user.display(), exists(&user)),
        None => say!("your file        none ($HOME is not set)"),
    }
    match &source {
        RepoConfigSource::Commit { repo, commit } => say!(
            "repository file  {} in commit {commit} (what a conversation starting now reads)",
            repo.top().join(wright_config::REPO_FILE).display()
        ),
        RepoConfigSource::Directory(dir) => say!(
            "repository file  {}",
            dir.join(wright_config::REPO_FILE).display()
        ),
        RepoConfigSource::Nothing { top } => {
            say!("repository file  none: {} has no commit yet", top.display())
        }
    }
    let record = Consent::default_path();
    say!("what you allowed {}{}", record.display(), exists(&record));
    Ok(())
}

pub fn allow(args: AllowArgs) -> Result<()> {
    let mut record = Consent::open(&Consent::default_path())?;
    let Some(what) = args.what else {
        if record.grants().is_empty() {
            say!("nothing allowed yet");
        }
        for grant in record.grants() {
            say!(
                "{:12} {}  {}",
                grant.kind.as_str(),
                grant.repo.display(),
                grant.subject
            );
        }
        return Ok(());
    };
    match what {
        Grantable::RepoConfig { workspace } => {
            let source = source_of(&workspace)?;
            let Some(file) = source.read()? else {
                bail!(
                    "{} has no {} to allow",
                    source.key().display(),
                    wright_config::REPO_FILE
                );
            };
            // Checked as a run would (unknown keys, keys only your file may set).
            Config::repo_file_needs_approval(&file.text, &file.name)?;
            say!("{}:\n\n{}\n", file.name, file.text.trim_end());
            let hash = consent::sha256(file.text.as_bytes());
            record.allow(consent::Kind::RepoConfig, source.key(), &hash)?;
            say!(
                "allowed for {}, with exactly this content; a change to it asks again",
                source.key().display()
            );
        }
        Grantable::RepoHooks { workspace } => {
            let source = source_of(&workspace)?;
            let listed = wright_session::repo_config::RepoFiles::list(
                &source,
                &wright_session::hooks::paths(),
            );
            let files = wright_session::hooks::repo_files(&listed);
            if files.is_empty() {
                bail!(
                    "{} has no hooks or setup script to allow",
                    source.key().display()
                );
            }
            for (path, text) in &files {
                say!("{path}:\n\n{}\n", text.trim_end());
            }
            let hash = wright_session::hooks::subject(&files);
            record.allow(consent::Kind::RepoHooks, source.key(), &hash)?;
            say!(
                "allowed for {} (they run in the sandbox), with exactly this content; a change to them asks again",
                source.key().display()
            );
        }
        Grantable::RepoMcp { workspace } => {
            let source = source_of(&workspace)?;
            let listed = wright_session::repo_config::RepoFiles::list(
                &source,
                &wright_session::mcp::paths(),
            );
            let files = wright_session::mcp::repo_files(&listed);
            if files.is_empty() {
                bail!("{} has no MCP servers to allow", source.key().display());
            }
            for (path, text) in &files {
                say!("{path}:\n\n{}\n", text.trim_end());
            }
            let hash = wright_session::mcp::subject(&files);
            record.allow(consent::Kind::RepoMcp, source.key(), &hash)?;
            say!(
                "allowed for {} (their programs run in the sandbox), with exactly this content; a change to them asks again",
                source.key().display()
            );
        }
        Grantable::RepoAutomations { workspace } => {
            let branch = automations_branch(&workspace)?;
            let Some(file) = crate::repo_automations::RepoFile::read(&workspace, &branch)? else {
                bail!(
                    "the branch {branch} of {} has no {}",
                    workspace.display(),
                    wright_config::automations::REPO_AUTOMATIONS_FILE
                );
            };
            // Checked as `wright serve` would, before it is allowed.
            wright_config::automations::parse(&file.text, &file.name())?;
            say!("{}:\n\n{}\n", file.name(), file.text.trim_end());
            record.allow(consent::Kind::RepoAutomations, &file.top, &file.hash)?;
            say!(
                "allowed for {} (sha256 {}), with exactly this content on {branch}; a change to it waits for you again",
                file.top.display(),
                file.hash
            );
        }
        Grantable::Egress { server, workspace } => {
            let source = source_of(&workspace)?;
            let host = host_of(&server)?;
            record.allow(consent::Kind::Egress, source.key(), &host)?;
            say!("the code of {} may go to {host}", source.key().display());
        }
    }
    Ok(())
}

/// The branch `wright serve` reads `workspace`'s automations from: the user's
/// `server.automations_branch` when `server.automations_repository` is this repository,
/// else `main`.
fn automations_branch(workspace: &Path) -> Result<String> {
    let top = workspace.canonicalize()?;
    let configured = match Config::user_file() {
        Some(path) => wright_config::server::automations_repository(&path)?,
        None => None,
    };
    Ok(match configured {
        Some((repo, branch)) if repo.canonicalize().ok().as_deref() == Some(top.as_path()) => {
            branch
        }
        _ => "main".to_string(),
    })
}

pub fn deny(what: Grantable) -> Result<()> {
    let mut record = Consent::open(&Consent::default_path())?;
    let (kind, workspace, subject) = match what {
        Grantable::RepoConfig { workspace } => (consent::Kind::RepoConfig, workspace, None),
        Grantable::RepoHooks { workspace } => (consent::Kind::RepoHooks, workspace, None),
        Grantable::RepoMcp { workspace } => (consent::Kind::RepoMcp, workspace, None),
        Grantable::RepoAutomations { workspace } => {
            let top = workspace.canonicalize().with_context(|| {
                format!("{} must be an existing directory", workspace.display())
            })?;
            let removed = record.remove(consent::Kind::RepoAutomations, &top, None)?;
            say!(
                "{}",
                if removed == 0 {
                    format!("nothing of that kind was allowed for {}", top.display())
                } else {
                    format!("the automations of {} wait for you again", top.display())
                }
            );
            return Ok(());
        }
        Grantable::Egress { server, workspace } => {
            (consent::Kind::Egress, workspace, Some(host_of(&server)?))
        }
    };
    let source = source_of(&workspace)?;
    let removed = record.remove(kind, source.key(), subject.as_deref())?;
    if removed == 0 {
        say!(
            "nothing of that kind was allowed for {}",
            source.key().display()
        );
    } else {
        say!(
            "no longer allowed for {}: {}",
            source.key().display(),
            subject.unwrap_or_else(|| kind.as_str().to_string())
        );
    }
    Ok(())
}

/// `HOST:PORT` of a server given as a URL or as `HOST:PORT`.
fn host_of(server: &str) -> Result<String> {
    if server.contains("://") {
        return Ok(wright_llm::host_and_port(server));
    }
    match server.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
            Ok(server.to_string())
        }
        _ => bail!(
            "give the server as its URL (https://api.example.com/v1) or as HOST:PORT (api.example.com:443)"
        ),
    }
}
