//! `wright model ls` / `add PATH` / `rm NAME` / `pull NAME|URL`: the GGUF files of wright's
//! embedded engine, kept in its store (`WRIGHT_MODELS_DIR`, else `~/.cache/wright/models`)
//! by `wright_models`. Downloads resume, are checked against the catalog's checksums, and
//! show their size, speed and time left.

use anyhow::Context;
use anyhow::Result;
use clap::Subcommand;
use std::io::IsTerminal;
use std::path::PathBuf;
use wright_models::CatalogMatch;
use wright_models::Checksum;
use wright_models::Progress;
use wright_models::Store;
use wright_models::CATALOG;
use wright_models::DEFAULT_MODEL;

#[derive(Subcommand)]
pub enum ModelCommand {
    /// List the stored models, and the catalog's models you can pull.
    Ls,
    /// Import a GGUF file you already have (an offline machine's way in).
    Add {
        /// The .gguf file.
        path: PathBuf,
        /// The name to store it under (default: the catalog's, or its file name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Delete a stored model (and any unfinished download of it).
    Rm {
        /// Its name, as `wright model ls` shows it.
        name: String,
    },
    /// Download a catalog model by name, or any .gguf by its https URL.
    Pull {
        /// A catalog name (`wright model ls` lists them) or an https URL.
        name: String,
    },
}

pub async fn model(command: ModelCommand) -> Result<()> {
    let store = Store::default_location().context("cannot open the model store")?;
    match command {
        ModelCommand::Ls => list(&store),
        ModelCommand::Add { path, name } => {
            let added = store.add(&path, name.as_deref())?;
            say!("{}  {}", added.model.name, added.model.path.display());
            Ok(())
        }
        ModelCommand::Rm { name } => {
            let removed = store.remove(&name)?;
            say!(
                "removed {} ({})",
                removed.file,
                wright_engine::gib(removed.freed)
            );
            Ok(())
        }
        ModelCommand::Pull { name } => {
            pull(&name, &store).await?;
            Ok(())
        }
    }
}

/// Downloads `name` (a catalog name or an https URL) into `store`, drawing the progress
/// on stderr, and says where it is.
async fn pull(name: &str, store: &Store) -> Result<()> {
    let live = std::io::stderr().is_terminal();
    // Off a terminal (a log, CI) a line per tenth of the file, not ten a second.
    let mut shown_tenth = None;
    let pulled = wright_models::pull(name, store, |progress: &Progress| {
        if live {
            draw(progress, true);
            return;
        }
        let tenth = progress
            .total
            .filter(|total| *total > 0)
            .map(|total| progress.done.saturating_mul(10) / total);
        if tenth != shown_tenth {
            shown_tenth = tenth;
            draw(progress, false);
        }
    })
    .await?;
    if live {
        tell!();
    }
    let checked = match pulled.checksum {
        Checksum::MatchesCatalog => "sha256 checked against the catalog",
        Checksum::NoneToCompare => "no checksum to compare (not a catalog model)",
    };
    say!("{}  {}", pulled.model.path.display(), checked);
    Ok(())
}

/// The catalog's default model, for a run that found no server and no stored model.
pub async fn pull_default() -> Result<()> {
    let store = Store::default_location().context("cannot open the model store")?;
    tell!(
        "downloading {} into {} (`wright model rm {}` deletes it)",
        DEFAULT_MODEL,
        store.dir().display(),
        DEFAULT_MODEL
    );
    pull(DEFAULT_MODEL, &store).await
}

/// The question asked before [`pull_default`], with the size and source of the download.
pub fn pull_question() -> String {
    let size = wright_models::catalog::find(CATALOG, DEFAULT_MODEL)
        .map_or_else(String::new, |entry| {
            format!(" ({}, {})", wright_engine::gib(entry.size), entry.license)
        });
    format!(
        "No model server answers here and no model is stored. Download {DEFAULT_MODEL}{size} from {} and run it inside wright?",
        wright_models::location::base_url()
    )
}

fn list(store: &Store) -> Result<()> {
    let stored = store.list()?;
    if stored.is_empty() {
        say!("no models stored in {}", store.dir().display());
    }
    for model in &stored {
        let how = match model.catalog {
            CatalogMatch::NotInCatalog => "",
            CatalogMatch::Verified(_) => "  (catalog, verified)",
            CatalogMatch::Unchecked(_) => "  (catalog, not checked)",
            CatalogMatch::Differs(_) => "  (differs from the catalog's file)",
        };
        say!(
            "{:<28} {:>9}  {}{how}",
            model.name,
            wright_engine::gib(model.size),
            model.path.display()
        );
    }
    say!("\ncatalog (wright model pull NAME):");
    for entry in CATALOG {
        say!(
            "  {:<26} {:>9}  {}",
            entry.name,
            wright_engine::gib(entry.size),
            entry.description
        );
    }
    Ok(())
}

/// One line, redrawn in place on a terminal; a line per report elsewhere.
fn draw(progress: &Progress, live: bool) {
    let total = progress
        .total
        .map_or_else(|| "?".to_string(), wright_engine::gib);
    let left = progress
        .time_left
        .map_or_else(String::new, |t| format!(", {} s left", t.as_secs()));
    let line = format!(
        "{} of {total} at {:.1} MB/s{left}",
        wright_engine::gib(progress.done),
        progress.bytes_per_second / 1e6
    );
    if live {
        crate::screen::err_live("\r\x1b[2K", &line, "");
    } else {
        tell!("{line}");
    }
}
