//! The credential store's behaviour on disk: layout and modes, refusals, atomic saves across a
//! crash, corrupt files, issuer binding, and the refresh lock across threads and processes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use rho_config::{ConfigError, Credential, CredentialStore, CredentialSummary, PathsEnv, RhoPaths};
use serde_json::{Value, json};

/// Planted in every token: it must never show up in `Debug` output or an error message.
const CANARY: &str = "canary-tok-5e0b77c1";

/// Set in a child process spawned by a test, naming what the child does.
const ROLE: &str = "RHO_CREDENTIALS_TEST_ROLE";
/// The credentials directory a child works in.
const DIR: &str = "RHO_CREDENTIALS_TEST_DIR";

fn credential(server: &str, issuer: &str, token: Value) -> Credential {
    Credential {
        server: server.into(),
        summary: CredentialSummary {
            resource: Some(format!(
                "https://{}.example.com/mcp",
                server.replace('/', "-")
            )),
            issuer: issuer.into(),
            client_id: "rho-client".into(),
            received_at: 1_700_000_000,
            expires_at: Some(1_700_003_600),
            scopes: vec!["read".into()],
            refreshable: true,
        },
        token,
    }
}

fn secret_token() -> Value {
    json!({"access_token": CANARY, "refresh_token": CANARY, "token_type": "Bearer"})
}

/// A store in a fresh `$RHO_HOME` (not created yet), as rho resolves it.
fn fresh() -> (tempfile::TempDir, PathBuf, CredentialStore) {
    let root = tempfile::tempdir().unwrap();
    let rho_home = root.path().join("rho-home");
    let env = PathsEnv {
        home: Some(root.path().into()),
        rho_home: Some(rho_home.clone().into()),
    };
    let paths = RhoPaths::resolve(&env, root.path()).unwrap();
    let store = CredentialStore::new(paths.credentials_dir());
    (root, rho_home, store)
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o777
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn nothing_is_created_until_the_first_save() {
    let (_root, rho_home, store) = fresh();
    assert!(store.load("github").unwrap().is_none());
    assert!(store.load_for("github", "https://a").unwrap().is_none());
    assert!(store.list().unwrap().is_empty());
    assert!(!store.remove("github").unwrap());
    assert!(
        !rho_home.exists(),
        "a run that never logs in leaves nothing"
    );

    store
        .save(&credential("github", "https://a", secret_token()))
        .unwrap();
    assert_eq!(store.dir(), rho_home.join("credentials"));
    assert_eq!(mode(store.dir()), 0o700);
    let file = store.file_of("github").unwrap();
    assert_eq!(file, store.dir().join("github.json"));
    assert_eq!(mode(&file), 0o600);
    assert_eq!(
        names(store.dir()),
        ["github.json"],
        "no temporary file is left"
    );
}

#[test]
fn the_file_is_the_documented_json() {
    let (_root, _home, store) = fresh();
    let mut saved = credential("docs/search", "https://auth.example.com", secret_token());
    saved.summary.scopes = vec!["read".into(), "write".into()];
    store.save(&saved).unwrap();
    let path = store.dir().join("docs_-search.json");
    let file: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        file,
        json!({
            "format": 2,
            "server": "docs/search",
            "resource": "https://docs-search.example.com/mcp",
            "issuer": "https://auth.example.com",
            "client_id": "rho-client",
            "received_at": 1_700_000_000,
            "expires_at": 1_700_003_600,
            "scopes": ["read", "write"],
            "refreshable": true,
            "token": secret_token(),
        })
    );
    assert_eq!(store.load("docs/search").unwrap(), Some(saved));
}

