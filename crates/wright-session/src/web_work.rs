//! Whether a task looks like web work, so that `--tools auto` offers the `browser` too:
//! a `package.json` whose scripts run a dev server (vite, next, webpack-dev-server,
//! http-server, …), or HTML files where web apps keep their pages and templates
//! (`index.html`, `templates/`, `static/`, `public/`).
//!
//! What it reads is the repository at the start commit through git's object store (or a
//! plain directory beneath it), through `RepoFiles`: links are never followed, a
//! `package.json` is read up to `MAX_MANIFEST` bytes, a listing is bounded. Nothing of
//! what it reads is shown: the sign it returns names only wright's own words, so a
//! hostile repository cannot put text in the header. The tools chosen are logged with the
//! conversation's start, so a resumed conversation has the same set whatever the files
//! say by then.

use crate::repo_config::Read;
use crate::repo_config::RepoConfigSource;
use crate::repo_config::RepoFiles;
use std::fmt;
use wright_tools::ToolName;
use wright_tools::ToolSet;

/// The largest `package.json` read.
const MAX_MANIFEST: usize = 256 << 10;
/// Files of a template directory looked at.
const MAX_LISTED: usize = 2000;
/// Characters of one script looked at.
const MAX_SCRIPT: usize = 2000;

/// Programs a `package.json` script runs to serve a web app (a word of the script, or its
/// file name: `node_modules/.bin/vite`). `webpack` counts only as `webpack serve`.
const DEV_SERVERS: &[&str] = &[
    "vite",
    "next",
    "nuxt",
    "nuxi",
    "react-scripts",
    "webpack-dev-server",
    "http-server",
    "live-server",
    "lite-server",
    "serve",
    "parcel",
    "astro",
    "remix",
    "vue-cli-service",
    "ng",
    "gatsby",
    "ember",
    "browser-sync",
    "eleventy",
    "snowpack",
];

/// Directories where web apps keep pages and templates.
const PAGE_DIRS: &[&str] = &["templates", "static", "public"];

/// What made a task look like web work (wright's words only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebSign {
    /// A `package.json` script runs this dev server.
    DevServer(&'static str),
    /// An HTML file in this place (`index.html`, `templates/`, …).
    Pages(&'static str),
}

impl fmt::Display for WebSign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WebSign::DevServer(server) => write!(f, "package.json runs a dev server ({server})"),
            WebSign::Pages(place) => write!(f, "HTML pages in {place}"),
        }
    }
}

/// Why the task in `source` (worked in its subdirectory `sub`, `""` for the top) looks
/// like web work, if it does.
pub fn sign(source: &RepoConfigSource, sub: &str) -> Option<WebSign> {
    let levels = levels(sub);
    let at = |level: &str, name: &str| match level {
        "" => name.to_string(),
        _ => format!("{level}/{name}"),
    };
    // The small files first: a large `public/` never costs their listing.
    let files = RepoFiles::list(source, &manifest_paths(sub));
    for level in &levels {
        if let Read::Text(text) = files.read_text(&at(level, "package.json"), MAX_MANIFEST) {
            if let Some(server) = dev_server(&text) {
                return Some(WebSign::DevServer(server));
            }
        }
        if let Read::Text(_) = files.read_text(&at(level, "index.html"), MAX_MANIFEST) {
            return Some(WebSign::Pages("index.html"));
        }
    }
    let dirs: Vec<String> = levels
        .iter()
        .flat_map(|level| PAGE_DIRS.iter().map(move |dir| at(level, dir)))
        .collect();
    let files = RepoFiles::list(source, &dirs);
    for level in &levels {
        for dir in PAGE_DIRS {
            let listed = files.files_under(&at(level, dir), MAX_LISTED);
            if listed.iter().any(|path| is_html(path)) {
                return Some(WebSign::Pages(match *dir {
                    "templates" => "templates/",
                    "static" => "static/",
                    _ => "public/",
                }));
            }
        }
    }
    None
}

