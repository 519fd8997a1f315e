//! The environment a command sees: built from an allowlist of the host's variables plus
//! settings that make tools quiet and non-interactive. Anything not listed — API keys,
//! tokens, cloud credentials — never reaches the shell.

use std::path::Path;

/// Host variables passed through unchanged when set.
const PASSED_THROUGH: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_NUMERIC",
    "LC_TIME",
    "TZ",
    // Toolchains people install in their home or elsewhere.
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "GOPATH",
    "GOROOT",
    "JAVA_HOME",
    "NVM_DIR",
    "NODE_PATH",
    "PKG_CONFIG_PATH",
    "CC",
    "CXX",
];

/// Settings every command gets: no pagers, no colours, no prompts for credentials,
/// unbuffered Python so output streams as it happens.
const FIXED: &[(&str, &str)] = &[
    ("TERM", "dumb"),
    ("NO_COLOR", "1"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_EDITOR", "true"),
    ("PIP_NO_INPUT", "1"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PYTHONUNBUFFERED", "1"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
];

/// The environment for a command, from the host's variables.
pub fn shell_environment<I>(host: I) -> Vec<(String, String)>
where
    I: IntoIterator<Item = (String, String)>,
{
    let mut env: Vec<(String, String)> = host
        .into_iter()
        .filter(|(key, _)| PASSED_THROUGH.contains(&key.as_str()))
        .collect();
    if !env.iter().any(|(key, _)| key == "PATH") {
        env.push((
            "PATH".into(),
            "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin".into(),
        ));
    }
    for (key, value) in FIXED {
        env.push(((*key).into(), (*value).into()));
    }
    env.sort();
    env
}

/// The environment of a confined command: as `shell_environment`, but HOME and TMPDIR
/// point into the conversation's private directory, and the toolchains installed in the
/// real home are found through their own variables.
pub fn confined_environment<I>(
    host: I,
    private: &Path,
    real_home: Option<&Path>,
) -> Vec<(String, String)>
where
    I: IntoIterator<Item = (String, String)>,
{
    let mut env = shell_environment(host);
    env.retain(|(k, _)| k != "HOME" && k != "TMPDIR");
    env.push(("HOME".into(), private.join("home").display().to_string()));
    env.push(("TMPDIR".into(), private.join("tmp").display().to_string()));
    if let Some(home) = real_home {
        for (key, dir) in TOOLCHAIN_HOMES {
            let path = home.join(dir);
            if path.exists() && !env.iter().any(|(k, _)| k == key) {
                env.push((key.to_string(), path.display().to_string()));
            }
        }
    }
    env.sort();
    env
}

/// Host variables that still mean something inside a container: who and which language.
/// Paths (PATH, HOME, toolchain roots) are the host's and would hide the image's own.
const INTO_CONTAINER: &[&str] = &["USER", "LOGNAME", "LANG", "LANGUAGE", "TZ"];

/// The environment of a command in a Docker container: as `shell_environment`, but only
/// the variables in `INTO_CONTAINER` (and `LC_*`) from the host, so the image keeps its own
/// PATH and toolchain settings; HOME and TMPDIR are the container's private tmpfs.
pub fn container_environment<I>(host: I) -> Vec<(String, String)>
where
    I: IntoIterator<Item = (String, String)>,
{
    let mut env = shell_environment(host);
    let fixed = |key: &str| FIXED.iter().any(|(k, _)| *k == key);
    env.retain(|(k, _)| INTO_CONTAINER.contains(&k.as_str()) || k.starts_with("LC_") || fixed(k));
    env.push(("HOME".into(), "/tmp".into()));
    env.push(("TMPDIR".into(), "/tmp".into()));
    env.sort();
    env
}

/// Variables that let toolchains in the real home work with a private HOME.
const TOOLCHAIN_HOMES: &[(&str, &str)] = &[
    ("CARGO_HOME", ".cargo"),
    ("RUSTUP_HOME", ".rustup"),
    ("PYENV_ROOT", ".pyenv"),
    ("NVM_DIR", ".nvm"),
    ("PIP_CACHE_DIR", ".cache/pip"),
    ("npm_config_cache", ".npm"),
    ("GOPATH", "go"),
];

/// Whether wright may set `name` for the shell itself, on any host and in any sandbox
/// (passed through from the host, fixed, the private HOME and TMPDIR, a toolchain's home,
/// the proxy's variables): a secret of that name would replace wright's value.
pub fn set_for_shell(name: &str) -> bool {
    PASSED_THROUGH.contains(&name)
        || FIXED.iter().any(|(key, _)| *key == name)
        || ["HOME", "TMPDIR"].contains(&name)
        || TOOLCHAIN_HOMES.iter().any(|(key, _)| *key == name)
        || crate::egress::proxy_environment()
            .iter()
            .any(|(key, _)| key == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_dropped_and_toolchains_kept() {
        let host = vec![
            ("OPENAI_API_KEY".to_string(), "sk-secret".to_string()),
            ("AWS_SECRET_ACCESS_KEY".to_string(), "x".to_string()),
            ("CARGO_HOME".to_string(), "/root/.cargo".to_string()),
            ("PATH".to_string(), "/bin".to_string()),
        ];
        let env = shell_environment(host);
        assert!(env
            .iter()
            .all(|(_, value)| value != "sk-secret" && value != "x"));
        assert!(env.contains(&("CARGO_HOME".into(), "/root/.cargo".into())));
        assert!(env.contains(&("PATH".into(), "/bin".into())));
        assert!(env.contains(&("TERM".into(), "dumb".into())));
    }

    #[test]
    fn a_container_keeps_its_own_paths() {
        let host = vec![
            ("OPENAI_API_KEY".to_string(), "sk-secret".to_string()),
            ("PATH".to_string(), "/home/me/.cargo/bin:/bin".to_string()),
            ("CARGO_HOME".to_string(), "/home/me/.cargo".to_string()),
            ("LANG".to_string(), "C.UTF-8".to_string()),
        ];
        let env = container_environment(host);
        let keys: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert!(
            !keys.contains(&"PATH") && !keys.contains(&"CARGO_HOME"),
            "{keys:?}"
        );
        assert!(env.iter().all(|(_, value)| value != "sk-secret"));
        assert!(env.contains(&("LANG".into(), "C.UTF-8".into())));
        assert!(env.contains(&("HOME".into(), "/tmp".into())));
        assert!(env.contains(&("TERM".into(), "dumb".into())));
    }

    /// Every variable any of the environments sets is one `set_for_shell` names.
    #[test]
    fn set_for_shell_names_every_variable_wright_sets() {
        let host: Vec<(String, String)> = PASSED_THROUGH
            .iter()
            .map(|key| (key.to_string(), "v".to_string()))
            .collect();
        let home = tempfile::tempdir().unwrap();
        for (_, dir) in TOOLCHAIN_HOMES {
            std::fs::create_dir_all(home.path().join(dir)).ok();
        }
        let mut all = shell_environment(host.clone());
        all.extend(confined_environment(
            host.clone(),
            Path::new("/private"),
            Some(home.path()),
        ));
        all.extend(container_environment(host));
        all.extend(crate::egress::proxy_environment());
        for (key, _) in &all {
            assert!(set_for_shell(key), "{key}");
        }
        assert!(!set_for_shell("GITHUB_TOKEN"));
    }
}