#[test]
fn servers_are_listed_with_summaries_and_per_file_errors() {
    let (_root, _home, store) = fresh();
    let mut plain = credential("Remote_1", "https://b", secret_token());
    plain.summary.expires_at = None;
    plain.summary.refreshable = false;
    for c in [
        credential("github", "https://a", secret_token()),
        plain.clone(),
        credential("tools/fetch", "https://c", secret_token()),
    ] {
        store.save(&c).unwrap();
    }
    fs::write(store.dir().join("broken.json"), "{").unwrap();
    // Files rho does not write are neither listed nor touched.
    fs::write(store.dir().join("notes.txt"), "x").unwrap();
    fs::write(store.dir().join("Upper.json"), "x").unwrap();
    store.lock("github").map(drop).unwrap();

    let listed = store.list().unwrap();
    let servers: Vec<&str> = listed.iter().map(|l| l.server.as_str()).collect();
    assert_eq!(servers, ["Remote_1", "broken", "github", "tools/fetch"]);
    let remote = listed[0].summary.as_ref().unwrap();
    assert_eq!(remote, &plain.summary);
    assert!(!remote.refreshable && remote.expires_at.is_none());
    assert_eq!(listed[0].path, store.dir().join("_remote__1.json"));
    assert!(matches!(
        listed[1].summary,
        Err(ConfigError::CredentialCorrupt { .. })
    ));
    assert_eq!(listed[2].summary.as_ref().unwrap().issuer, "https://a");
    assert!(listed[3].summary.as_ref().unwrap().refreshable);
    assert!(!format!("{listed:?}").contains(CANARY));
    assert!(store.dir().join("notes.txt").exists() && store.dir().join("Upper.json").exists());
}

#[test]
fn tokens_never_appear_in_debug_output_or_errors() {
    let (_root, _home, store) = fresh();
    let saved = credential("github", "https://a", secret_token());
    let debug = format!("{saved:?} {:#?}", saved);
    assert!(!debug.contains(CANARY), "{debug}");
    assert!(debug.contains("<redacted>") && debug.contains("https://a"));
    store.save(&saved).unwrap();
    assert!(!format!("{:?}", store.load("github").unwrap()).contains(CANARY));

    // Hand edits that put token text where the parser complains.
    let path = store.file_of("github").unwrap();
    let good = fs::read_to_string(&path).unwrap();
    let mut errors = Vec::new();
    for broken in [
        good.replace(
            "\"received_at\": 1700000000",
            &format!("\"received_at\": {CANARY:?}"),
        ),
        good.replace("\"scopes\": [", &format!("\"scopes\": [{CANARY:?}, 1, ")),
        good.replace("\"format\": 2,", &format!("{CANARY:?}: 2,")),
        good.replace("\"issuer\"", "\"issuer")
            .replace(CANARY, &format!("{CANARY}\n")),
        good.replace("\"token_type\": \"Bearer\"", "\"token_type\": Bearer"),
        format!("{CANARY}{good}"),
        good[..good.len() / 2].to_owned(),
    ] {
        assert_ne!(broken, good);
        fs::write(&path, &broken).unwrap();
        let error = store.load("github").unwrap_err();
        assert!(
            matches!(error, ConfigError::CredentialCorrupt { .. }),
            "{error}"
        );
        errors.push(error.to_string());
        errors.push(format!("{error:?}"));
        errors.push(store.save(&saved).unwrap_err().to_string());
        errors.push(format!("{:?}", store.list().unwrap()));
    }
    for text in &errors {
        assert!(!text.contains(CANARY), "{text}");
    }
}

#[test]
fn a_hand_edited_file_is_kept_until_fixed_or_removed() {
    let (_root, _home, store) = fresh();
    store
        .save(&credential("p/srv", "https://a", secret_token()))
        .unwrap();
    let path = store.file_of("p/srv").unwrap();
    let edited = b"{ \"format\": 1, oops }".to_vec();
    fs::write(&path, &edited).unwrap();

    let error = store.load("p/srv").unwrap_err().to_string();
    assert!(error.contains(&path.display().to_string()), "{error}");
    assert!(error.contains("line 1, column"), "{error}");
    assert!(error.contains("rho mcp logout p/srv"), "{error}");
    assert!(error.contains("fix the JSON"), "{error}");
    assert!(store.load_for("p/srv", "https://a").is_err());

    let refused = store
        .save(&credential("p/srv", "https://a", json!({"new": 1})))
        .unwrap_err();
    assert!(
        matches!(refused, ConfigError::CredentialCorrupt { .. }),
        "{refused}"
    );
    assert_eq!(
        fs::read(&path).unwrap(),
        edited,
        "the hand edit is not lost"
    );

    assert!(store.remove("p/srv").unwrap());
    assert!(!path.exists());
    assert!(!store.remove("p/srv").unwrap());
    store
        .save(&credential("p/srv", "https://a", json!({"new": 1})))
        .unwrap();
    assert_eq!(
        store.load("p/srv").unwrap().unwrap().token,
        json!({"new": 1})
    );
}

