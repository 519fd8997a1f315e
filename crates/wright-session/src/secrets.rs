//! The secrets a conversation's shell is given: those its front end names for one run
//! (`--secret NAME`) and those the user's own configuration grants on its repository
//! (`[repos."PATH"].secrets`; a repository's file cannot grant them), read from the
//! user's store. A granted secret reaches only the terminal's shell, as an environment
//! variable, and the `Masker` built from the same values masks it out of everything the
//! conversation logs, shows or sends. A name not stored is an error before anything
//! starts.

use anyhow::Context;
use anyhow::Result;
use std::sync::Arc;
use wright_config::secrets::SecretStore;
use wright_tools::Masker;

/// The secrets of one conversation. Its `Debug` shows their names, never their values.
#[derive(Clone, Default)]
pub struct Grants {
    names: Vec<String>,
    env: Vec<(String, String)>,
    masker: Arc<Masker>,
}

impl std::fmt::Debug for Grants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grants")
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}

impl Grants {
    /// No secret.
    pub fn none() -> Self {
        Self::default()
    }

    /// The secrets `asked` for (`--secret`) and `granted` by the user's configuration for
    /// the repository, each once, with their values from `store`.
    pub fn resolve(asked: &[String], granted: &[String], store: &SecretStore) -> Result<Self> {
        let mut names: Vec<String> = Vec::new();
        for name in asked.iter().chain(granted) {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        if names.is_empty() {
            return Ok(Self::none());
        }
        let env = store.values(&names).with_context(|| {
            format!(
                "cannot give the conversation the secret{} {}",
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            )
        })?;
        let masker = Masker::new(&env).context("cannot mask the granted secrets")?;
        Ok(Self {
            names,
            env,
            masker: Arc::new(masker),
        })
    }

    /// Exactly the secrets `given` (a server's user's own, from its database), each
    /// masked as stored ones are.
    pub fn given(given: &[(String, String)]) -> Result<Self> {
        if given.is_empty() {
            return Ok(Self::none());
        }
        let masker = Masker::new(given).context("cannot mask the granted secrets")?;
        Ok(Self {
            names: given.iter().map(|(name, _)| name.clone()).collect(),
            env: given.to_vec(),
            masker: Arc::new(masker),
        })
    }

    /// The names granted (what the log's start records).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The variables the shell gets.
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// What masks them out of everything logged, shown or sent.
    pub fn masker(&self) -> Arc<Masker> {
        self.masker.clone()
    }

    /// `base` (the shell's scrubbed environment) with the secrets added; a secret named
    /// as a variable wright sets itself (`PATH`, `HOME`, …) is refused, not let replace it.
    pub fn add_to(&self, base: &[(String, String)]) -> Result<Vec<(String, String)>> {
        let mut env = base.to_vec();
        for (name, value) in &self.env {
            refuse_reserved(name)?;
            if base.iter().any(|(key, _)| key == name) {
                return Err(reserved(name));
            }
            env.push((name.clone(), value.clone()));
        }
        Ok(env)
    }
}

/// The one rule for a secret's name, at `wright secrets set` and when a run grants it: not
/// a variable wright sets for the shell itself (see `wright_sandbox::set_for_shell`).
pub fn refuse_reserved(name: &str) -> Result<()> {
    if wright_sandbox::set_for_shell(name) {
        return Err(reserved(name));
    }
    Ok(())
}

fn reserved(name: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "the secret {name} has the name of a variable wright sets for the shell itself; store it under another name (wright secrets set OTHER_NAME)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_once_values_never_show_and_unknown_names_fail() {
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::at(&dir.path().join("s"));
        store.set("TOKEN", "value-one").unwrap();
        store.set("OTHER", "value-two").unwrap();
        let grants =
            Grants::resolve(&["TOKEN".into()], &["OTHER".into(), "TOKEN".into()], &store).unwrap();
        assert_eq!(grants.names(), ["TOKEN", "OTHER"]);
        let shown = format!("{grants:?}");
        assert!(!shown.contains("value-"), "{shown}");
        let env = grants.add_to(&[("PATH".into(), "/bin".into())]).unwrap();
        assert_eq!(env.len(), 3);
        let err = Grants::resolve(&["NOPE".into()], &[], &store).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "cannot give the conversation the secret NOPE: there is no secret named NOPE; stored: OTHER, TOKEN"
        );
        store.set("PATH", "x").unwrap();
        let path = Grants::resolve(&["PATH".into()], &[], &store).unwrap();
        assert!(path.add_to(&[("PATH".into(), "/bin".into())]).is_err());
    }
}
