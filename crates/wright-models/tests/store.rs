//! The store on its own: import, listing against the catalog, lookup and removal.

use crate::support::fake_gguf;
use crate::support::files_in;
use crate::support::sha256_hex;
use crate::support::store_for;
use crate::support::FILE;
use crate::support::NAME;
use pretty_assertions::assert_eq;
use wright_models::AddOutcome;
use wright_models::CatalogMatch;
use wright_models::NotGguf;
use wright_models::OnConflict;
use wright_models::Removed;
use wright_models::StoreError;
use wright_models::StoredModel;

fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path
}

#[test]
fn a_model_is_added_listed_resolved_and_removed() {
    let (tmp, store) = store_for(&fake_gguf(1000));
    let mine = fake_gguf(5000);
    let source = write(tmp.path(), "mine.gguf", &mine);

    let added = store.add(&source, None).expect("added");

    let stored = StoredModel {
        name: "mine.gguf".to_string(),
        file: "mine.gguf".to_string(),
        path: store.dir().join("mine.gguf"),
        size: 5000,
        catalog: CatalogMatch::NotInCatalog,
    };
    assert_eq!(
        (added.outcome, &added.model, added.sha256.as_str()),
        (AddOutcome::Copied, &stored, sha256_hex(&mine).as_str())
    );
    assert_eq!(store.list().expect("list"), vec![stored.clone()]);
    assert_eq!(std::fs::read(&stored.path).expect("copy"), mine);

    for name in ["mine", "mine.gguf"] {
        assert_eq!(store.resolve(name).expect(name), stored.path);
    }
    // Any GGUF file by its path, in the store or not.
    assert_eq!(
        store
            .resolve(source.to_str().expect("utf-8"))
            .expect("path"),
        source
    );

    assert_eq!(
        store.remove("mine").expect("removed"),
        Removed {
            file: "mine.gguf".to_string(),
            freed: 5000
        }
    );
    assert_eq!(store.list().expect("list"), Vec::new());
    assert_eq!(files_in(store.dir()), Vec::<String>::new());
    assert_eq!(
        store.resolve("mine").expect_err("gone").to_string(),
        format!(
            "no model 'mine' in the store ({}); the store is empty",
            store.dir().display()
        )
    );
}

#[test]
fn a_catalog_file_added_by_hand_is_listed_as_verified_under_its_catalog_name() {
    let body = fake_gguf(2000);
    let (tmp, store) = store_for(&body);
    // What the offline message tells the user to do: download by hand, then add; the
    // browser may have renamed it.
    let downloaded = write(tmp.path(), "tiny-q4 (1).gguf", &body);

    let added = store.add(&downloaded, None).expect("added");

    let entry = &store.catalog()[0];
    assert_eq!(
        (
            added.model.file.as_str(),
            added.model.name.as_str(),
            added.model.catalog
        ),
        (FILE, NAME, CatalogMatch::Verified(entry))
    );
    assert_eq!(
        store.resolve(NAME).expect("by catalog name"),
        store.dir().join(FILE)
    );

    // Under a name of the user's choosing it is still recognised by its digest, and its
    // catalog name still finds it.
    let other = store
        .add(&downloaded, Some("my-copy"))
        .expect("added as my-copy");
    assert_eq!(
        (other.model.file.as_str(), other.model.catalog),
        ("my-copy.gguf", CatalogMatch::Verified(entry))
    );
    store.remove(NAME).expect("removed");
    assert_eq!(
        store.resolve(NAME).expect("by digest"),
        store.dir().join("my-copy.gguf")
    );
}

#[test]
fn files_placed_by_hand_are_unchecked_or_differ_and_non_models_are_not_listed() {
    let body = fake_gguf(2000);
    let (_tmp, store) = store_for(&body);
    let entry = &store.catalog()[0];
    write(store.dir(), FILE, &body);
    write(store.dir(), "other.gguf.part", b"GGUF half");
    write(store.dir(), ".import-x.tmp", b"GGUF temp");
    write(store.dir(), "notes.txt", b"hello");

    let listed = store.list().expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].catalog, CatalogMatch::Unchecked(entry));

    write(store.dir(), FILE, &fake_gguf(1999));
    assert_eq!(
        store.list().expect("list")[0].catalog,
        CatalogMatch::Differs(entry)
    );
}

#[test]
fn a_catalog_model_not_yet_downloaded_is_named_as_such() {
    let (_tmp, store) = store_for(&fake_gguf(100));
    assert_eq!(
        store.resolve(NAME).expect_err("not downloaded").to_string(),
        format!(
            "model '{NAME}' is in the catalog but not in the store ({}): download it first",
            store.dir().display()
        )
    );
}