#[test]
fn a_file_from_a_newer_rho_is_never_overwritten() {
    let (_root, _home, store) = fresh();
    store
        .save(&credential("github", "https://a", secret_token()))
        .unwrap();
    let path = store.file_of("github").unwrap();
    let newer = r#"{"format": 3, "server": "github", "sealed": "..."}"#;
    fs::write(&path, newer).unwrap();
    let error = store.load("github").unwrap_err().to_string();
    assert!(error.contains("format 3"), "{error}");
    assert!(
        store
            .save(&credential("github", "https://a", json!({})))
            .is_err()
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), newer);
}

#[test]
fn a_format_1_file_reads_without_a_resource_and_a_save_replaces_it() {
    let (_root, _home, store) = fresh();
    let path = store.file_of("github").unwrap();
    store
        .save(&credential("github", "https://a", secret_token()))
        .unwrap();
    // The file an older rho wrote: format 1, no `resource`.
    let mut older: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    older["format"] = json!(1);
    older.as_object_mut().unwrap().remove("resource");
    fs::write(&path, serde_json::to_vec_pretty(&older).unwrap()).unwrap();

    let loaded = store.load("github").unwrap().unwrap();
    assert_eq!(loaded.summary.resource, None);
    assert_eq!(loaded.token, secret_token());
    assert_eq!(
        store.list().unwrap()[0].summary.as_ref().unwrap().resource,
        None
    );
    // Such a credential is never written again, and a new login's save replaces the file.
    let error = store.save(&loaded).unwrap_err().to_string();
    assert!(error.contains("name no resource"), "{error}");
    assert!(!error.contains(CANARY), "{error}");
    assert_eq!(
        serde_json::from_slice::<Value>(&fs::read(&path).unwrap()).unwrap(),
        older,
        "the refused save left the file alone"
    );
    let fresh_login = credential("github", "https://a", json!({"t": 2}));
    store.save(&fresh_login).unwrap();
    let file: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(file["format"], 2);
    assert_eq!(file["resource"], "https://github.example.com/mcp");
    assert_eq!(store.load("github").unwrap(), Some(fresh_login));
}

#[test]
fn a_file_renamed_to_another_server_is_refused() {
    let (_root, _home, store) = fresh();
    store
        .save(&credential("alpha", "https://a", secret_token()))
        .unwrap();
    fs::copy(
        store.file_of("alpha").unwrap(),
        store.dir().join("beta.json"),
    )
    .unwrap();
    let error = store.load("beta").unwrap_err();
    assert!(
        matches!(error, ConfigError::CredentialCorrupt { .. }),
        "{error}"
    );
}

#[test]
fn a_credential_from_another_issuer_is_discarded() {
    let (_root, _home, store) = fresh();
    let old = credential("remote", "https://old-issuer.example", secret_token());
    store.save(&old).unwrap();
    assert_eq!(
        store
            .load_for("remote", "https://old-issuer.example")
            .unwrap(),
        Some(old)
    );
    // The server was repointed at another authorization server.
    assert_eq!(
        store
            .load_for("remote", "https://new-issuer.example")
            .unwrap(),
        None
    );
    assert!(!store.file_of("remote").unwrap().exists(), "removed");
    assert_eq!(store.load("remote").unwrap(), None);

    let new = credential("remote", "https://new-issuer.example", json!({"t": 2}));
    store.save(&new).unwrap();
    assert_eq!(
        store
            .load_for("remote", "https://new-issuer.example")
            .unwrap(),
        Some(new)
    );
    // Exact comparison: a trailing slash is another issuer.
    assert_eq!(
        store
            .load_for("remote", "https://new-issuer.example/")
            .unwrap(),
        None
    );
}

#[test]
fn unsafe_directories_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let real = root.path().join("real");
    CredentialStore::new(&real)
        .save(&credential("github", "https://a", secret_token()))
        .unwrap();

    let link = root.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let group = root.path().join("group");
    let others = root.path().join("others");
    for (dir, mode) in [(&group, 0o770), (&others, 0o703)] {
        fs::create_dir(dir).unwrap();
        fs::set_permissions(dir, fs::Permissions::from_mode(mode)).unwrap();
    }
    let foreign = if rustix::process::geteuid().is_root() {
        let dir = root.path().join("foreign");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        dir
    } else {
        // A directory someone else owns, without privileges to make one.
        PathBuf::from("/")
    };
    let not_dir = root.path().join("file");
    fs::write(&not_dir, "").unwrap();

    for (dir, reason) in [
        (&link, "not a directory (a symbolic link?)"),
        (&group, "group or other users may write"),
        (&others, "group or other users may write"),
        (&foreign, "another user owns it"),
        (&not_dir, "not a directory"),
    ] {
        let store = CredentialStore::new(dir);
        let errors = [
            store.load("github").map(drop),
            store.load_for("github", "https://a").map(drop),
            store.list().map(drop),
            store.remove("github").map(drop),
            store.lock("github").map(drop),
            store.save(&credential("github", "https://a", secret_token())),
        ];
        for error in errors {
            let error = error.unwrap_err();
            assert!(
                matches!(error, ConfigError::CredentialsDir { .. }),
                "{error}"
            );
            let text = error.to_string();
            assert!(text.contains(reason), "{text}");
            assert!(text.contains(&dir.display().to_string()), "{text}");
        }
    }
    assert_eq!(
        names(&real),
        ["github.json"],
        "nothing written through the link"
    );
}