/// `chosen` (the tools and why), with the `browser` added where `auto` was asked for and
/// the task looks like web work (`web_work::sign`) — and only where the browser could
/// run: Chromium installed, a sandbox with namespaces of its own (not `landlock`,
/// `docker`, `none`, nor `--network`, which shares the host's network), and a clone
/// rather than the user's own tree.
pub fn with_browser(
    chosen: (Vec<ToolName>, String),
    setting: &str,
    source: &RepoConfigSource,
    sub: &str,
    sandbox: &crate::session::SandboxChoice,
    users_tree: bool,
) -> (Vec<ToolName>, String) {
    let (mut names, why) = chosen;
    let could_run = wright_tools::chromium_program().is_some()
        && matches!(
            sandbox.mode,
            wright_sandbox::SandboxMode::Auto | wright_sandbox::SandboxMode::Namespaces
        )
        && !sandbox.options.network
        && !users_tree;
    if !matches!(ToolSet::parse(setting), Ok(ToolSet::Auto))
        || names.contains(&ToolName::Browser)
        || !could_run
    {
        return (names, why);
    }
    let Some(sign) = sign(source, sub) else {
        return (names, why);
    };
    names.push(ToolName::Browser);
    names.sort();
    (names, format!("{why}; browser: {sign}"))
}

/// The manifests `sign` reads first: `package.json` and `index.html` at the top and in
/// `sub`.
pub(crate) fn manifest_paths(sub: &str) -> Vec<String> {
    levels(sub)
        .iter()
        .flat_map(|level| {
            ["package.json", "index.html"].map(|name| match level.as_str() {
                "" => name.to_string(),
                _ => format!("{level}/{name}"),
            })
        })
        .collect()
}

/// The top, and `sub` if the task is in a subdirectory (a monorepo's `web/`).
fn levels(sub: &str) -> Vec<String> {
    let sub = sub.trim_matches('/');
    if sub.is_empty() || sub == "." {
        vec![String::new()]
    } else {
        vec![String::new(), sub.to_string()]
    }
}

fn is_html(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".html") || lower.ends_with(".htm")
}

/// The dev server one of `manifest`'s scripts runs, if any.
fn dev_server(manifest: &str) -> Option<&'static str> {
    let value: serde_json::Value = serde_json::from_str(manifest).ok()?;
    let scripts = value.get("scripts")?.as_object()?;
    scripts
        .values()
        .filter_map(serde_json::Value::as_str)
        .find_map(|script| {
            let script: String = script.chars().take(MAX_SCRIPT).collect();
            let words: Vec<&str> = script
                .split(|c: char| c.is_whitespace() || matches!(c, '&' | ';' | '|' | '(' | ')'))
                .filter(|w| !w.is_empty())
                .map(|w| w.rsplit('/').next().unwrap_or(w))
                .collect();
            let webpack_serve = words
                .windows(2)
                .any(|pair| pair[0] == "webpack" && pair[1] == "serve");
            if webpack_serve {
                return Some("webpack serve");
            }
            words
                .iter()
                .find_map(|word| DEV_SERVERS.iter().find(|server| *server == word).copied())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_that_serve_a_web_app() {
        let manifest = |scripts: &str| format!(r#"{{"name": "x", "scripts": {scripts}}}"#);
        assert_eq!(
            dev_server(&manifest(r#"{"dev": "vite --port 3000"}"#)),
            Some("vite")
        );
        assert_eq!(
            dev_server(&manifest(r#"{"start": "node_modules/.bin/next dev"}"#)),
            Some("next")
        );
        assert_eq!(
            dev_server(&manifest(r#"{"serve": "npm run build && webpack serve"}"#)),
            Some("webpack serve")
        );
        // A library's build and tests are not web work; nor is a word that only contains
        // a server's name.
        assert_eq!(
            dev_server(&manifest(
                r#"{"build": "tsc && webpack", "test": "jest", "lint": "eslint viteconf"}"#
            )),
            None
        );
        assert_eq!(dev_server(r#"{"name": "no scripts"}"#), None);
        assert_eq!(dev_server("not json"), None);
    }

    #[test]
    fn a_plain_directory_is_read_beneath_it() {
        let dir = tempfile::tempdir().unwrap();
        let source = RepoConfigSource::Directory(dir.path().to_path_buf());
        std::fs::write(dir.path().join("setup.py"), "").unwrap();
        assert_eq!(sign(&source, ""), None);
        std::fs::create_dir_all(dir.path().join("templates/app")).unwrap();
        std::fs::write(dir.path().join("templates/app/base.html"), "<p>").unwrap();
        assert_eq!(sign(&source, ""), Some(WebSign::Pages("templates/")));
    }

    #[test]
    fn a_link_to_a_package_json_elsewhere_is_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(
            outside.path().join("package.json"),
            r#"{"scripts": {"dev": "vite"}}"#,
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("package.json"),
            dir.path().join("package.json"),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("public")).unwrap();
        let source = RepoConfigSource::Directory(dir.path().to_path_buf());
        assert_eq!(sign(&source, ""), None);
    }
}
