//! Pulls against the fake hub: whole, resumed, from a server that ignores ranges,
//! interrupted, with a bad checksum, from a custom URL, and with nobody listening.

use crate::support::catalog_for;
use crate::support::fake_gguf;
use crate::support::files_in;
use crate::support::hub::Behaviour;
use crate::support::hub::Hub;
use crate::support::hub::Seen;
use crate::support::sha256_hex;
use crate::support::store_for;
use crate::support::FILE;
use crate::support::NAME;
use crate::support::REPO;
use pretty_assertions::assert_eq;
use wright_models::CatalogMatch;
use wright_models::Checksum;
use wright_models::Progress;
use wright_models::PullError;
use wright_models::Pulled;
use wright_models::Puller;
use wright_models::Stage;
use wright_models::Store;

const LEN: usize = 300_000;

fn catalog_path() -> String {
    format!("/{REPO}/resolve/main/{FILE}")
}

async fn pull_from(
    hub: &Hub,
    name: &str,
    store: &Store,
) -> (Result<Pulled, PullError>, Vec<Progress>) {
    let mut reports = Vec::new();
    let puller = Puller::new()
        .expect("client")
        .with_base_url(&hub.base_url());
    let result = puller
        .pull(name, store, |p: &Progress| reports.push(p.clone()))
        .await;
    (result, reports)
}

#[tokio::test]
async fn a_catalog_model_is_downloaded_verified_and_renamed_into_place() {
    let body = fake_gguf(LEN);
    let (_tmp, store) = store_for(&body);
    let hub = Hub::serve(&catalog_path(), body.clone(), Behaviour::HONOUR_RANGE).await;

    let (result, reports) = pull_from(&hub, NAME, &store).await;

    let pulled = result.expect("pulled");
    let entry = &store.catalog()[0];
    assert_eq!(
        pulled,
        Pulled {
            model: wright_models::StoredModel {
                name: NAME.to_string(),
                file: FILE.to_string(),
                path: store.dir().join(FILE),
                size: LEN as u64,
                catalog: CatalogMatch::Verified(entry),
            },
            url: format!("{}{}", hub.base_url(), catalog_path()),
            sha256: sha256_hex(&body),
            checksum: Checksum::MatchesCatalog,
            resumed_from: 0,
            already_present: false,
        }
    );
    assert_eq!(std::fs::read(store.dir().join(FILE)).expect("read"), body);
    assert_eq!(
        files_in(store.dir()),
        vec![format!(".{FILE}.sha256"), FILE.to_string()]
    );
    assert_eq!(
        hub.seen(),
        vec![Seen {
            path: catalog_path(),
            range: None
        }]
    );
    let last = reports.last().expect("progress reported");
    assert_eq!(
        (last.stage, last.done, last.total),
        (Stage::Downloading, LEN as u64, Some(LEN as u64))
    );
    assert!(reports.iter().all(|p| p.stage == Stage::Downloading));

    // Pulled again: already there, checked, nothing downloaded.
    let (again, _) = pull_from(&hub, NAME, &store).await;
    let again = again.expect("pulled again");
    assert!(again.already_present);
    assert_eq!(again.checksum, Checksum::MatchesCatalog);
    assert_eq!(hub.seen().len(), 1);
}

#[tokio::test]
async fn a_part_file_is_resumed_with_a_range_request() {
    let body = fake_gguf(LEN);
    let (_tmp, store) = store_for(&body);
    std::fs::write(store.part_path(FILE), &body[..100_000]).expect("part");
    let hub = Hub::serve(&catalog_path(), body.clone(), Behaviour::HONOUR_RANGE).await;

    let (result, reports) = pull_from(&hub, NAME, &store).await;

    let pulled = result.expect("pulled");
    assert_eq!(
        (pulled.resumed_from, pulled.checksum),
        (100_000, Checksum::MatchesCatalog)
    );
    assert_eq!(std::fs::read(store.dir().join(FILE)).expect("read"), body);
    assert_eq!(
        hub.seen(),
        vec![Seen {
            path: catalog_path(),
            range: Some("bytes=100000-".to_string())
        }]
    );
    // The kept part is hashed first, then the download goes on from where it stopped.
    assert_eq!(reports[0].stage, Stage::CheckingPart);
    let first_download = reports
        .iter()
        .find(|p| p.stage == Stage::Downloading)
        .expect("downloading reported");
    assert_eq!(first_download.done, 100_000);
    assert!(!store.part_path(FILE).exists());
}