#[test]
fn links_fifos_and_directories_at_a_credential_name_are_refused() {
    let (root, _home, store) = fresh();
    store
        .save(&credential("seed", "https://a", secret_token()))
        .unwrap();

    // A link to a valid credential elsewhere is not followed, not overwritten, only removed.
    let outside = root.path().join("outside.json");
    fs::copy(store.file_of("seed").unwrap(), &outside).unwrap();
    fs::write(
        &outside,
        fs::read_to_string(&outside)
            .unwrap()
            .replace("\"seed\"", "\"linked\""),
    )
    .unwrap();
    let before = fs::read(&outside).unwrap();
    let link = store.file_of("linked").unwrap();
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let error = store.load("linked").unwrap_err().to_string();
    assert!(error.contains("symbolic link"), "{error}");
    assert!(error.contains(&link.display().to_string()), "{error}");
    assert!(
        store
            .save(&credential("linked", "https://a", json!({})))
            .is_err()
    );
    assert!(store.remove("linked").unwrap());
    assert!(fs::symlink_metadata(&link).is_err());
    assert_eq!(
        fs::read(&outside).unwrap(),
        before,
        "the target is untouched"
    );

    // A FIFO is refused at once: a blocking open would wait for a writer forever.
    let fifo = store.file_of("fifo").unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = store.clone();
    std::thread::spawn(move || {
        let _ = tx.send((
            reader.load("fifo").map(drop).map_err(|e| e.to_string()),
            reader.list().map(|l| format!("{l:?}")),
        ));
    });
    let (load, list) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("reading a FIFO must not block");
    assert!(load.unwrap_err().contains("not a regular file"));
    assert!(list.unwrap().contains("not a regular file"));
    assert!(
        store
            .save(&credential("fifo", "https://a", json!({})))
            .is_err()
    );
    assert!(store.remove("fifo").unwrap());

    // A directory of that name cannot be read, replaced or removed as a file.
    let dir = store.file_of("dir").unwrap();
    fs::create_dir(&dir).unwrap();
    assert!(
        store
            .load("dir")
            .unwrap_err()
            .to_string()
            .contains("not a regular file")
    );
    assert!(
        store
            .save(&credential("dir", "https://a", json!({})))
            .is_err()
    );
    assert!(store.remove("dir").is_err());
    assert!(dir.is_dir());
}

#[test]
fn files_of_another_user_are_refused() {
    if !rustix::process::geteuid().is_root() {
        // Only root can give a file away; the ownership decision itself is unit-tested in the
        // crate, with a foreign uid.
        return;
    }
    let (_root, _home, store) = fresh();
    store
        .save(&credential("github", "https://a", secret_token()))
        .unwrap();
    let path = store.file_of("github").unwrap();
    std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    let error = store.load("github").unwrap_err().to_string();
    assert!(error.contains("another user owns it"), "{error}");
    assert!(
        store
            .save(&credential("github", "https://a", json!({})))
            .is_err()
    );
}

#[test]
fn reads_and_saves_are_bounded_at_64_kib() {
    let (_root, _home, store) = fresh();
    store
        .save(&credential("seed", "https://a", json!({})))
        .unwrap();
    let path = store.file_of("big").unwrap();
    fs::write(&path, vec![b' '; 64 * 1024 + 1]).unwrap();
    let error = store.load("big").unwrap_err().to_string();
    assert!(error.contains("larger than the 64 KiB cap"), "{error}");

    let huge = credential("huge", "https://a", json!({"t": "x".repeat(64 * 1024)}));
    let error = store.save(&huge).unwrap_err().to_string();
    assert!(error.contains("more than the 64 KiB"), "{error}");
    assert!(!store.file_of("huge").unwrap().exists());
}

