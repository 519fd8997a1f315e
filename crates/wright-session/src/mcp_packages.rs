//! `npx PKG` and `uvx PKG` servers: both would fetch the package from its registry at
//! every start, and the sandbox gives MCP servers no network — the download would only
//! hang until the start deadline. So the package is looked for where it is already
//! installed on this machine, and run from there, offline; else, where the user allowed
//! the registry's host, the command runs as written (through wright's proxy); else it is
//! refused at once, with the one command that installs it where wright looks.
//!
//! Where an `npx` package is looked for, in order: wright's own package directory
//! (`wright_core::mcp_packages_dir()`, filled with `npm install --prefix`), npm's npx
//! cache (`~/.npm/_npx/*/node_modules`), the global `node_modules`, then npm's content
//! cache (`_cacache`), from which npx installs it offline in the sandbox (`mcp_caches`). A
//! `uvx` package: uv's tools (`uv tool install`), then the environments an earlier `uvx`
//! left in uv's cache. Nothing is run to find them; only files are read.

use crate::mcp_caches;
use crate::mcp_program::Download;
use crate::mcp_program::Host;
use crate::mcp_program::Launch;
use serde_json::Value;
use std::path::Path;
use std::path::PathBuf;

/// The npm registry's host, which `npx` downloads from.
pub const NPM_REGISTRY: &str = "registry.npmjs.org";
/// PyPI's hosts, which `uvx` downloads from.
pub const PYPI: [&str; 2] = ["pypi.org", "files.pythonhosted.org"];

/// What a server's command line is, as far as packages go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// Not `npx` nor `uvx`: it runs as written.
    NotAPackageRunner,
    /// The package is here (or its registry may be reached): how to run it.
    Installed(Launch),
    /// It would need the network: why not, and the fix.
    Refused(String),
}

/// `command args`, resolved when it runs a package.
pub fn resolve(command: &str, args: &[String], host: &Host) -> Resolved {
    match Path::new(command)
        .file_name()
        .and_then(|name| name.to_str())
    {
        Some("npx") => npx(command, args, host),
        Some("uvx") => uvx(command, args, host),
        _ => Resolved::NotAPackageRunner,
    }
}

/// A package as `npx` names it: `NAME`, `@SCOPE/NAME`, either with `@VERSION`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct NpmSpec {
    name: String,
    /// An exact version asked for (a range or a tag takes whatever is installed).
    exact: Option<String>,
}

impl NpmSpec {
    fn parse(spec: &str) -> Option<Self> {
        // A URL, a git host or a path: not a registry package.
        if spec.contains(':') || spec.starts_with('.') || spec.starts_with('/') {
            return None;
        }
        let at = spec.char_indices().skip(1).find(|(_, c)| *c == '@');
        let (name, version) = match at {
            Some((index, _)) => (&spec[..index], Some(&spec[index + 1..])),
            None => (spec, None),
        };
        let valid = |part: &str| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
        };
        let parts: Vec<&str> = name.trim_start_matches('@').split('/').collect();
        let ok = match (name.starts_with('@'), parts.as_slice()) {
            (true, [scope, name]) => valid(scope) && valid(name),
            (false, [name]) => valid(name),
            _ => false,
        };
        let exact = version
            .filter(|v| v.split('.').count() == 3 && v.split('.').all(valid))
            .filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()));
        ok.then(|| NpmSpec {
            name: name.to_string(),
            exact: exact.map(str::to_string),
        })
    }
}

/// `npx [-y|--yes|-q] [--] PKG ARGS…`: the package and its arguments; `None` for what
/// wright does not follow (`-p`, `-c`, other options).
fn npx_parts(args: &[String]) -> Option<(&str, &[String])> {
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        match arg.as_str() {
            "-y" | "--yes" | "-q" | "--quiet" => index += 1,
            "--" => {
                return args
                    .get(index + 1)
                    .map(|p| (p.as_str(), &args[index + 2..]))
            }
            other if other.starts_with('-') => return None,
            package => return Some((package, &args[index + 1..])),
        }
    }
    None
}

