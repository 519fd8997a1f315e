use super::*;

/// A user's file holding `text`, read: the config, or the error in words.
fn read(text: &str) -> Result<Config, String> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("wright-assist-{}-{n}.toml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let read = Config::default().with_user_file(&path);
    std::fs::remove_file(&path).unwrap();
    read.map_err(|err| err.to_string())
}

fn file(text: &str) -> Config {
    read(text).unwrap()
}

fn file_err(text: &str) -> String {
    read(text).unwrap_err()
}

#[test]
fn the_level_and_a_piece_apart_are_read_from_the_assist_table() {
    let (assist, warnings) =
        Assist::from_config(&file("[assist]\nlevel = \"on\"\nfirst_look = \"off\"\n"));
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(assist.level, Level::On);
    assert_eq!(assist.level_of(Piece::FirstLook), Level::Off);
    assert_eq!(assist.level_of(Piece::Reading), Level::On);
    assert_eq!(assist.describe(), "on, first-look off");
    let (assist, _) = Assist::from_config(&Config::default());
    assert_eq!(assist, Assist::default());
}

#[test]
fn a_bad_value_is_refused_with_the_choices() {
    for (text, key) in [
        ("[assist]\nlevel = \"sometimes\"\n", "assist.level"),
        ("[assist]\nretest = \"yes\"\n", "assist.retest"),
        ("[run]\nfirst_look = \"maybe\"\n", "run.first_look"),
    ] {
        let err = file_err(text);
        assert!(
            err.ends_with(&format!("line 2: {key} must be one of auto, on, off")),
            "{err}"
        );
    }
    let err = file_err("[assist]\nfirst_loook = \"on\"\n");
    assert!(err.contains("did you mean assist.first_look?"), "{err}");
}

#[test]
fn the_old_keys_and_flags_still_work_with_a_warning_naming_the_new_one() {
    let config = file("map = \"off\"\n[run]\nfirst_look = \"on\"\n").with(
        "run.retest",
        toml::Value::String("off".into()),
        Origin::Flag("--retest".into()),
    );
    let (assist, warnings) = Assist::from_config(&config);
    assert_eq!(assist.level_of(Piece::Map), Level::Off);
    assert_eq!(assist.level_of(Piece::FirstLook), Level::On);
    assert_eq!(assist.level_of(Piece::Retest), Level::Off);
    assert_eq!(assist.level_of(Piece::Reading), Level::Auto);
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(
        warnings[0].ends_with(":1: map is deprecated: use map = \"off\" in [assist]"),
        "{warnings:?}"
    );
    assert!(
        warnings[1]
            .ends_with(":3: run.first_look is deprecated: use first_look = \"on\" in [assist]"),
        "{warnings:?}"
    );
    assert_eq!(
        warnings[2],
        "--retest is deprecated: use --assist-piece retest=off"
    );
    // The new key wins over the old one at the same precedence; a flag over a file.
    let both = file("[run]\nreading = \"on\"\n[assist]\nreading = \"off\"\n");
    assert_eq!(
        Assist::from_config(&both).0.level_of(Piece::Reading),
        Level::Off
    );
    let flagged = both.with(
        "run.reading",
        toml::Value::String("on".into()),
        Origin::Flag("--reading".into()),
    );
    assert_eq!(
        Assist::from_config(&flagged).0.level_of(Piece::Reading),
        Level::On
    );
}

#[test]
fn auto_follows_the_name_and_the_probe_and_on_and_off_hold_whatever_the_model() {
    let big = Policy::default();
    let small = Policy {
        name_says_small: true,
        ..Policy::default()
    };
    let no_calls = Policy {
        probe_found_no_native_calls: true,
        ..Policy::default()
    };
    let auto = Assist::default();
    assert!(!auto.at_start(Piece::FirstLook, &big));
    assert!(auto.at_start(Piece::FirstLook, &small));
    assert!(auto.at_start(Piece::Candidates, &no_calls));
    assert!(auto.at_start(Piece::Map, &big));
    assert!(auto.at_start(Piece::Retest, &big));
    assert!(auto.watches(&big));
    assert!(!auto.watches(&small));
    let off = Assist::at(Level::Off);
    assert!(!off.at_start(Piece::Map, &small));
    assert!(!off.watches(&big));
    let on = Assist::at(Level::Off).with(Piece::FirstLook, Level::On);
    assert!(on.at_start(Piece::FirstLook, &big));
    assert!(!on.at_start(Piece::Reading, &big));
    assert_eq!(small.need_at_start(), Some(Need::NameSaysSmall));
    assert_eq!(no_calls.need_at_start(), Some(Need::NoNativeCalls));
}

#[test]
fn during_a_run_a_loop_or_enough_unreadable_calls_show_the_need() {
    assert_eq!(Policy::during(0, None), None);
    assert_eq!(Policy::during(UNREADABLE_CALLS - 1, None), None);
    assert_eq!(
        Policy::during(UNREADABLE_CALLS, None),
        Some(Need::UnreadableCalls {
            count: UNREADABLE_CALLS
        })
    );
    assert_eq!(
        Policy::during(0, Some("the same action failed 3 times")),
        Some(Need::Loop {
            pattern: "the same action failed 3 times".into()
        })
    );
}

#[test]
fn a_piece_setting_is_read_or_refused_with_the_choices() {
    assert_eq!(
        parse_piece_setting("first-look=off"),
        Ok((Piece::FirstLook, Level::Off))
    );
    assert_eq!(
        parse_piece_setting("last_change = on"),
        Ok((Piece::LastChange, Level::On))
    );
    let err = parse_piece_setting("first-look").unwrap_err();
    assert!(err.contains("PIECE=auto|on|off"), "{err}");
    let err = parse_piece_setting("tests=on").unwrap_err();
    assert!(
            err.ends_with("one of map, first-look, last-change, reading, candidates, retest, account, stop-when-done, file-versions, next-look"),
            "{err}"
        );
    let err = parse_piece_setting("retest=sometimes").unwrap_err();
    assert_eq!(
        err,
        "retest='sometimes': the level must be one of auto, on, off"
    );
}

#[test]
fn every_piece_has_a_word_a_key_and_an_old_alias_known_to_the_schema() {
    for piece in Piece::ALL {
        assert_eq!(Piece::parse(piece.word()), Some(piece));
        assert_eq!(Piece::parse(piece.key()), Some(piece));
        let parts: Vec<&str> = piece.path().split('.').collect();
        assert_eq!(crate::schema::key(&parts).unwrap().doc, piece.doc());
        if let Some((old, _)) = piece.old_key() {
            let old: Vec<&str> = old.split('.').collect();
            assert!(crate::schema::key(&old).is_some(), "{:?}", piece.old_key());
        }
    }
    assert!(pieces_help().contains(FIRST_LOOK_DOC));
}
