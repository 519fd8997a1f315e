//! The help wright gives a model that needs it, as one typed setting (`[assist]` in a
//! configuration file, `--assist` and `--assist-piece` on the command line), and the one
//! policy that decides what `auto` means.
//!
//! The help comes in pieces (`Piece`): the workspace map, the first look (wright runs the
//! tests before the first step), what the start commit changed, the failure read apart,
//! versions of the failing function tried, the check of the work after each edit. The
//! setting is a level for them all (`auto`, `on`, `off`) and, for any piece, a level of its
//! own that wins over it. Each piece is defined here once — its key, its flag word, what
//! it does — and the configuration schema, `--help` and the generated references all read
//! that one definition.
//!
//! `auto` is decided by `Policy`: the pieces every model profits from (map, last change,
//! retest) are on; the pieces for a model that needs help (first look, reading,
//! candidates) are on when the model's name says 8B or less, or the connection probe found
//! that it does not make native tool calls; and a model that turns out to need help during
//! a run — unreadable calls, a loop — gets the first look then (`Policy::during`). Each
//! decision during a run is an `assist` event of the log, so resume and replay decide the
//! same.
//!
//! Guarantees: the six keys and flags of earlier versions (`run.first_look`, `map`, …,
//! `--first-look`, …) keep working as aliases of their piece; each one set gives one line
//! of warning naming its replacement (`Assist::from_config`).

use crate::Config;
use crate::Origin;
use crate::Sourced;
pub use wright_protocol::Need;

/// How much of the help a piece (or all of them) gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// As the policy decides from the model's name and what it does (see `Policy`).
    Auto,
    On,
    Off,
}

impl Level {
    pub const WORDS: &'static [&'static str] = &["auto", "on", "off"];

    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "auto" => Some(Level::Auto),
            "on" => Some(Level::On),
            "off" => Some(Level::Off),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Auto => "auto",
            Level::On => "on",
            Level::Off => "off",
        }
    }
}

/// For whom `auto` turns a piece on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// Every model: cheap, and no model is worse for it.
    Everyone,
    /// A model that needs help: its name says it is small, or it showed it.
    NeedsHelp,
}

/// One piece of the help. The names are what the piece *does* as the model sees it, so a
/// newcomer reading `first_look = "off"` knows what goes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Piece {
    /// A map of the workspace at the head of the first message.
    Map,
    /// wright runs the tests itself before the first step and shows the result.
    FirstLook,
    /// After a failing first look, what the start commit changed.
    LastChange,
    /// After a failing first look, the model asked apart which line causes it.
    Reading,
    /// After a failing first look, versions of the failing function asked apart and tried.
    Candidates,
    /// After a failing first look, the tests run again after each edit and at `finish`.
    Retest,
    /// At `finish`, the change read by wright (git) and set beside the model's words.
    Account,
    /// Once a version wright kept passes, the run ends at the next call (`finish`).
    StopWhenDone,
    /// After a passing first look, versions of the file the task is about asked apart.
    FileVersions,
    /// A view or a command made again is told what comes next.
    NextLook,
}

/// What each piece does, once: the schema's key table and `--help` read these.
pub const MAP_DOC: &str = "a map of the workspace (files, languages, test and build commands, recent commits) at the head of a new conversation's first message; auto: on";
pub const FIRST_LOOK_DOC: &str = "before the first step, wright runs the test command the workspace map found (in the sandbox, at most 60 s) and shows the model its result; auto: for a model that needs help (its name says 8B or less, the probe found no native tool calls), or later in the run once it shows it does (unreadable calls, a loop)";
pub const LAST_CHANGE_DOC: &str = "when the first look fails, show the model what the start commit changed (its diff, bounded; a regression is most often there); auto: on";
pub const READING_DOC: &str = "when the first look fails and its failing line calls code in another file, ask the model apart (no tools, greedy, a short answer) which line of that file causes it, and show the answer after the failure; auto: for a model that needs help";
pub const CANDIDATES_DOC: &str = "when the first look fails and its failing line calls a function in another file, ask the model apart up to 4 times for that function corrected, run the failing command with each version in place (in the sandbox), put the file back unless it passes, and keep the first that passes, shown to the model; auto: for a model that needs help";
pub const ACCOUNT_DOC: &str = "at each finish, wright reads the change itself (git status, in the sandbox): a finish that claims a change while no file changed is sent back once, then the run stops, not finished (exit 3); when the model's words name a file the change does not touch, or wright kept a version itself, the report gives wright's own account (the files changed, what wright did) next to them; auto: on";
pub const STOP_WHEN_DONE_DOC: &str = "once a version wright kept (asked apart) makes the check pass, the next request allows only finish, and any other call is taken as finish: the run ends in at most one more model call, through finish (hooks and --review apply); a finish sent back, a failing check or a new message lets the model work again; auto: on";
pub const FILE_VERSIONS_DOC: &str = "when the first look passes (a task with no failing test: add an option, change a default), find the file(s) the task is about (its names and words; configuration files too), ask the model apart for a short shell check of the task (discarded if it passes before any change) and for the file changed, whole (up to 2 files, 2 versions each), run the tests and the check with each version in the sandbox, and keep the first with which both pass; the check is wright's own, never committed; auto: for a model that needs help";
pub const NEXT_LOOK_DOC: &str = "a file_editor view or a terminal command the model makes a second time in a run gets a note in its result: the lines of that file it has not viewed yet, else the files the task names that it has not viewed, else to make the change; auto: for a model that needs help";
pub const RETEST_DOC: &str = "when the first look failed, run its command again after each edit of the code and when the model calls finish (a finish while it still fails is sent back twice, then the run stops, not finished); when it passed, the tests must pass again at finish, and once a version was kept for the task an edit that breaks them is undone; auto: on";

