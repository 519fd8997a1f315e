//! How one stdio MCP server is made to run in the sandbox, decided before it starts and
//! without running anything: the files its command line names (a script, a program, their
//! package) made readable, read-only; `npx` and `uvx`, which would download the package
//! while the sandbox gives MCP servers no network, turned into the copy already on this
//! machine (see `mcp_packages`), or refused at once with the command that fixes it.
//!
//! What it guarantees: it only ever asks for read-only access; a grant is a package's
//! `node_modules`, a virtual environment, a package root, a script's directory, or the
//! named file alone — never a directory holding the user's home, `/`, or a top-level
//! directory such as `/tmp`. Whether a grant is given (only to the user's own servers)
//! is the caller's decision.

use crate::mcp_packages;
use crate::mcp_packages::Resolved;
use std::ffi::OsString;
use std::path::Path;
use std::path::PathBuf;

/// What the program of one server needs from the machine around the sandbox.
pub struct Host {
    /// The user's home (wright's own `HOME`, not the sandbox's private one).
    pub home: Option<PathBuf>,
    /// The `PATH` the server's command is looked up in.
    pub path: Option<OsString>,
    /// The directory the server starts in (the workspace).
    pub cwd: PathBuf,
    /// The variables of wright's own environment the package managers read
    /// (`XDG_DATA_HOME`, `XDG_CACHE_HOME`, `UV_TOOL_DIR`, `UV_CACHE_DIR`,
    /// `npm_config_cache`, `npm_config_registry`, `npm_config_prefix`).
    pub vars: Vec<(String, String)>,
    /// Whether the server may reach a package registry by its host name (the user allowed
    /// it, or the network).
    pub registry_allowed: Box<dyn Fn(&str) -> bool + Send + Sync>,
}

impl Host {
    /// The one of wright's own environment variables `name`, when set and not empty.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(key, value)| key == name && !value.is_empty())
            .map(|(_, value)| value.as_str())
    }

    /// The program `name` as the sandbox's `PATH` finds it (a name with a `/` is a path,
    /// relative to the starting directory). Only `PATH`'s absolute directories are
    /// searched.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        if name.contains('/') {
            let path = self.cwd.join(name);
            return path.is_file().then_some(path);
        }
        std::env::split_paths(self.path.as_ref()?)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    }

    /// Whether `path` is where the agent may write (the starting directory, its
    /// workspace): never followed, never granted from.
    fn in_workspace(&self, path: &Path) -> bool {
        path.starts_with(&self.cwd)
            || std::fs::canonicalize(&self.cwd).is_ok_and(|cwd| path.starts_with(cwd))
    }
}

/// A server's program, ready to start in the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub command: String,
    pub args: Vec<String>,
    /// What it must read outside the sandbox's usual paths (read-only).
    pub read: Vec<PathBuf>,
    /// What wright put in place of the command as written, for the header.
    pub instead: Option<String>,
    /// It runs as written and downloads its package at start: from where, and the fix
    /// when that does not answer.
    pub download: Option<Download>,
}

/// A package a server's command downloads at every start (`npx`, `uvx` run as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    pub package: String,
    /// The registry's hosts, each asked on its HTTPS port before the server starts.
    pub hosts: Vec<String>,
    /// The command that installs it once, so it runs offline.
    pub install: String,
}

/// What becomes of a server's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    Launch(Launch),
    /// It cannot work in the sandbox: why, and what fixes it.
    Refused(String),
}

/// The plan for `command args` on `host`.
pub fn plan(command: &str, args: &[String], host: &Host) -> Plan {
    let launch = match mcp_packages::resolve(command, args, host) {
        Resolved::NotAPackageRunner => Launch {
            command: command.to_string(),
            args: args.to_vec(),
            read: Vec::new(),
            instead: None,
            download: None,
        },
        Resolved::Installed(launch) => launch,
        Resolved::Refused(why) => return Plan::Refused(why),
    };
    let mut read = launch.read.clone();
    // The program, and every file its arguments name (a script, a configuration) —
    // outside the workspace: what the agent may write there (a link to the user's
    // secrets) is never followed to a grant.
    let named = host
        .which(&launch.command)
        .into_iter()
        .chain(
            launch
                .args
                .iter()
                .map(String::as_str)
                .filter_map(named_file),
        )
        .filter(|path| !host.in_workspace(path));
    for path in named {
        let grants = grants_for(&path, host.home.as_deref());
        for grant in grants.into_iter().filter(|g| !host.in_workspace(g)) {
            if !read.contains(&grant) {
                read.push(grant);
            }
        }
    }
    Plan::Launch(Launch { read, ..launch })
}

/// The file an argument names: an absolute path to an existing file (a relative one is
/// in the workspace, readable already).
fn named_file(arg: &str) -> Option<PathBuf> {
    let path = Path::new(arg);
    (path.is_absolute() && path.is_file()).then(|| path.to_path_buf())
}

/// What reading and running `file` takes: the package or environment it belongs to (see
/// `root_of`), for the path as named and, through links, for the file itself.
pub fn grants_for(file: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut grants = vec![root_of(file, home)];
    if let Ok(real) = std::fs::canonicalize(file) {
        let root = root_of(&real, home);
        // A virtual environment's python is a link into the installation it was made
        // from, which `pyvenv.cfg` names.
        let python = venv_home(&root);
        if !grants.contains(&root) {
            grants.push(root);
        }
        grants.extend(python);
    }
    grants
}

