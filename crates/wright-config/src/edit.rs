//! Changing one value of the user's own configuration file from outside it (the server's
//! Settings page), as a person would edit it: the rest of the file — comments, order,
//! blank lines, the way values are written — stays as it was (`toml_edit`).
//!
//! What it guarantees: only a key of `EDITABLE` is changed (the model server, the default
//! profile, how the model is talked to, the run's limits): never a key a repository's file
//! may not set, a sandbox or network setting, an agent's command, a secret or the name of
//! its variable. The new file is checked by the loader itself (`Config::with_user_file`
//! and the profile's resolution) before it takes the old one's place, so a value the
//! loader would refuse leaves the file as it was; the new content is written to a
//! temporary file in the same directory and renamed over the old one, so a reader sees
//! the old file or the new one, never a part of either. A file that is a link is
//! changed where it leads (the link stays). Changes in one process are made one at a
//! time (none is lost to another made at once); another program editing the file at
//! the same moment is not locked out.

use crate::file;
use crate::schema;
use crate::Config;
use crate::ConfigError;
use crate::Kind;
use std::io::Write;
use std::path::Path;

/// The keys a value may be changed of from outside the file. Each is a key a repository's
/// file may set (on its own, lower, or once approved), and none weakens the sandbox,
/// opens the network, names a secret, or runs a program: the model server and model, the
/// default profile, how tool calls travel, and the limits of a run.
pub const EDITABLE: &[&str] = &[
    "base_url",
    "model",
    "profile",
    "tool_calling",
    "constrain",
    "tools",
    "context_window",
    "max_reply_tokens",
    "run.max_steps",
    "run.max_tokens",
    "run.max_time",
    "run.idle_timeout",
    "run.stream",
    "review.rounds",
];

/// Why a value was not changed.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("{key} is not changed from here: only {} are (the others stay in your own file, where you change them by hand)", EDITABLE.join(", "))]
    NotEditable { key: String },
    #[error("{key} must be {expected}, not {given:?}")]
    BadValue {
        key: String,
        given: String,
        expected: String,
    },
    #[error("{path}: {key} cannot be set there, since {table} is not a table in that file")]
    NotATable {
        path: String,
        key: String,
        table: String,
    },
    #[error("{path} is not TOML that can be changed: {message}")]
    Parse { path: String, message: String },
    #[error("the file would not load any more, so it was left as it was: {0}")]
    Refused(ConfigError),
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// Whether `key`'s value may be changed from outside the file.
pub fn editable(key: &str) -> bool {
    EDITABLE.contains(&key)
}

/// A key that may be changed from outside the file, as a form offers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offered {
    pub key: &'static str,
    /// What it does (the schema's words).
    pub doc: &'static str,
    /// What a value must be, in words.
    pub expected: String,
    /// The only values it takes, when they are a few words (`true`/`false` too).
    pub choices: Vec<&'static str>,
}

/// Every key of `EDITABLE`, as a form offers it.
pub fn offered() -> Vec<Offered> {
    EDITABLE
        .iter()
        .filter_map(|key| schema::KEYS.iter().find(|known| known.path == *key))
        .map(|known| Offered {
            key: known.path,
            doc: known.doc,
            expected: file::expected(known.kind),
            choices: match known.kind {
                Kind::OneOf(words) => words.to_vec(),
                Kind::Bool => vec!["true", "false"],
                _ => Vec::new(),
            },
        })
        .collect()
}

/// The value `text` gives `key` (as a person types it: `40`, `true`, `native`, a URL), of
/// the type the schema wants; the range and the words are the loader's to check.
pub fn value_of_text(key: &str, text: &str) -> Result<toml::Value, EditError> {
    let Some(known) = schema::KEYS.iter().find(|known| known.path == key) else {
        return Err(EditError::NotEditable { key: key.into() });
    };
    if !editable(key) {
        return Err(EditError::NotEditable { key: key.into() });
    }
    let text = text.trim();
    let bad = |expected: &str| EditError::BadValue {
        key: key.into(),
        given: text.into(),
        expected: expected.into(),
    };
    let value = match known.kind {
        Kind::Str | Kind::OneOf(_) => toml::Value::String(text.to_string()),
        Kind::Int { .. } => toml::Value::Integer(text.parse().map_err(|_| bad("a whole number"))?),
        Kind::Float { .. } => toml::Value::Float(text.parse().map_err(|_| bad("a number"))?),
        Kind::Bool => toml::Value::Boolean(text.parse().map_err(|_| bad("true or false"))?),
        _ => return Err(EditError::NotEditable { key: key.into() }),
    };
    file::check(known.kind, &value).map_err(|expected| bad(&expected))?;
    Ok(value)
}