impl Piece {
    pub const ALL: [Piece; 10] = [
        Piece::Map,
        Piece::FirstLook,
        Piece::LastChange,
        Piece::Reading,
        Piece::Candidates,
        Piece::Retest,
        Piece::Account,
        Piece::StopWhenDone,
        Piece::FileVersions,
        Piece::NextLook,
    ];

    /// Its key in the `[assist]` table.
    pub fn key(self) -> &'static str {
        match self {
            Piece::Map => "map",
            Piece::FirstLook => "first_look",
            Piece::LastChange => "last_change",
            Piece::Reading => "reading",
            Piece::Candidates => "candidates",
            Piece::Retest => "retest",
            Piece::Account => "account",
            Piece::StopWhenDone => "stop_when_done",
            Piece::FileVersions => "file_versions",
            Piece::NextLook => "next_look",
        }
    }

    /// Its word on the command line (`--assist-piece first-look=off`).
    pub fn word(self) -> &'static str {
        match self {
            Piece::Map => "map",
            Piece::FirstLook => "first-look",
            Piece::LastChange => "last-change",
            Piece::Reading => "reading",
            Piece::Candidates => "candidates",
            Piece::Retest => "retest",
            Piece::Account => "account",
            Piece::StopWhenDone => "stop-when-done",
            Piece::FileVersions => "file-versions",
            Piece::NextLook => "next-look",
        }
    }

    /// The piece a command-line word or a key names (`first-look` or `first_look`).
    pub fn parse(word: &str) -> Option<Self> {
        Piece::ALL
            .into_iter()
            .find(|piece| piece.word() == word || piece.key() == word)
    }

    pub fn doc(self) -> &'static str {
        match self {
            Piece::Map => MAP_DOC,
            Piece::FirstLook => FIRST_LOOK_DOC,
            Piece::LastChange => LAST_CHANGE_DOC,
            Piece::Reading => READING_DOC,
            Piece::Candidates => CANDIDATES_DOC,
            Piece::Retest => RETEST_DOC,
            Piece::Account => ACCOUNT_DOC,
            Piece::StopWhenDone => STOP_WHEN_DONE_DOC,
            Piece::FileVersions => FILE_VERSIONS_DOC,
            Piece::NextLook => NEXT_LOOK_DOC,
        }
    }

    pub fn audience(self) -> Audience {
        match self {
            Piece::Map
            | Piece::LastChange
            | Piece::Retest
            | Piece::Account
            | Piece::StopWhenDone => Audience::Everyone,
            Piece::FirstLook
            | Piece::Reading
            | Piece::Candidates
            | Piece::FileVersions
            | Piece::NextLook => Audience::NeedsHelp,
        }
    }

    /// Its key in the `[assist]` table, dotted (`assist.first_look`).
    pub fn path(self) -> &'static str {
        match self {
            Piece::Map => "assist.map",
            Piece::FirstLook => "assist.first_look",
            Piece::LastChange => "assist.last_change",
            Piece::Reading => "assist.reading",
            Piece::Candidates => "assist.candidates",
            Piece::Retest => "assist.retest",
            Piece::Account => "assist.account",
            Piece::StopWhenDone => "assist.stop_when_done",
            Piece::FileVersions => "assist.file_versions",
            Piece::NextLook => "assist.next_look",
        }
    }

    /// What it is, in a few words (`--help`'s short list).
    pub fn summary(self) -> &'static str {
        match self {
            Piece::Map => "the workspace map",
            Piece::FirstLook => "wright runs the tests before the first step",
            Piece::LastChange => "what the start commit changed",
            Piece::Reading => "the failure read apart",
            Piece::Candidates => "versions of the failing function tried",
            Piece::Retest => "the tests run again after each edit",
            Piece::Account => "the change read by wright at finish",
            Piece::StopWhenDone => "the run ends once a kept version passes",
            Piece::FileVersions => "versions of the file a task with no failing test is about",
            Piece::NextLook => "a look made again is told what comes next",
        }
    }

    /// The key of earlier versions that is now an alias of this piece, and its flag
    /// (`None` for a piece that came after the `[assist]` table).
    pub fn old_key(self) -> Option<(&'static str, &'static str)> {
        match self {
            Piece::Map => Some(("map", "--map")),
            Piece::FirstLook => Some(("run.first_look", "--first-look")),
            Piece::LastChange => Some(("run.last_change", "--last-change")),
            Piece::Reading => Some(("run.reading", "--reading")),
            Piece::Candidates => Some(("run.candidates", "--candidates")),
            Piece::Retest => Some(("run.retest", "--retest")),
            Piece::Account | Piece::StopWhenDone | Piece::FileVersions | Piece::NextLook => None,
        }
    }
}