fn npx(command: &str, args: &[String], host: &Host) -> Resolved {
    let written = std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let packages = wright_core::mcp_packages_dir();
    let Some((spec_text, rest)) = npx_parts(args) else {
        return Resolved::Refused(format!(
            "wright runs `npx PACKAGE ARGS…` servers from an installed copy, and cannot tell which package `{written}` runs; install the package (`npm install --prefix DIR PACKAGE`) and set \"command\": \"node\" and \"args\" to its program's path (DIR/node_modules/PACKAGE/, the file its package.json's \"bin\" names) and its arguments"
        ));
    };
    let Some(spec) = NpmSpec::parse(spec_text) else {
        return Resolved::Refused(format!(
            "`{written}`: wright runs npx servers only from a registry package installed on this machine, and {spec_text} is not a package name; install it and set \"command\": \"node\" and \"args\" to its program's path"
        ));
    };
    for dir in npm_places(host, &packages) {
        if let Some(found) = installed_package(&dir, &spec) {
            return match program(&found, &spec.name) {
                Ok(program) => {
                    Resolved::Installed(node_launch(&program, rest, dir, &written, &found))
                }
                Err(why) => Resolved::Refused(format!("`{written}`: {why}")),
            };
        }
    }
    if let Some(cacache) = mcp_caches::npm_cached(host, &spec.name, spec.exact.as_deref()) {
        let (program, wrapped) = mcp_caches::npx_offline(command, &cacache, args);
        return Resolved::Installed(Launch {
            command: program,
            args: wrapped,
            read: vec![cacache.clone()],
            instead: Some(format!(
                "`{written}` installs {} from npm's cache {}, offline (the cache read-only; npm writes only a copy of its index, in the sandbox's scratch)",
                spec.name,
                cacache.display()
            )),
            download: None,
        });
    }
    if (host.registry_allowed)(NPM_REGISTRY) {
        return Resolved::Installed(Launch {
            command: command.to_string(),
            args: args.to_vec(),
            read: Vec::new(),
            instead: Some(format!(
                "{} is not installed here: npx downloads it through wright's proxy ({NPM_REGISTRY} is allowed)",
                spec.name
            )),
            download: Some(Download {
                package: spec.name.clone(),
                hosts: vec![NPM_REGISTRY.to_string()],
                install: format!("npm install --prefix {} {spec_text}", packages.display()),
            }),
        });
    }
    Resolved::Refused(format!(
        "`{written}` would download {spec_text} from npm's registry, and the sandbox gives MCP servers no network (npx would wait until the start deadline); no copy of it is installed here, nor in npm's cache. Install it once, outside wright: `npm install --prefix {} {spec_text}` — this entry then runs it from there, offline, read-only (or allow the registry, `--allow-host {NPM_REGISTRY}` or allow_hosts, to let npx download it at every start)",
        packages.display()
    ))
}

/// Where installed npm packages are looked for: `node_modules` directories.
fn npm_places(host: &Host, packages: &Path) -> Vec<PathBuf> {
    let mut places = vec![packages.join("node_modules")];
    let cache = host
        .var("npm_config_cache")
        .map(PathBuf::from)
        .or_else(|| host.home.as_ref().map(|home| home.join(".npm")));
    if let Some(cache) = cache {
        // One directory per set of packages npx installed, the newest first.
        let mut npx: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(cache.join("_npx"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| {
                let modified = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH);
                (modified, entry.path().join("node_modules"))
            })
            .collect();
        npx.sort_by_key(|entry| std::cmp::Reverse(entry.0));
        places.extend(npx.into_iter().map(|(_, dir)| dir));
    }
    if let Some(prefix) = host.var("npm_config_prefix") {
        places.push(Path::new(prefix).join("lib/node_modules"));
    }
    // The global packages of the node the sandbox runs (nvm's, a system one).
    if let Some(node) = host
        .which("node")
        .and_then(|n| std::fs::canonicalize(n).ok())
    {
        if let Some(prefix) = node.parent().and_then(Path::parent) {
            places.push(prefix.join("lib/node_modules"));
        }
    }
    for global in ["/usr/local/lib/node_modules", "/usr/lib/node_modules"] {
        places.push(PathBuf::from(global));
    }
    places.dedup();
    places
}