#[test]
fn files_that_are_not_gguf_are_refused_and_leave_nothing() {
    let (tmp, store) = store_for(&fake_gguf(100));
    let cases = [
        (
            "page.gguf",
            b"<!doctype html><title>404</title>".to_vec(),
            NotGguf::Html,
        ),
        (
            "pointer.gguf",
            b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 1\n".to_vec(),
            NotGguf::LfsPointer,
        ),
        (
            "zip.gguf",
            b"PK\x03\x04 not a model".to_vec(),
            NotGguf::OtherContent,
        ),
        ("empty.gguf", Vec::new(), NotGguf::TooShort),
    ];
    for (name, bytes, reason) in cases {
        let source = write(tmp.path(), name, &bytes);
        match store.add(&source, None) {
            Err(StoreError::NotGguf { path, reason: got }) => {
                assert_eq!((path, got), (source.clone(), reason), "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }
        assert!(matches!(
            store.resolve(source.to_str().expect("utf-8")),
            Err(StoreError::NotGguf { .. })
        ));
    }
    let old = write(tmp.path(), "old.gguf", b"GGUF\x01\x00\x00\x00");
    assert_eq!(
        store.add(&old, None).expect_err("version 1").to_string(),
        format!(
            "{} is GGUF version 1, which wright does not read (versions 2 and 3 are)",
            old.display()
        )
    );
    assert!(matches!(
        store.add(tmp.path(), None),
        Err(StoreError::NotAFile { .. })
    ));
    assert_eq!(files_in(store.dir()), Vec::<String>::new());
}

#[test]
fn a_different_file_of_the_same_name_is_kept_unless_replacing_is_asked_for() {
    let (tmp, store) = store_for(&fake_gguf(100));
    let first = write(tmp.path(), "first.gguf", &fake_gguf(3000));
    let mut changed = fake_gguf(3000);
    changed[2999] ^= 0xFF;
    let same_size = write(tmp.path(), "same-size.gguf", &changed);
    let longer = write(tmp.path(), "longer.gguf", &fake_gguf(4000));

    store.add(&first, Some("model")).expect("first");
    assert_eq!(
        store.add(&first, Some("model")).expect("again").outcome,
        AddOutcome::AlreadyPresent
    );
    for source in [&same_size, &longer] {
        assert_eq!(
            store.add(source, Some("model")).expect_err("refused").to_string(),
            format!(
                "a different file named model.gguf is already in the store ({}); remove it or replace it",
                store.dir().display()
            )
        );
    }
    assert_eq!(
        std::fs::read(store.dir().join("model.gguf")).expect("kept"),
        fake_gguf(3000)
    );

    let replaced = store
        .add_with(&same_size, Some("model"), OnConflict::Replace)
        .expect("replaced");
    assert_eq!(replaced.outcome, AddOutcome::Replaced);
    assert_eq!(replaced.sha256, sha256_hex(&changed));
    assert_eq!(
        std::fs::read(store.dir().join("model.gguf")).expect("new"),
        changed
    );
    // Only the model and its digest record: no temporary file left over.
    assert_eq!(
        files_in(store.dir()),
        vec![".model.gguf.sha256".to_string(), "model.gguf".to_string()]
    );
}

#[test]
fn names_cannot_leave_the_store() {
    let (tmp, store) = store_for(&fake_gguf(100));
    let source = write(tmp.path(), "m.gguf", &fake_gguf(100));
    for name in ["../escape", "sub/dir", ".hidden"] {
        assert!(
            matches!(
                store.add(&source, Some(name)),
                Err(StoreError::BadName { .. })
            ),
            "{name}"
        );
        assert!(
            matches!(store.remove(name), Err(StoreError::BadName { .. })),
            "{name}"
        );
    }
}

#[test]
fn removing_a_model_also_drops_its_unfinished_download() {
    let (_tmp, store) = store_for(&fake_gguf(100));
    write(store.dir(), &format!("{FILE}.part"), &[0u8; 700]);
    assert_eq!(
        store.remove(NAME).expect("removed"),
        Removed {
            file: FILE.to_string(),
            freed: 700
        }
    );
    assert!(matches!(
        store.remove(NAME),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn the_default_model_is_the_catalogs_when_stored_else_the_only_one() {
    use wright_models::DefaultModel;
    let body = fake_gguf(1000);
    let (tmp, store) = store_for(&body);
    assert_eq!(
        store.default_model(NAME).expect("empty"),
        DefaultModel::Empty
    );

    let other = write(tmp.path(), "other.gguf", &fake_gguf(3000));
    store.add(&other, None).expect("add other");
    let only = store.list().expect("list");
    assert_eq!(
        store.default_model(NAME).expect("one"),
        DefaultModel::Found(only[0].clone())
    );

    let third = write(tmp.path(), "third.gguf", &fake_gguf(4000));
    store.add(&third, None).expect("add third");
    assert!(matches!(
        store.default_model(NAME).expect("several"),
        DefaultModel::Several(models) if models.len() == 2
    ));

    // The catalog's model, added under a name of the user's: recognised by its digest.
    let catalog_copy = write(tmp.path(), "mine.gguf", &body);
    store
        .add(&catalog_copy, Some("my-name"))
        .expect("add the catalog's file");
    match store.default_model(NAME).expect("default") {
        DefaultModel::Found(model) => {
            assert_eq!(std::fs::read(&model.path).expect("read"), body, "{model:?}")
        }
        other => panic!("{other:?}"),
    }
}