/// A `--assist-piece` value, `PIECE=LEVEL`, read; the error says what is wrong and what
/// would be right.
pub fn parse_piece_setting(text: &str) -> Result<(Piece, Level), String> {
    let words: Vec<&str> = Piece::ALL.iter().map(|piece| piece.word()).collect();
    let Some((piece, level)) = text.split_once('=') else {
        return Err(format!(
            "'{text}' is not PIECE=auto|on|off (for example first-look=off); the pieces: {}",
            words.join(", ")
        ));
    };
    let piece = Piece::parse(piece.trim()).ok_or_else(|| {
        format!(
            "'{}' is not a piece of the help; one of {}",
            piece.trim(),
            words.join(", ")
        )
    })?;
    let level = Level::parse(level.trim()).ok_or_else(|| {
        format!(
            "{}='{}': the level must be one of auto, on, off",
            piece.word(),
            level.trim()
        )
    })?;
    Ok((piece, level))
}

/// The key of the level for every piece.
pub const LEVEL_KEY: &str = "assist.level";
pub const LEVEL_DOC: &str = "how much wright helps the model, every piece at once (each piece below may say otherwise): auto (as the model needs: by its name, the connection probe, and what it does during the run), on, off (--assist); default auto";

/// The short `--help` of `--assist-piece`: the pieces in a few words each.
pub fn pieces_short_help() -> String {
    let pieces: Vec<String> = Piece::ALL
        .iter()
        .map(|piece| format!("{} ({})", piece.word(), piece.summary()))
        .collect();
    format!(
        "One piece of the help set apart from --assist: PIECE=auto|on|off, repeatable. The pieces: {}",
        pieces.join(", ")
    )
}

/// The long `--help` of `--assist-piece`: the pieces and what each does, from their one
/// definition.
pub fn pieces_help() -> String {
    let mut help = String::from(
        "One piece of the help set apart from --assist: PIECE=auto|on|off, repeatable. The pieces:",
    );
    for piece in Piece::ALL {
        help.push_str(&format!("\n  {}: {}.", piece.word(), piece.doc()));
    }
    help
}

/// The help asked for: a level for every piece, and the pieces set apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assist {
    pub level: Level,
    /// Pieces with a level of their own, in `Piece::ALL` order.
    pieces: Vec<(Piece, Level)>,
}

impl Default for Assist {
    fn default() -> Self {
        Self {
            level: Level::Auto,
            pieces: Vec::new(),
        }
    }
}

impl Assist {
    /// Every piece at `level`.
    pub fn at(level: Level) -> Self {
        Self {
            level,
            pieces: Vec::new(),
        }
    }

    /// With `piece` at `level`, whatever the level for all says.
    pub fn with(mut self, piece: Piece, level: Level) -> Self {
        self.pieces.retain(|(p, _)| *p != piece);
        self.pieces.push((piece, level));
        self.pieces.sort();
        self
    }

    /// The level `piece` is at: its own, else the one for all.
    pub fn level_of(&self, piece: Piece) -> Level {
        self.pieces
            .iter()
            .find(|(p, _)| *p == piece)
            .map_or(self.level, |(_, level)| *level)
    }