/// `dir/NAME` when it holds the package (at the exact version asked for, if one was):
/// its directory.
fn installed_package(dir: &Path, spec: &NpmSpec) -> Option<PathBuf> {
    let root = dir.join(&spec.name);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("package.json")).ok()?).ok()?;
    if let Some(exact) = &spec.exact {
        if manifest["version"].as_str() != Some(exact.as_str()) {
            return None;
        }
    }
    Some(root)
}

/// The program a package's `package.json` names in `bin`, as npx picks it: the only one,
/// or the one named as the package (without its scope).
fn program(root: &Path, name: &str) -> Result<PathBuf, String> {
    let text = std::fs::read_to_string(root.join("package.json"))
        .map_err(|err| format!("cannot read {}/package.json: {err}", root.display()))?;
    let manifest: Value = serde_json::from_str(&text)
        .map_err(|err| format!("{}/package.json is not JSON: {err}", root.display()))?;
    let short = name.rsplit('/').next().unwrap_or(name);
    let relative = match &manifest["bin"] {
        Value::String(path) => Some(path.clone()),
        Value::Object(bins) if bins.len() == 1 => bins
            .values()
            .next()
            .and_then(Value::as_str)
            .map(str::to_string),
        Value::Object(bins) => bins.get(short).and_then(Value::as_str).map(str::to_string),
        _ => None,
    };
    let relative = relative.ok_or_else(|| {
        format!(
            "the package {name} at {} names no program to run (its package.json's \"bin\")",
            root.display()
        )
    })?;
    let program = root.join(relative.trim_start_matches("./"));
    // Within the package: a manifest naming `../..` is not followed out of it.
    let inside = std::fs::canonicalize(&program)
        .ok()
        .zip(std::fs::canonicalize(root).ok())
        .is_some_and(|(program, root)| program.starts_with(root) && program.is_file());
    match inside {
        true => Ok(program),
        false => Err(format!(
            "the program {} that {name}'s package.json names is not a file of the package",
            program.display()
        )),
    }
}

/// `node PROGRAM ARGS` (or the program itself when it is not a Node.js script), reading
/// the `node_modules` it was found in.
fn node_launch(
    program: &Path,
    rest: &[String],
    node_modules: PathBuf,
    written: &str,
    found: &Path,
) -> Launch {
    let text = program.display().to_string();
    let (command, args) = match is_node_script(program) {
        true => (
            "node".to_string(),
            std::iter::once(text).chain(rest.iter().cloned()).collect(),
        ),
        false => (text, rest.to_vec()),
    };
    Launch {
        command,
        args,
        read: vec![node_modules],
        instead: Some(format!(
            "`{written}` runs the installed {}, offline",
            found.display()
        )),
        download: None,
    }
}

/// A script for Node.js: a `#!` line naming node, or a JavaScript file without one.
fn is_node_script(program: &Path) -> bool {
    let head = std::fs::read(program)
        .map(|bytes| bytes.into_iter().take(128).collect::<Vec<u8>>())
        .unwrap_or_default();
    let head = String::from_utf8_lossy(&head);
    match head.strip_prefix("#!") {
        Some(line) => line.lines().next().is_some_and(|l| l.contains("node")),
        None => program
            .extension()
            .is_some_and(|e| e == "js" || e == "mjs" || e == "cjs"),
    }
}

/// `uvx [--from PKG] [-q] PROGRAM ARGS…`: the package, the program and its arguments.
fn uvx_parts(args: &[String]) -> Option<(String, String, &[String])> {
    let mut from = None;
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        match arg.as_str() {
            "--from" => {
                from = Some(args.get(index + 1)?.clone());
                index += 2;
            }
            "-q" | "--quiet" | "--offline" => index += 1,
            other if other.starts_with('-') => return None,
            program => {
                let package = from.unwrap_or_else(|| program.to_string());
                // `pkg==1.0`, `pkg@1.0`, `pkg[extra]`: the tool's name is the bare name.
                let bare = |text: &str| {
                    text.split(['=', '@', '[', '<', '>', '~', '!'])
                        .next()
                        .unwrap_or(text)
                        .to_string()
                };
                let tool = bare(&package);
                let program = bare(program);
                return Some((tool, program, &args[index + 1..]));
            }
        }
    }
    None
}