#[tokio::test]
async fn a_server_that_ignores_the_range_restarts_the_file_cleanly() {
    let body = fake_gguf(LEN);
    let (_tmp, store) = store_for(&body);
    // Bytes that are not the file's: appended to, they would spoil the checksum.
    std::fs::write(store.part_path(FILE), vec![0xAB; 100_000]).expect("part");
    let hub = Hub::serve(&catalog_path(), body.clone(), Behaviour::IGNORE_RANGE).await;

    let (result, _) = pull_from(&hub, NAME, &store).await;

    let pulled = result.expect("pulled");
    assert_eq!(
        (pulled.resumed_from, pulled.checksum),
        (0, Checksum::MatchesCatalog)
    );
    assert_eq!(std::fs::read(store.dir().join(FILE)).expect("read"), body);
    assert_eq!(hub.seen()[0].range.as_deref(), Some("bytes=100000-"));
}

#[tokio::test]
async fn an_interrupted_pull_keeps_its_part_and_the_next_one_finishes_it() {
    let body = fake_gguf(LEN);
    let (_tmp, store) = store_for(&body);
    let cutting = Hub::serve(
        &catalog_path(),
        body.clone(),
        Behaviour {
            honour_range: true,
            cut_after: Some(120_000),
        },
    )
    .await;

    let (result, _) = pull_from(&cutting, NAME, &store).await;

    let err = result.expect_err("cut short");
    assert!(
        matches!(err, PullError::Interrupted { done: 120_000, total: Some(total), .. } if total == LEN as u64),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "the download of {FILE} stopped at 120000 of 300000 bytes"
        )),
        "{message}"
    );
    assert!(
        message.ends_with(&format!(
            "; pull again to resume from {}",
            store.part_path(FILE).display()
        )),
        "{message}"
    );
    assert_eq!(
        std::fs::read(store.part_path(FILE)).expect("part kept"),
        body[..120_000]
    );
    assert!(!store.dir().join(FILE).exists());

    let whole = Hub::serve(&catalog_path(), body.clone(), Behaviour::HONOUR_RANGE).await;
    let (result, _) = pull_from(&whole, NAME, &store).await;
    assert_eq!(result.expect("resumed").resumed_from, 120_000);
    assert_eq!(std::fs::read(store.dir().join(FILE)).expect("read"), body);
}

#[tokio::test]
async fn a_checksum_mismatch_deletes_the_download_and_says_so() {
    let body = fake_gguf(LEN);
    let dir = tempfile::tempdir().expect("tempdir");
    let wrong = "0".repeat(64);
    let store = Store::open(dir.path())
        .expect("store")
        .with_catalog(catalog_for(&body, wrong.clone()));
    let hub = Hub::serve(&catalog_path(), body.clone(), Behaviour::HONOUR_RANGE).await;

    let (result, _) = pull_from(&hub, NAME, &store).await;

    let err = result.expect_err("mismatch");
    assert_eq!(
        err.to_string(),
        format!(
            "{FILE} from {}{} has sha256 {}, not the catalog's {wrong}; the download was deleted",
            hub.base_url(),
            catalog_path(),
            sha256_hex(&body)
        )
    );
    assert_eq!(files_in(store.dir()), Vec::<String>::new());
}

#[tokio::test]
async fn a_file_of_another_size_than_the_catalogs_is_refused_before_it_is_downloaded() {
    let body = fake_gguf(LEN);
    let (_tmp, store) = store_for(&body);
    std::fs::write(store.part_path(FILE), &body[..1000]).expect("part");
    let longer = fake_gguf(LEN + 10);
    let hub = Hub::serve(&catalog_path(), longer, Behaviour::HONOUR_RANGE).await;

    let (result, reports) = pull_from(&hub, NAME, &store).await;

    assert_eq!(
        result.expect_err("another size").to_string(),
        format!(
            "{FILE} from {}{} is 300010 bytes, not the catalog's 300000; the download was deleted",
            hub.base_url(),
            catalog_path()
        )
    );
    assert!(reports.iter().all(|p| p.stage == Stage::CheckingPart));
    assert_eq!(files_in(store.dir()), Vec::<String>::new());
}

#[tokio::test]
async fn an_unreachable_host_gets_one_sentence_with_the_url_and_the_add_command() {
    let body = fake_gguf(LEN);
    let (_tmp, store) = store_for(&body);
    // A port nobody listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let puller = Puller::new().expect("client").with_base_url(&base);

    let err = puller
        .pull(NAME, &store, |_: &Progress| {})
        .await
        .expect_err("nobody there");

    assert_eq!(
        err.to_string(),
        format!(
            "wright cannot reach 127.0.0.1:{port} (the connection was refused) to download {FILE}: \
             download {base}/{REPO}/resolve/main/{FILE} by hand and import it with \
             `wright model add ~/Downloads/{FILE}` (or wherever you saved it)"
        )
    );
    // No empty part file left behind by a pull that never got a byte.
    assert_eq!(files_in(store.dir()), Vec::<String>::new());
}

