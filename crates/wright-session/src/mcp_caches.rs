//! Packages already in a package manager's cache on this machine, for `npx`/`uvx` servers
//! of which no installed copy was found (see `mcp_packages`): npm's content cache
//! (`_cacache`, filled by `npm cache add`, `npm install` or an earlier `npx`), from which
//! npx installs the package offline inside the sandbox, and uv's cached environments (an
//! earlier `uvx`), run in place.
//!
//! What it guarantees: nothing is run to find them, only files are read (npm's index is
//! keyed by the SHA-256 of the request's URL, so one file says whether the package is
//! there); the cache is only ever read — npx is pointed at a cache directory of its own
//! in the sandbox's writable scratch, with a copy of the cache's index and a link to its
//! content, read-only.

use crate::mcp_program::Host;
use sha2::Digest;
use std::path::Path;
use std::path::PathBuf;

/// npm's default registry, as npm writes it in its cache keys.
const NPM_DEFAULT_REGISTRY: &str = "https://registry.npmjs.org/";

/// The npm cache directory of this machine: `npm_config_cache`, else `~/.npm`.
pub fn npm_cache_dir(host: &Host) -> Option<PathBuf> {
    host.var("npm_config_cache")
        .or_else(|| host.var("NPM_CONFIG_CACHE"))
        .map(PathBuf::from)
        .or_else(|| host.home.as_ref().map(|home| home.join(".npm")))
}

/// The `_cacache` of npm's cache when it holds `name`'s metadata (and, when an exact
/// `version` is asked for, that version's tarball): what `npm exec --offline` needs of
/// the package itself. Its dependencies are not looked for; npx says which one is not
/// cached when one is missing (`ENOTCACHED`).
pub fn npm_cached(host: &Host, name: &str, version: Option<&str>) -> Option<PathBuf> {
    let cacache = npm_cache_dir(host)?.join("_cacache");
    let registry = host
        .var("npm_config_registry")
        .unwrap_or(NPM_DEFAULT_REGISTRY);
    let registry = format!("{}/", registry.trim_end_matches('/'));
    // npm's escaped name: the scope's slash as `%2f`.
    let escaped = name.replacen('/', "%2f", 1);
    let mut urls = vec![format!("{registry}{escaped}")];
    if let Some(version) = version {
        let short = name.rsplit('/').next().unwrap_or(name);
        urls.push(format!("{registry}{name}/-/{short}-{version}.tgz"));
    }
    urls.iter()
        .all(|url| has_entry(&cacache, &format!("make-fetch-happen:request-cache:{url}")))
        .then_some(cacache)
}