    /// Reads the `[assist]` table of a merged configuration, with the keys of earlier
    /// versions as aliases (a new key wins over an old one set at the same precedence).
    /// Returns the setting and one line of warning for each old key set.
    pub fn from_config(config: &Config) -> (Self, Vec<String>) {
        let level = |sourced: Option<&Sourced>| {
            sourced
                .and_then(|s| s.value.as_str())
                .and_then(Level::parse)
        };
        let mut assist = Assist::at(level(config.get(LEVEL_KEY)).unwrap_or(Level::Auto));
        let mut warnings = Vec::new();
        for piece in Piece::ALL {
            let new = config.get(piece.path());
            let old = piece.old_key().and_then(|(old_key, old_flag)| {
                let old = config
                    .get(old_key)
                    .filter(|s| s.origin != Origin::Default)?;
                Some((old, old_key, old_flag))
            });
            if let Some((old, old_key, old_flag)) = old {
                let value = old.value.as_str().unwrap_or_default();
                warnings.push(match &old.origin {
                    Origin::Flag(_) => format!(
                        "{old_flag} is deprecated: use --assist-piece {}={value}",
                        piece.word()
                    ),
                    origin => format!(
                        "{origin}: {old_key} is deprecated: use {} = \"{value}\" in [assist]",
                        piece.key()
                    ),
                });
            }
            let old = old.map(|(old, _, _)| old);
            let chosen = match (new, old) {
                (Some(new), Some(old)) if old.origin.rank() > new.origin.rank() => Some(old),
                (Some(new), _) => Some(new),
                (None, old) => old,
            };
            if let Some(level) = level(chosen) {
                assist = assist.with(piece, level);
            }
        }
        (assist, warnings)
    }

    /// Whether `piece` is on at the start of a run, by `policy` where it is `auto`.
    pub fn at_start(&self, piece: Piece, policy: &Policy) -> bool {
        match (self.level_of(piece), piece.audience()) {
            (Level::On, _) => true,
            (Level::Off, _) => false,
            (Level::Auto, Audience::Everyone) => true,
            (Level::Auto, Audience::NeedsHelp) => policy.need_at_start().is_some(),
        }
    }

    /// Whether the policy may still turn the first look on during the run: it is `auto`
    /// and was not on at the start.
    pub fn watches(&self, policy: &Policy) -> bool {
        self.level_of(Piece::FirstLook) == Level::Auto && policy.need_at_start().is_none()
    }

    /// The pieces the first look turned on during a run brings with it.
    pub fn during_run_pieces(&self) -> Vec<Piece> {
        [Piece::FirstLook, Piece::LastChange, Piece::Retest]
            .into_iter()
            .filter(|piece| *piece == Piece::FirstLook || self.level_of(*piece) != Level::Off)
            .collect()
    }

    /// The setting in words, for a header: `auto` or `auto, first-look off`.
    pub fn describe(&self) -> String {
        let mut words = self.level.as_str().to_string();
        for (piece, level) in &self.pieces {
            words.push_str(&format!(", {} {}", piece.word(), level.as_str()));
        }
        words
    }
}

/// How many unreadable calls in a run show that a model needs help.
pub const UNREADABLE_CALLS: u32 = 2;

/// What wright knows of the model, from which `auto` is decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// The model's name says it has 8B parameters or fewer.
    pub name_says_small: bool,
    /// The connection probe asked for a native tool call and got none (`tool_calling`
    /// auto came to `text`): the model's calls must be read from its words.
    pub probe_found_no_native_calls: bool,
}

impl Policy {
    /// Why the model needs help from the start, if it does: its name, then the probe.
    pub fn need_at_start(&self) -> Option<Need> {
        if self.name_says_small {
            return Some(Need::NameSaysSmall);
        }
        self.probe_found_no_native_calls
            .then_some(Need::NoNativeCalls)
    }

    /// Why a model showed during a run that it needs help, if it did: `unreadable` calls
    /// could not be read this run (`UNREADABLE_CALLS` are enough), or it was told that it
    /// loops (`looped`: what it repeats).
    pub fn during(unreadable: u32, looped: Option<&str>) -> Option<Need> {
        if let Some(pattern) = looped {
            return Some(Need::Loop {
                pattern: pattern.to_string(),
            });
        }
        (unreadable >= UNREADABLE_CALLS).then_some(Need::UnreadableCalls { count: unreadable })
    }
}

#[cfg(test)]
mod tests;