/// Sets `key` to `value` in the user's file at `path` (created if there is none), or
/// removes it (`None`: back to what the rest of the configuration says), keeping the rest
/// of the file as it was; refused, the file unchanged, when the key is not `EDITABLE` or
/// the new file would not load.
pub fn set(path: &Path, key: &str, value: Option<&toml::Value>) -> Result<(), EditError> {
    if !editable(key) {
        return Err(EditError::NotEditable { key: key.into() });
    }
    // One change at a time in this process: two at once would each read the old file
    // and the later rename would drop the earlier change.
    let _one = EDITING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // A link (a dotfiles checkout, say) stays a link: the file it leads to is changed.
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let shown = path.display().to_string();
    let io = |source| EditError::Io {
        path: shown.clone(),
        source,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(io(err)),
    };
    let mut document: toml_edit::DocumentMut =
        text.parse()
            .map_err(|err: toml_edit::TomlError| EditError::Parse {
                path: shown.clone(),
                message: err.to_string(),
            })?;
    let parts: Vec<&str> = key.split('.').collect();
    let Some((last, tables)) = parts.split_last() else {
        return Err(EditError::NotEditable { key: key.into() });
    };
    let mut table: &mut dyn toml_edit::TableLike = document.as_table_mut();
    for (depth, name) in tables.iter().enumerate() {
        let item = table
            .entry(name)
            .or_insert(toml_edit::Item::Table(toml_edit::Table::new()));
        table = item
            .as_table_like_mut()
            .ok_or_else(|| EditError::NotATable {
                path: shown.clone(),
                key: key.into(),
                table: tables[..=depth].join("."),
            })?;
    }
    match value {
        Some(value) => {
            let new =
                edit_value(value).ok_or_else(|| EditError::NotEditable { key: key.into() })?;
            match table.get_mut(last).and_then(toml_edit::Item::as_value_mut) {
                // The comment after the old value (`max_steps = 30  # why`) stays.
                Some(old) => {
                    let decor = old.decor().clone();
                    *old = new;
                    *old.decor_mut() = decor;
                }
                None => {
                    table.insert(last, toml_edit::Item::Value(new));
                }
            }
        }
        None => {
            table.remove(last);
        }
    }
    replace_checked(&path, &document.to_string()).map_err(|err| match err {
        Replace::Io(source) => io(source),
        Replace::Refused(err) => EditError::Refused(err),
    })
}

static EDITING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A scalar of the configuration as `toml_edit` writes it.
fn edit_value(value: &toml::Value) -> Option<toml_edit::Value> {
    Some(match value {
        toml::Value::String(text) => text.as_str().into(),
        toml::Value::Integer(n) => (*n).into(),
        toml::Value::Float(x) => (*x).into(),
        toml::Value::Boolean(b) => (*b).into(),
        _ => return None,
    })
}

enum Replace {
    Io(std::io::Error),
    Refused(ConfigError),
}

/// Writes `text` beside `path`, loads it as the user's file is loaded, and renames it over
/// `path` only if it loads; else removes it.
fn replace_checked(path: &Path, text: &str) -> Result<(), Replace> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(Replace::Io)?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config.toml".into());
    let temporary = dir.join(format!(".{name}.{}.new", std::process::id()));
    let written = write_new(&temporary, text, path);
    let checked = written.map_err(Replace::Io).and_then(|()| {
        Config::default()
            .with_user_file(&temporary)
            .and_then(Config::resolve_profile)
            .map(drop)
            .map_err(|err| Replace::Refused(renamed(err, &temporary, path)))
    });
    let done = checked.and_then(|()| std::fs::rename(&temporary, path).map_err(Replace::Io));
    if done.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    done
}

/// `text` in a new file at `temporary`, with the permissions of `like` when it exists,
/// on the disk before it is renamed.
fn write_new(temporary: &Path, text: &str, like: &Path) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(temporary)?;
    if let Ok(meta) = std::fs::metadata(like) {
        file.set_permissions(meta.permissions())?;
    }
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