/// Whether cacache's index at `cacache` has a live entry for `key`: the bucket file named
/// by the key's SHA-256, whose last entry has content (a removal is written as `null`).
fn has_entry(cacache: &Path, key: &str) -> bool {
    let hash: String = sha2::Sha256::digest(key.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let bucket = cacache
        .join("index-v5")
        .join(&hash[..2])
        .join(&hash[2..4])
        .join(&hash[4..]);
    let Ok(text) = std::fs::read_to_string(bucket) else {
        return false;
    };
    // Each line: the SHA-1 of the entry's JSON, a tab, the JSON.
    text.lines()
        .filter_map(|line| line.split_once('\t'))
        .filter_map(|(_, json)| serde_json::from_str::<serde_json::Value>(json).ok())
        .rfind(|entry| entry["key"] == key)
        .is_some_and(|entry| entry["integrity"].is_string())
}

/// The program and arguments that run `npx ARGS` in the sandbox offline from the npm
/// cache `cacache`: a shell makes npx a cache directory of its own in the sandbox's
/// scratch (`$TMPDIR`) — a copy of the cache's index, which npm updates even on a hit,
/// and a link to its content, read-only there, which npm only reads offline — and runs
/// npx with npm kept offline, quiet and without prompts.
pub fn npx_offline(npx: &str, cacache: &Path, args: &[String]) -> (String, Vec<String>) {
    const SCRIPT: &str = r#"set -e
own="${TMPDIR:-/tmp}/wright-npx-cache"
if [ ! -L "$own/_cacache/content-v2" ]; then
  rm -rf "$own"
  mkdir -p "$own/_cacache"
  cp -R "$1/index-v5" "$own/_cacache/index-v5"
  ln -s "$1/content-v2" "$own/_cacache/content-v2"
fi
shift
export npm_config_cache="$own" npm_config_offline=true npm_config_yes=true \
  npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false
exec "$@""#;
    let mut wrapped = vec![
        "-c".to_string(),
        SCRIPT.to_string(),
        "sh".to_string(),
        cacache.display().to_string(),
        npx.to_string(),
        "--offline".to_string(),
    ];
    wrapped.extend(args.iter().cloned());
    ("sh".to_string(), wrapped)
}

/// uv's cache directory: `UV_CACHE_DIR`, `XDG_CACHE_HOME/uv`, else `~/.cache/uv`.
fn uv_cache_dir(host: &Host) -> Option<PathBuf> {
    host.var("UV_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| host.var("XDG_CACHE_HOME").map(|d| Path::new(d).join("uv")))
        .or_else(|| host.home.as_ref().map(|home| home.join(".cache/uv")))
}

/// The program `program` of an environment an earlier `uvx` left in uv's cache
/// (`environments-v*/*/*`, links into `archive-v0`) holding the package `tool`, the
/// newest first: its path there, resolved (no link of the cache is followed at start).
pub fn uv_cached(host: &Host, tool: &str, program: &str) -> Option<PathBuf> {
    let cache = uv_cache_dir(host)?;
    let dist_info = format!("{}-", tool.to_ascii_lowercase().replace(['-', '.'], "_"));
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    let generations = std::fs::read_dir(&cache).ok()?.flatten().filter(|entry| {
        entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with("environments-v"))
    });
    for generation in generations {
        let groups = std::fs::read_dir(generation.path()).into_iter().flatten();
        for group in groups.flatten() {
            let environments = std::fs::read_dir(group.path()).into_iter().flatten();
            for environment in environments.flatten() {
                let Ok(real) = std::fs::canonicalize(environment.path()) else {
                    continue;
                };
                // Within the cache: a link out of it is not followed.
                let inside = std::fs::canonicalize(&cache).is_ok_and(|c| real.starts_with(c));
                let candidate = real.join("bin").join(program);
                if inside && candidate.is_file() && holds(&real, &dist_info) {
                    let modified = std::fs::metadata(&real)
                        .and_then(|m| m.modified())
                        .unwrap_or(std::time::UNIX_EPOCH);
                    found.push((modified, candidate));
                }
            }
        }
    }
    found.sort_by_key(|entry| std::cmp::Reverse(entry.0));
    found.into_iter().next().map(|(_, program)| program)
}

/// Whether the environment at `root` has a distribution whose `.dist-info` starts with
/// `prefix` (the package's normalized name and a dash).
fn holds(root: &Path, prefix: &str) -> bool {
    let libs = std::fs::read_dir(root.join("lib")).into_iter().flatten();
    libs.flatten().any(|python| {
        std::fs::read_dir(python.path().join("site-packages"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|entry| {
                entry.file_name().to_str().is_some_and(|name| {
                    name.to_ascii_lowercase().starts_with(prefix) && name.ends_with(".dist-info")
                })
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(home: &Path) -> Host {
        Host {
            home: Some(home.to_path_buf()),
            path: None,
            cwd: home.join("workspace"),
            vars: Vec::new(),
            registry_allowed: Box::new(|_| false),
        }
    }

    fn bucket(cacache: &Path, key: &str, lines: &[serde_json::Value]) {
        let hash: String = sha2::Sha256::digest(key.as_bytes())
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let path = cacache
            .join("index-v5")
            .join(&hash[..2])
            .join(&hash[2..4])
            .join(&hash[4..]);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text: String = lines.iter().map(|line| format!("\nabc\t{line}")).collect();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_package_is_in_npms_cache_when_its_index_entry_is_live() {
        let home = tempfile::tempdir().unwrap();
        let host = host(home.path());
        let cacache = home.path().join(".npm/_cacache");
        let meta = "make-fetch-happen:request-cache:https://registry.npmjs.org/@s%2fserver";
        assert_eq!(npm_cached(&host, "@s/server", None), None);
        let live = serde_json::json!({"key": meta, "integrity": "sha512-x"});
        bucket(&cacache, meta, std::slice::from_ref(&live));
        assert_eq!(npm_cached(&host, "@s/server", None), Some(cacache.clone()));
        // An exact version needs its tarball too.
        assert_eq!(npm_cached(&host, "@s/server", Some("1.2.3")), None);
        let tarball = "make-fetch-happen:request-cache:https://registry.npmjs.org/@s/server/-/server-1.2.3.tgz";
        bucket(
            &cacache,
            tarball,
            &[serde_json::json!({"key": tarball, "integrity": "sha512-y"})],
        );
        assert_eq!(
            npm_cached(&host, "@s/server", Some("1.2.3")),
            Some(cacache.clone())
        );
        // Removed from the cache (`npm cache clean`): a `null` entry last.
        let removed = serde_json::json!({"key": meta, "integrity": null});
        bucket(&cacache, meta, &[live, removed]);
        assert_eq!(npm_cached(&host, "@s/server", None), None);
    }

    #[test]
    fn a_uvx_environment_in_uvs_cache_is_found_by_its_package() {
        let home = tempfile::tempdir().unwrap();
        let host = host(home.path());
        let cache = home.path().join(".cache/uv");
        let env = cache.join("archive-v0/abc");
        std::fs::create_dir_all(env.join("bin")).unwrap();
        std::fs::write(env.join("bin/mcp-server-time"), "#!/bin/sh\n").unwrap();
        std::fs::create_dir_all(cache.join("environments-v2/123")).unwrap();
        std::os::unix::fs::symlink(
            "../../archive-v0/abc",
            cache.join("environments-v2/123/456"),
        )
        .unwrap();
        // Not the package asked for: not taken.
        assert_eq!(uv_cached(&host, "mcp-server-time", "mcp-server-time"), None);
        std::fs::create_dir_all(
            env.join("lib/python3.11/site-packages/mcp_server_time-1.0.dist-info"),
        )
        .unwrap();
        let real = std::fs::canonicalize(&env).unwrap();
        assert_eq!(
            uv_cached(&host, "mcp-server-time", "mcp-server-time"),
            Some(real.join("bin/mcp-server-time"))
        );
        assert_eq!(uv_cached(&host, "mcp-server-time", "other"), None);
    }
}