#[test]
fn invalid_identities_are_refused_before_touching_the_disk() {
    let (_root, rho_home, store) = fresh();
    for bad in ["", "../x", "a/b/c", "a//b", "/abs", "dot.name", "space d"] {
        let errors = [
            store.load(bad).map(drop),
            store.remove(bad).map(drop),
            store.lock(bad).map(drop),
            store.save(&credential(bad, "https://a", json!({}))),
        ];
        for error in errors {
            assert!(
                matches!(error, Err(ConfigError::CredentialIdentity { .. })),
                "{bad:?}: {error:?}"
            );
        }
    }
    assert!(!rho_home.exists());
}

#[test]
fn stale_temporary_files_are_swept_and_never_listed() {
    let (_root, _home, store) = fresh();
    store
        .save(&credential("a", "https://a", json!({})))
        .unwrap();
    let stale = store.dir().join(".tmp-a-1-0");
    let fresh_tmp = store.dir().join(".tmp-a-2-0");
    for tmp in [&stale, &fresh_tmp] {
        fs::write(tmp, "{\"half").unwrap();
    }
    fs::File::options()
        .append(true)
        .open(&stale)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(2 * 60 * 60))
        .unwrap();
    assert_eq!(store.list().unwrap().len(), 1);
    store
        .save(&credential("a", "https://a", json!({"v": 2})))
        .unwrap();
    assert!(!stale.exists(), "a crashed writer's leftover goes");
    assert!(fresh_tmp.exists(), "another writer's file in flight stays");
}

/// A token big enough that a save spends a while writing it.
fn filler(n: u64) -> Value {
    json!({"n": n, "fill": "x".repeat(60 * 1024)})
}

#[test]
fn a_crash_mid_write_never_leaves_a_half_file() {
    if let Some(dir) = child_dir("writer") {
        // Saves until killed (or for 30 s, so a stray child cannot outlive its test for long).
        let store = CredentialStore::new(dir);
        let started = Instant::now();
        let mut n = 0;
        while started.elapsed() < Duration::from_secs(30) {
            store
                .save(&credential("crash", "https://a", filler(n)))
                .unwrap();
            n += 1;
        }
        return;
    }
    let (_root, _home, store) = fresh();
    store
        .save(&credential("crash", "https://a", filler(0)))
        .unwrap();
    for round in 0..8u64 {
        let mut child = spawn_child(
            "a_crash_mid_write_never_leaves_a_half_file",
            "writer",
            store.dir(),
        );
        // Let it get going, then kill it at a different point each round.
        let target = store.load("crash").unwrap().unwrap().token["n"].as_u64();
        let deadline = Instant::now() + Duration::from_secs(20);
        while store.load("crash").unwrap().unwrap().token["n"].as_u64() == target
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_micros(500 * round));
        child.kill().unwrap();
        child.wait().unwrap();
        let survived = store
            .load("crash")
            .unwrap()
            .expect("the last complete save");
        assert_eq!(
            survived.token["fill"].as_str().map(str::len),
            Some(60 * 1024)
        );
    }
    assert_eq!(
        store.list().unwrap().len(),
        1,
        "leftover temporaries are not credentials"
    );
}

/// One refresh as rho does it: under the lock, load what the previous holder saved, spend its
/// refresh token, and save the rotated one.
fn refresh_once(store: &CredentialStore) {
    let _lock = store.lock("rotating").unwrap();
    let mut current = store.load("rotating").unwrap().unwrap();
    let generation = current.token["generation"].as_u64().unwrap();
    let spent = current.token["refresh_token"].clone();
    current.token["spent"].as_array_mut().unwrap().push(spent);
    // A refresh is a network round trip: overlapping refreshes would show as lost updates.
    std::thread::sleep(Duration::from_millis(20));
    current.token["generation"] = json!(generation + 1);
    current.token["refresh_token"] = json!(format!("r{}", generation + 1));
    store.save(&current).unwrap();
}

fn rotating(generation: u64) -> Credential {
    credential(
        "rotating",
        "https://a",
        json!({"generation": generation, "refresh_token": format!("r{generation}"), "spent": []}),
    )
}