/// The directory that holds what `file` loads: its outermost `node_modules` (a package
/// and its dependencies), its virtual environment, the nearest package root above it,
/// or its directory — or `file` alone where that directory would be too wide.
fn root_of(file: &Path, home: Option<&Path>) -> PathBuf {
    let too_wide =
        |dir: &Path| dir.components().count() < 3 || home.is_some_and(|home| home.starts_with(dir));
    let dir = match file.parent() {
        Some(dir) => dir,
        None => return file.to_path_buf(),
    };
    let ancestors: Vec<&Path> = dir.ancestors().take_while(|d| !too_wide(d)).collect();
    let chosen = ancestors
        .iter()
        .rev()
        .find(|d| d.file_name().is_some_and(|name| name == "node_modules"))
        .or_else(|| ancestors.iter().find(|d| d.join("pyvenv.cfg").is_file()))
        .or_else(|| {
            ancestors.iter().find(|d| {
                ["package.json", "pyproject.toml", "setup.py"]
                    .iter()
                    .any(|marker| d.join(marker).is_file())
            })
        })
        .or(ancestors.first());
    match chosen {
        Some(dir) => dir.to_path_buf(),
        None => file.to_path_buf(),
    }
}

/// The Python installation a virtual environment at `root` was made from (`home =` of
/// its `pyvenv.cfg`, without its `bin`).
fn venv_home(root: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(root.join("pyvenv.cfg")).ok()?;
    let home = text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })?;
    let home = std::fs::canonicalize(home).ok()?;
    let install = match home.file_name() {
        Some(name) if name == "bin" => home.parent()?.to_path_buf(),
        _ => home,
    };
    // `/usr` and the like: readable already, and no directory too wide is granted.
    (install.components().count() >= 3).then_some(install)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    #[test]
    fn a_script_is_granted_its_package_not_more() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // A package installed with its dependencies beside it.
        let script = root.join("prefix/node_modules/@scope/server/dist/index.js");
        touch(&script);
        touch(&root.join("prefix/node_modules/@scope/server/package.json"));
        assert_eq!(
            grants_for(&script, None),
            vec![root.join("prefix/node_modules")]
        );
        // A project of one's own: its root.
        let own = root.join("project/build/server.js");
        touch(&own);
        touch(&root.join("project/package.json"));
        assert_eq!(grants_for(&own, None), vec![root.join("project")]);
        // A lone script: its directory.
        let lone = root.join("scripts/server.py");
        touch(&lone);
        assert_eq!(grants_for(&lone, None), vec![root.join("scripts")]);
        // In the home itself, or at the top: the file alone.
        let home = root.join("home");
        let at_home = home.join("server.js");
        touch(&at_home);
        assert_eq!(grants_for(&at_home, Some(&home)), vec![at_home.clone()]);
        assert_eq!(
            root_of(Path::new("/tmp/server.js"), None),
            PathBuf::from("/tmp/server.js")
        );
        // A package root is never looked for at or above the home.
        touch(&home.join("package.json"));
        let deeper = home.join("tools/server.js");
        touch(&deeper);
        assert_eq!(grants_for(&deeper, Some(&home)), vec![home.join("tools")]);
    }

    #[test]
    fn a_link_is_granted_where_it_leads_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let venv = root.join("tools/server");
        touch(&venv.join("bin/server"));
        let python = root.join("pythons/cpython-3.12");
        touch(&python.join("bin/python3"));
        std::fs::write(
            venv.join("pyvenv.cfg"),
            format!("home = {}\n", python.join("bin").display()),
        )
        .unwrap();
        std::fs::create_dir_all(root.join("bin")).unwrap();
        let link = root.join("bin/server");
        std::os::unix::fs::symlink(venv.join("bin/server"), &link).unwrap();
        let real = std::fs::canonicalize(root).unwrap();
        assert_eq!(
            grants_for(&link, None),
            vec![
                root.join("bin"),
                real.join("tools/server"),
                real.join("pythons/cpython-3.12")
            ]
        );
    }

    #[test]
    fn a_link_in_the_workspace_is_never_followed_to_a_grant() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let secrets = root.join("home/.ssh/id_ed25519");
        touch(&secrets);
        let workspace = root.join("workspace");
        std::fs::create_dir_all(&workspace).unwrap();
        let planted = workspace.join("server.py");
        std::os::unix::fs::symlink(&secrets, &planted).unwrap();
        let outside = root.join("tools/server.py");
        touch(&outside);
        let host = Host {
            home: Some(root.join("home")),
            path: Some(format!(".:{}", workspace.display()).into()),
            cwd: workspace.clone(),
            vars: Vec::new(),
            registry_allowed: Box::new(|_| false),
        };
        let args = vec![
            planted.display().to_string(),
            "server.py".into(),
            outside.display().to_string(),
        ];
        let Plan::Launch(launch) = plan("server.py", &args, &host) else {
            panic!("refused")
        };
        assert_eq!(launch.read, vec![root.join("tools")]);
        assert_eq!(launch.args, args);
    }
}
