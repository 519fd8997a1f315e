//! The rules for package managers and build tools: installing, adding, updating or
//! publishing packages is `high` (it reaches a registry and runs code the project did not
//! have); building, testing and running the project `medium`; listing `low`.

use super::shell::Word;
use super::Finding;
use wright_protocol::Risk;

/// The finding for `name ARGS` when `name` is a package manager or build tool.
pub(crate) fn packages(name: &str, args: &[Word]) -> Option<Finding> {
    let plain: Vec<&str> = args
        .iter()
        .filter(|w| !w.text.starts_with('-'))
        .map(|w| w.text.as_str())
        .collect();
    let first = plain.first().copied();
    let install = |what: &str| {
        Some(Finding::new(
            Risk::High,
            format!("{what}: installs packages (needs the network)"),
        ))
    };
    let runs = |what: &str| {
        Some(Finding::new(
            Risk::Medium,
            format!("{what}: runs the project's code"),
        ))
    };
    let reads = |what: &str| Some(Finding::new(Risk::Low, format!("{what} reads")));
    match name {
        "pip" | "pip3" | "pipx" | "pipenv" | "poetry" | "conda" | "mamba" | "micromamba" => {
            match first {
                Some(
                    "install" | "download" | "wheel" | "add" | "update" | "upgrade" | "inject"
                    | "create" | "lock" | "sync" | "publish" | "run",
                ) => install(&format!("{name} {}", first.unwrap_or_default())),
                Some("list" | "show" | "freeze" | "check" | "search" | "info" | "env") | None => {
                    reads(name)
                }
                Some(other) => Some(Finding::new(Risk::Medium, format!("{name} {other}"))),
            }
        }
        n if n.starts_with("python") => {
            let module = args
                .iter()
                .position(|w| w.text == "-m")
                .and_then(|at| args.get(at + 1))
                .map(|w| w.text.as_str());
            match module {
                Some("pip" | "pipx" | "ensurepip") => {
                    let rest = args
                        .iter()
                        .skip_while(|w| w.text != "-m")
                        .skip(2)
                        .cloned()
                        .collect::<Vec<_>>();
                    packages("pip", &rest)
                }
                Some("http.server" | "smtpd" | "ftplib") => Some(Finding::new(
                    Risk::High,
                    format!("{name} -m {}: uses the network", module.unwrap_or_default()),
                )),
                _ => None,
            }
        }
        "uv" => match first {
            Some("pip") => packages("pip", &args[1..]),
            Some("add" | "sync" | "lock" | "tool" | "publish" | "python") => {
                install(&format!("uv {}", first.unwrap_or_default()))
            }
            Some("run") => runs("uv run"),
            _ => Some(Finding::new(Risk::Medium, "uv")),
        },
        "npm" | "pnpm" | "bun" => match first {
            Some(
                "i" | "install" | "ci" | "add" | "update" | "up" | "upgrade" | "publish" | "link"
                | "dlx" | "x" | "exec" | "create" | "init" | "audit" | "outdated",
            ) => install(&format!("{name} {}", first.unwrap_or_default())),
            Some("ls" | "list" | "view" | "config" | "root" | "bin" | "why") => reads(name),
            Some("run" | "test" | "t" | "start" | "run-script" | "build") => {
                runs(&format!("{name} {}", first.unwrap_or_default()))
            }
            None => install(name),
            Some(other) => runs(&format!("{name} {other}")),
        },
        "yarn" => match first {
            None
            | Some(
                "install" | "add" | "upgrade" | "up" | "dlx" | "global" | "create" | "publish",
            ) => install("yarn"),
            Some("list" | "info" | "why") => reads("yarn"),
            Some(other) => runs(&format!("yarn {other}")),
        },
        "npx" | "pnpx" | "bunx" => Some(Finding::new(
            Risk::High,
            format!("{name}: downloads and runs a package"),
        )),
        "cargo" => match first {
            Some(
                "install" | "add" | "update" | "fetch" | "publish" | "login" | "search" | "owner"
                | "yank" | "generate-lockfile",
            ) => install(&format!("cargo {}", first.unwrap_or_default())),
            Some(
                "tree" | "metadata" | "locate-project" | "pkgid" | "version" | "verify-project",
            ) => reads("cargo"),
            Some(other) => runs(&format!("cargo {other}")),
            None => reads("cargo"),
        },
        "go" => match first {
            Some("get" | "install") => install(&format!("go {}", first.unwrap_or_default())),
            Some("mod") if matches!(plain.get(1), Some(&"download" | &"tidy" | &"vendor")) => {
                install("go mod")
            }
            Some("env" | "version" | "list" | "doc") => reads("go"),
            Some(other) => runs(&format!("go {other}")),
            None => reads("go"),
        },
        "gem" | "bundle" | "bundler" | "composer" => match first {
            Some("install" | "update" | "add" | "require" | "push" | "publish") | None => {
                install(format!("{name} {}", first.unwrap_or_default()).trim_end())
            }
            Some("list" | "info" | "show" | "outdated") => reads(name),
            Some(other) => runs(&format!("{name} {other}")),
        },
        "apt" | "apt-get" | "aptitude" | "yum" | "dnf" | "apk" | "zypper" | "brew" | "port"
        | "snap" | "flatpak" | "nix-env" | "pkg" | "emerge" => match first {
            Some("search" | "list" | "show" | "info" | "policy" | "madison") => reads(name),
            _ => Some(Finding::new(
                Risk::High,
                format!("{name}: installs or changes the system's packages"),
            )),
        },
        "pacman" => Some(Finding::new(
            Risk::High,
            "pacman: installs or changes the system's packages",
        )),
        // Build tools and interpreters run the project's code: `medium`, as any program.
        _ => None,
    }
}

/// Code given on the command line to an interpreter (`python3 -c`, `node -e`, `perl
/// -e`): what it imports says whether it reaches the network or runs commands.
pub(crate) fn inline_code(name: &str, args: &[Word]) -> Option<Finding> {
    let flag = match name {
        n if n.starts_with("python") => "-c",
        "node" | "deno" | "bun" => "-e",
        "perl" | "ruby" => "-e",
        _ => return None,
    };
    let at = args.iter().position(|w| w.text == flag)?;
    let code = args.get(at + 1)?;
    if code.expands {
        return Some(Finding::new(
            Risk::Unknown,
            format!("{name} {flag} with code known only when it runs"),
        ));
    }
    let network = [
        "urllib",
        "requests",
        "socket",
        "http.client",
        "httpx",
        "aiohttp",
        "fetch(",
        "net.",
        "LWP",
        "Net::",
        "open-uri",
        "Net::HTTP",
    ];
    let commands = [
        "os.system",
        "subprocess",
        "child_process",
        "system(",
        "exec(",
        "popen",
    ];
    Some(if network.iter().any(|n| code.text.contains(n)) {
        Finding::new(
            Risk::High,
            format!("{name} {flag}: code that uses the network"),
        )
    } else if commands.iter().any(|n| code.text.contains(n)) {
        Finding::new(
            Risk::Unknown,
            format!("{name} {flag}: code that runs commands"),
        )
    } else {
        Finding::new(Risk::Medium, format!("{name} {flag}: runs code"))
    })
}