/// The loader's error about the temporary file, naming the real one.
fn renamed(err: ConfigError, temporary: &Path, path: &Path) -> ConfigError {
    let from = temporary.display().to_string();
    let to = path.display().to_string();
    match err {
        ConfigError::Type {
            file,
            line,
            key,
            expected,
        } => ConfigError::Type {
            file: file.replace(&from, &to),
            line,
            key,
            expected,
        },
        ConfigError::Unknown {
            file,
            line,
            key,
            closest,
        } => ConfigError::Unknown {
            file: file.replace(&from, &to),
            line,
            key,
            closest,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn file_with(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    const MINE: &str = "# my settings\ntool_calling = \"native\"  # my server needs it\n\n[run]\n# a long task\nmax_steps = 30 # why\n\n[profiles.small]\nmodel = \"m\"\n";

    #[test]
    fn a_value_changes_and_the_rest_of_the_file_stays_as_it_was() {
        let (_dir, path) = file_with(MINE);
        set(&path, "run.max_steps", Some(&toml::Value::Integer(40))).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, MINE.replace("max_steps = 30", "max_steps = 40"));
        set(&path, "profile", Some(&toml::Value::String("small".into()))).unwrap();
        set(&path, "run.max_time", Some(&toml::Value::Integer(600))).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# my settings\n"), "{text}");
        assert!(text.contains("max_steps = 40 # why\n"), "{text}");
        assert!(text.contains("max_time = 600"), "{text}");
        let config = Config::default()
            .with_user_file(&path)
            .unwrap()
            .resolve_profile()
            .unwrap();
        assert_eq!(config.str("profile"), Some("small"));
        assert_eq!(config.int("run.max_time"), Some(600));
        // Removed: back to the default, the comments still there.
        set(&path, "run.max_steps", None).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("max_steps"), "{text}");
        assert!(text.contains("# my server needs it"), "{text}");
    }

    #[test]
    fn what_the_loader_refuses_leaves_the_file_as_it_was() {
        let (dir, path) = file_with(MINE);
        let refused = set(&path, "profile", Some(&toml::Value::String("nope".into())));
        assert!(matches!(refused, Err(EditError::Refused(_))), "{refused:?}");
        let refused = set(
            &path,
            "tool_calling",
            Some(&toml::Value::String("smoke".into())),
        );
        assert!(matches!(refused, Err(EditError::Refused(_))), "{refused:?}");
        assert!(refused.unwrap_err().to_string().contains("config.toml"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), MINE);
        // No temporary file left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn only_the_editable_keys_change_and_values_have_their_type() {
        let (_dir, path) = file_with(MINE);
        for key in [
            "model_file",
            "sandbox.level",
            "sandbox.allow_hosts",
            "egress",
            "api_key_env",
            "agents.other.command",
            "server.users_may",
            "confirm",
        ] {
            let refused = set(&path, key, Some(&toml::Value::String("x".into())));
            assert!(
                matches!(refused, Err(EditError::NotEditable { .. })),
                "{key}: {refused:?}"
            );
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), MINE);
        for key in EDITABLE {
            let known = schema::KEYS.iter().find(|k| k.path == *key).unwrap();
            assert_ne!(known.repo, schema::RepoRule::UserOnly, "{key}");
            assert!(!key.starts_with("sandbox."), "{key}");
        }
        assert_eq!(
            value_of_text("run.max_steps", " 40 ").unwrap(),
            toml::Value::Integer(40)
        );
        assert!(matches!(
            value_of_text("run.max_steps", "0"),
            Err(EditError::BadValue { .. })
        ));
        assert!(matches!(
            value_of_text("run.stream", "maybe"),
            Err(EditError::BadValue { .. })
        ));
        assert!(matches!(
            value_of_text("model_file", "/x.gguf"),
            Err(EditError::NotEditable { .. })
        ));
        let offered = offered();
        assert_eq!(offered.len(), EDITABLE.len());
        let tool_calling = offered.iter().find(|o| o.key == "tool_calling").unwrap();
        assert_eq!(tool_calling.choices, ["auto", "native", "text"]);
    }

    #[test]
    fn a_file_that_is_a_link_is_changed_where_it_leads_and_stays_a_link() {
        let (dir, target) = file_with(MINE);
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        set(&link, "run.max_steps", Some(&toml::Value::Integer(41))).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            MINE.replace("max_steps = 30", "max_steps = 41")
        );
    }

    #[test]
    fn a_missing_file_is_made_and_a_key_under_a_value_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wright").join("config.toml");
        set(&path, "run.max_steps", Some(&toml::Value::Integer(12))).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[run]\nmax_steps = 12\n"
        );
        let (_dir, path) = file_with("run = 5\n");
        let refused = set(&path, "run.max_steps", Some(&toml::Value::Integer(12)));
        assert!(
            matches!(refused, Err(EditError::NotATable { .. })),
            "{refused:?}"
        );
    }
}