#[tokio::test]
async fn a_custom_url_is_stored_under_its_file_name_without_a_checksum_to_compare() {
    let (_tmp, store) = store_for(&fake_gguf(LEN));
    // Not the catalog's file (whose digest would be recognised whatever the URL).
    let body = fake_gguf(LEN - 1);
    let hub = Hub::serve(
        "/files/custom-q8.gguf",
        body.clone(),
        Behaviour::HONOUR_RANGE,
    )
    .await;
    let url = format!("{}/files/custom-q8.gguf?download=true", hub.base_url());

    let (result, _) = pull_from(&hub, &url, &store).await;

    let pulled = result.expect("pulled");
    assert_eq!(
        (
            pulled.model.file.as_str(),
            pulled.checksum,
            pulled.model.catalog
        ),
        (
            "custom-q8.gguf",
            Checksum::NoneToCompare,
            CatalogMatch::NotInCatalog
        )
    );
    assert_eq!(pulled.sha256, sha256_hex(&body));
    assert_eq!(
        std::fs::read(store.dir().join("custom-q8.gguf")).expect("read"),
        body
    );
}

#[tokio::test]
async fn a_custom_url_that_sends_a_web_page_is_not_kept() {
    let body = fake_gguf(LEN);
    let (_tmp, store) = store_for(&body);
    let page = b"<!DOCTYPE html><html><body>Sign in</body></html>".to_vec();
    let hub = Hub::serve("/gated/model.gguf", page, Behaviour::HONOUR_RANGE).await;
    let url = format!("{}/gated/model.gguf", hub.base_url());

    let (result, _) = pull_from(&hub, &url, &store).await;

    assert_eq!(
        result.expect_err("a page").to_string(),
        format!("what {url} sent is not a GGUF model (it is an HTML page, not the model); the download was deleted")
    );
    assert_eq!(files_in(store.dir()), Vec::<String>::new());
}

#[tokio::test]
async fn a_missing_file_is_the_servers_status_and_leaves_nothing() {
    let body = fake_gguf(LEN);
    let (_tmp, store) = store_for(&body);
    let hub = Hub::serve("/elsewhere.gguf", body, Behaviour::HONOUR_RANGE).await;

    let (result, _) = pull_from(&hub, NAME, &store).await;

    assert_eq!(
        result.expect_err("404").to_string(),
        format!("{}{} answered 404", hub.base_url(), catalog_path())
    );
    assert_eq!(files_in(store.dir()), Vec::<String>::new());
}

#[tokio::test]
async fn unknown_names_and_urls_without_a_gguf_file_are_refused() {
    let body = fake_gguf(LEN);
    let (_tmp, store) = store_for(&body);
    let puller = Puller::new()
        .expect("client")
        .with_base_url("http://127.0.0.1:9");

    let unknown = puller.pull("qwen9", &store, |_: &Progress| {}).await;
    assert_eq!(
        unknown.expect_err("unknown").to_string(),
        "unknown model 'qwen9': the catalog has tiny; or give the https:// URL of a .gguf file"
    );
    let not_gguf = puller
        .pull("https://example.com/model.bin", &store, |_: &Progress| {})
        .await;
    assert!(matches!(not_gguf, Err(PullError::NotAGgufUrl { .. })));
}

#[tokio::test]
async fn a_second_pull_of_the_same_model_at_once_is_refused() {
    let body = fake_gguf(LEN);
    let (_tmp, store) = store_for(&body);
    let hub = Hub::serve(&catalog_path(), body, Behaviour::HONOUR_RANGE).await;
    let held = std::fs::File::create(store.part_path(FILE)).expect("part");
    held.lock().expect("lock as the first pull would");

    let (result, _) = pull_from(&hub, NAME, &store).await;

    assert!(matches!(result, Err(PullError::Busy { .. })), "{result:?}");
    assert_eq!(hub.seen(), Vec::new());
}

#[test]
fn the_pull_future_can_be_spawned() {
    fn spawnable<T: Send>(_: &T) {}
    let store = Store::open(std::env::temp_dir()).expect("store");
    let mut reports = Vec::new();
    let future = wright_models::pull("tiny", &store, |p: &Progress| reports.push(p.clone()));
    spawnable(&future);
}