fn uvx(command: &str, args: &[String], host: &Host) -> Resolved {
    let written = std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let Some((tool, program, rest)) = uvx_parts(args) else {
        return Resolved::Refused(format!(
            "wright runs `uvx PACKAGE ARGS…` servers from uv's installed tools, and cannot follow `{written}`; install it once with `uv tool install PACKAGE` and set \"command\" to the program it installs"
        ));
    };
    let tools = host
        .var("UV_TOOL_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            host.var("XDG_DATA_HOME")
                .map(|d| Path::new(d).join("uv/tools"))
        })
        .or_else(|| host.home.as_ref().map(|h| h.join(".local/share/uv/tools")));
    if let Some(tools) = &tools {
        let installed = tools.join(&tool).join("bin").join(&program);
        if installed.is_file() {
            return Resolved::Installed(Launch {
                command: installed.display().to_string(),
                args: rest.to_vec(),
                read: Vec::new(),
                instead: Some(format!(
                    "`{written}` runs uv's installed {}, offline",
                    tools.join(&tool).display()
                )),
                download: None,
            });
        }
    }
    if let Some(cached) = mcp_caches::uv_cached(host, &tool, &program) {
        let environment = cached
            .parent()
            .and_then(Path::parent)
            .unwrap_or(cached.as_path())
            .to_path_buf();
        return Resolved::Installed(Launch {
            command: cached.display().to_string(),
            args: rest.to_vec(),
            read: Vec::new(),
            instead: Some(format!(
                "`{written}` runs the environment an earlier uvx left in uv's cache, {}, offline",
                environment.display()
            )),
            download: None,
        });
    }
    if PYPI
        .iter()
        .all(|host_name| (host.registry_allowed)(host_name))
    {
        return Resolved::Installed(Launch {
            command: command.to_string(),
            args: args.to_vec(),
            read: Vec::new(),
            instead: Some(format!(
                "{tool} is not installed here: uvx downloads it through wright's proxy (PyPI is allowed)"
            )),
            download: Some(Download {
                package: tool.clone(),
                hosts: PYPI.iter().map(|h| h.to_string()).collect(),
                install: format!("uv tool install {tool}"),
            }),
        });
    }
    Resolved::Refused(format!(
        "`{written}` would download {tool} from PyPI, and the sandbox gives MCP servers no network (uvx would wait until the start deadline); it is not among uv's installed tools nor in uv's cache. Install it once, outside wright: `uv tool install {tool}` — this entry then runs it from there, offline, read-only (or allow PyPI, `--allow-host {}` or allow_hosts, to let uvx download it at every start)",
        PYPI.join(" --allow-host ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    fn host(home: &Path, allowed: bool) -> Host {
        Host {
            home: Some(home.to_path_buf()),
            path: Some(std::ffi::OsString::from("/nonexistent")),
            cwd: home.to_path_buf(),
            vars: vec![(
                "XDG_DATA_HOME".into(),
                home.join("data").display().to_string(),
            )],
            registry_allowed: Box::new(move |_| allowed),
        }
    }

    fn package(dir: &Path, name: &str, version: &str, bin: &str) {
        let root = dir.join(name);
        std::fs::create_dir_all(root.join("dist")).unwrap();
        std::fs::write(
            root.join("package.json"),
            format!(r#"{{"name": "{name}", "version": "{version}", "bin": {bin}}}"#),
        )
        .unwrap();
        std::fs::write(root.join("dist/index.js"), "#!/usr/bin/env node\n").unwrap();
    }

    #[test]
    fn reads_package_names() {
        let spec = |s: &str| NpmSpec::parse(s).map(|p| (p.name, p.exact));
        assert_eq!(spec("pkg"), Some(("pkg".into(), None)));
        assert_eq!(
            spec("@s/p@1.2.3"),
            Some(("@s/p".into(), Some("1.2.3".into())))
        );
        assert_eq!(spec("@s/p@latest"), Some(("@s/p".into(), None)));
        assert_eq!(spec("p@^1.0.0"), Some(("p".into(), None)));
        for not in ["github:a/b", "./here", "/abs", "a/b", "@s", "a b"] {
            assert_eq!(spec(not), None, "{not}");
        }
        let parts =
            |a: &[&str]| npx_parts(&strings(a)).map(|(p, rest)| (p.to_string(), rest.to_vec()));
        assert_eq!(
            parts(&["-y", "pkg", "stdio", "-x"]),
            Some(("pkg".into(), strings(&["stdio", "-x"])))
        );
        assert_eq!(parts(&["--yes", "--", "pkg"]), Some(("pkg".into(), vec![])));
        assert_eq!(parts(&["-p", "pkg", "cmd"]), None);
        assert_eq!(parts(&["-y"]), None);
        let git = strings(&["mcp-server-git==1.0", "--repo", "."]);
        let (tool, program, rest) = uvx_parts(&git).unwrap();
        assert_eq!(
            (tool.as_str(), program.as_str(), rest),
            ("mcp-server-git", "mcp-server-git", &git[1..])
        );
        assert_eq!(
            uvx_parts(&strings(&["--from", "pkg[x]", "prog"])).map(|(a, b, _)| (a, b)),
            Some(("pkg".into(), "prog".into()))
        );
    }

    #[test]
    fn an_npx_package_in_npms_cache_runs_from_there() {
        let home = tempfile::tempdir().unwrap();
        let old = home.path().join(".npm/_npx/aaa/node_modules");
        package(
            &old,
            "@s/server",
            "1.0.0",
            r#"{"server": "dist/index.js", "other": "x.js"}"#,
        );
        let host = host(home.path(), false);
        let args = strings(&["-y", "@s/server@1.0.0", "stdio"]);
        let Resolved::Installed(launch) = resolve("npx", &args, &host) else {
            panic!("not found")
        };
        assert_eq!(launch.command, "node");
        assert_eq!(
            launch.args,
            vec![
                old.join("@s/server/dist/index.js").display().to_string(),
                "stdio".into()
            ]
        );
        assert_eq!(launch.read, vec![old.clone()]);
        // Another version asked for: not that one, and no network: refused with the fix.
        let args = strings(&["-y", "@s/server@2.0.0"]);
        let Resolved::Refused(why) = resolve("npx", &args, &host) else {
            panic!("found")
        };
        assert!(
            why.contains("`npm install --prefix ") && why.contains("mcp-packages @s/server@2.0.0`"),
            "{why}"
        );
        // Allowed to reach the registry: as written.
        let allowed = super::tests::host(home.path(), true);
        let Resolved::Installed(launch) = resolve("/usr/bin/npx", &args, &allowed) else {
            panic!("refused")
        };
        assert_eq!(
            (launch.command.as_str(), launch.args),
            ("/usr/bin/npx", args)
        );
        // It downloads: from npm's registry, which is asked first (see `mcp_registry`).
        let download = launch.download.unwrap();
        assert_eq!(download.hosts, vec![NPM_REGISTRY.to_string()]);
        assert_eq!(download.package, "@s/server");
        assert!(
            download.install.ends_with("mcp-packages @s/server@2.0.0"),
            "{}",
            download.install
        );
    }

    #[test]
    fn a_package_naming_a_program_outside_it_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".npm/_npx/aaa/node_modules");
        package(&dir, "evil", "1.0.0", r#""../../../../etc/passwd""#);
        let Resolved::Refused(why) = resolve("npx", &strings(&["evil"]), &host(home.path(), false))
        else {
            panic!("followed")
        };
        assert!(why.contains("is not a file of the package"), "{why}");
    }

    #[test]
    fn a_uv_tool_runs_from_where_uv_installed_it() {
        let home = tempfile::tempdir().unwrap();
        let host = host(home.path(), false);
        let args = strings(&["mcp-server-time", "--local-timezone", "UTC"]);
        let Resolved::Refused(why) = resolve("uvx", &args, &host) else {
            panic!("found")
        };
        assert!(why.contains("`uv tool install mcp-server-time`"), "{why}");
        let program = home
            .path()
            .join("data/uv/tools/mcp-server-time/bin/mcp-server-time");
        std::fs::create_dir_all(program.parent().unwrap()).unwrap();
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        let Resolved::Installed(launch) = resolve("uvx", &args, &host) else {
            panic!("not found")
        };
        assert_eq!(launch.command, program.display().to_string());
        assert_eq!(launch.args, strings(&["--local-timezone", "UTC"]));
        assert_eq!(resolve("node", &args, &host), Resolved::NotAPackageRunner);
    }
}
