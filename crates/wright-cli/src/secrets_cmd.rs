//! `wright secrets set NAME` / `ls` / `rm NAME`: the user's secrets, kept by
//! `wright_config::secrets` outside every repository. A value is read from standard input
//! only — never from the command line, where `ps` and the shell's history would keep it —
//! typed without echo at a terminal, or piped in; it is never printed.

use anyhow::bail;
use anyhow::Context;
use anyhow::Result;
use clap::Subcommand;
use std::io::BufRead;
use std::io::IsTerminal;
use std::io::Read;
use wright_config::secrets::valid_name;
use wright_config::secrets::SecretError;
use wright_config::secrets::SecretStore;

#[derive(Subcommand)]
pub enum SecretsCommand {
    /// Store a secret; its value is read from standard input (typed without echo, or
    /// piped in), never from the command line.
    Set {
        /// Its name: the environment variable a granted shell gets it as.
        name: String,
    },
    /// List the names of the stored secrets (never their values).
    Ls,
    /// Forget a secret.
    Rm {
        /// The secret's name.
        name: String,
    },
}

pub fn secrets(command: SecretsCommand) -> Result<()> {
    let store = SecretStore::default_location();
    match command {
        SecretsCommand::Set { name } => {
            if !valid_name(&name) {
                bail!(SecretError::InvalidName(name));
            }
            // Refused now, for the reason a run would refuse it.
            wright_session::secrets::refuse_reserved(&name)?;
            let value = read_value(&name)?;
            store.set(&name, &value)?;
            say!(
                "stored the secret {name} in {} (give it to a run with --secret {name})",
                store.file().display()
            );
        }
        SecretsCommand::Ls => {
            let names = store.names()?;
            if names.is_empty() {
                tell!("no secret is stored (wright secrets set NAME)");
            }
            for name in names {
                say!("{name}");
            }
        }
        SecretsCommand::Rm { name } => {
            if !store.remove(&name)? {
                bail!("there is no secret named {name} (wright secrets ls lists them)");
            }
            say!("forgot the secret {name}");
        }
    }
    Ok(())
}

/// The value from standard input: one line typed without echo at a terminal, else all of
/// it (without the line ends it ends with, as `echo` adds one).
fn read_value(name: &str) -> Result<String> {
    let stdin = std::io::stdin();
    let mut value = String::new();
    if stdin.is_terminal() {
        crate::screen::err(&format!("value of {name} (not shown): "));
        let echo = EchoOff::new(&stdin);
        let read = stdin.lock().read_line(&mut value);
        drop(echo);
        crate::screen::err("\n");
        read.context("cannot read the secret's value")?;
    } else {
        stdin
            .lock()
            .read_to_string(&mut value)
            .context("cannot read the secret's value from standard input")?;
    }
    let value = value.trim_end_matches(['\n', '\r']).to_string();
    if value.is_empty() {
        bail!(
            "no value was given for {name}: type it when asked, or pipe it in (printf %s \"$VALUE\" | wright secrets set {name})"
        );
    }
    Ok(value)
}

/// Turns the terminal's echo off while it lives.
struct EchoOff {
    saved: Option<nix::sys::termios::Termios>,
}

impl EchoOff {
    fn new(stdin: &std::io::Stdin) -> Self {
        use nix::sys::termios;
        let saved = termios::tcgetattr(stdin).ok();
        if let Some(saved) = &saved {
            let mut quiet = saved.clone();
            quiet.local_flags.remove(termios::LocalFlags::ECHO);
            let _ = termios::tcsetattr(stdin, termios::SetArg::TCSANOW, &quiet);
        }
        Self { saved }
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            let _ = nix::sys::termios::tcsetattr(
                std::io::stdin(),
                nix::sys::termios::SetArg::TCSANOW,
                saved,
            );
        }
    }
}
