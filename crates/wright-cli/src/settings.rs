//! The command line's side of the settings: the network allow-list (`NetArgs`), which is
//! never remembered, and the terminal settings resolution asks at (`TerminalConsole`).
//! The resolution itself — flags, environment, configuration files, the repository's
//! own file, fallback and routing — is the session's (`wright_session::settings`), the
//! same for every front end.

use clap::Args;
pub use wright_session::settings::check_text;
pub use wright_session::settings::merged;
pub use wright_session::settings::CommonArgs;
pub use wright_session::settings::RepoConfigSource;
pub use wright_session::settings::SessionSettings;

/// This program's terminal, for the questions settings resolution asks (see
/// `wright_session::settings::console`).
pub struct TerminalConsole;

#[async_trait::async_trait]
impl wright_session::settings::console::Console for TerminalConsole {
    fn can_ask(&self, json: bool) -> bool {
        crate::ask::can_ask(json)
    }
    fn yes(&self, question: &str) -> bool {
        crate::ask::yes(question)
    }
    fn tell(&self, text: &str) {
        tell!("{text}");
    }
    fn pull_question(&self) -> String {
        crate::model_cmd::pull_question()
    }
    async fn pull_default(&self) -> anyhow::Result<()> {
        crate::model_cmd::pull_default().await
    }
}

/// The network allow-list of `run`, `chat`, `resume` and `fork` (not remembered by a
/// conversation: a grant is for the invocation that names it, as `--network` is).
#[derive(Args, Debug, Clone, Default)]
pub struct NetArgs {
    /// A host the model's commands may reach, with the network otherwise off: HOST (ports
    /// 80 and 443), HOST:PORT, or a glob such as '*.pythonhosted.org' (repeatable). Through
    /// wright's proxy; needs a network namespace (--sandbox auto or namespaces).
    #[arg(long = "allow-host", value_name = "HOST[:PORT]")]
    pub allow_hosts: Vec<String>,
}