/// Each refresher spent the token the previous one saved: none was spent twice or lost.
fn assert_spent_in_turn(store: &CredentialStore, refreshes: u64) {
    let token = store.load("rotating").unwrap().unwrap().token;
    assert_eq!(token["generation"], json!(refreshes));
    let expected: Vec<String> = (0..refreshes).map(|g| format!("r{g}")).collect();
    assert_eq!(token["spent"], json!(expected));
}

#[test]
fn the_refresh_lock_serializes_threads() {
    let (_root, _home, store) = fresh();
    store.save(&rotating(0)).unwrap();
    let first = store.lock("rotating").unwrap();
    let released = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (store, released) = (store.clone(), released.clone());
        std::thread::spawn(move || {
            // A separate store and a separate descriptor: flock excludes them like processes.
            let lock = store.lock("rotating").unwrap();
            assert!(
                released.load(Ordering::SeqCst),
                "took the lock while it was held"
            );
            let seen = store.load("rotating").unwrap().unwrap();
            drop(lock);
            seen.token["generation"].as_u64()
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    // The first holder refreshes and saves, then lets go.
    let mut current = store.load("rotating").unwrap().unwrap();
    current.token["generation"] = json!(7);
    store.save(&current).unwrap();
    released.store(true, Ordering::SeqCst);
    drop(first);
    assert_eq!(
        waiter.join().unwrap(),
        Some(7),
        "the waiter sees the first holder's save"
    );

    store.save(&rotating(0)).unwrap();
    let refreshers: Vec<_> = (0..4)
        .map(|_| {
            let store = store.clone();
            std::thread::spawn(move || refresh_once(&store))
        })
        .collect();
    for refresher in refreshers {
        refresher.join().unwrap();
    }
    assert_spent_in_turn(&store, 4);
}

#[test]
fn the_refresh_lock_serializes_processes() {
    if let Some(dir) = child_dir("refresher") {
        fs::write(dir.join(format!(".ready-{}", std::process::id())), "").unwrap();
        refresh_once(&CredentialStore::new(dir));
        return;
    }
    let (_root, _home, store) = fresh();
    store.save(&rotating(0)).unwrap();
    let held = store.lock("rotating").unwrap();
    let children: Vec<Child> = (0..3)
        .map(|_| {
            spawn_child(
                "the_refresh_lock_serializes_processes",
                "refresher",
                store.dir(),
            )
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while names(store.dir())
        .iter()
        .filter(|n| n.starts_with(".ready-"))
        .count()
        < 3
    {
        assert!(Instant::now() < deadline, "the children did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        store.load("rotating").unwrap().unwrap(),
        rotating(0),
        "no child refreshed while the lock was held"
    );
    // This process refreshes first, then the children in turn.
    let mut current = rotating(1);
    current.token["spent"] = json!(["r0"]);
    store.save(&current).unwrap();
    drop(held);
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert_spent_in_turn(&store, 4);
}

#[test]
fn the_refresh_lock_wait_is_bounded() {
    let (_root, _home, store) = fresh();
    let held = store.lock("slow").unwrap();
    let lock_file = held.path().to_path_buf();
    assert_eq!(lock_file, store.dir().join("slow.lock"));
    assert_eq!(mode(&lock_file), 0o600);
    let impatient = store.clone().with_lock_timeout(Duration::from_millis(100));
    let error = impatient.lock("slow").unwrap_err();
    assert!(
        matches!(error, ConfigError::CredentialLockTimeout { .. }),
        "{error}"
    );
    let text = error.to_string();
    assert!(
        text.contains("`slow`") && text.contains(&lock_file.display().to_string()),
        "{text}"
    );
    // Another server's lock is independent.
    drop(impatient.lock("other").unwrap());
    drop(held);
    let again = impatient.lock("slow").unwrap();
    assert_eq!(again.server(), "slow");
    drop(again);
    assert!(
        lock_file.exists(),
        "lock files stay: removing one would break the exclusion"
    );
    assert!(
        store.list().unwrap().is_empty(),
        "lock files are not credentials"
    );
}

/// In a child spawned for `role`, the directory it works in.
fn child_dir(role: &str) -> Option<PathBuf> {
    (std::env::var_os(ROLE)? == role).then(|| std::env::var_os(DIR).map(PathBuf::from))?
}

/// This test binary again, running only `test` in the role `role` on `dir`.
fn spawn_child(test: &str, role: &str, dir: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--test-threads=1", "--quiet"])
        .env(ROLE, role)
        .env(DIR, dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}
