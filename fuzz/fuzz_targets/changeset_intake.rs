//! Fuzz target: arbitrary JSON as the changeset of `host/evaluateChangeset`, through the embedded
//! host's intake against a real repository whose work tree is hostile: symlinks to a file and to a
//! folder outside it (one of them committed), and FIFOs.
//!
//! The first byte chooses: bit 0 sets `baseline.rev` to the host's own (else intake stops at the
//! baseline), bit 1 gives every change whose path this target wrote the true `before` and `after`
//! blob ids (so that mutations reach the kept blobs without guessing digests). The rest is the
//! changeset, or `host/evaluateChangeset` params holding one.
//!
//! Nothing panics and nothing blocks (a FIFO read would: scripts/fuzz.sh makes a slow input a
//! crash). Every kept blob's bytes hash to its id, its path is one the changeset names, and no kept
//! blob holds the content of the file outside the repository. The same intake tried as the host
//! tries it first, with reads that cannot wait, is either refused or gives the same answer.
#![no_main]

use std::collections::HashMap;
use std::sync::OnceLock;

use asp_bridge_fuzz::flagged;
use asp_wire::digest::sha256_hex;
use core_host::fuzzing::{IntakeWorkspace, intake, intake_without_waiting};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use test_support::git::Repo;
use test_support::process::mkfifo;

const SECRET: &str = "TOP-SECRET-CONTENT outside the repository\n";

struct Fixture {
    workspace: IntakeWorkspace,
    /// path → (before, after) blob ids as this target wrote them.
    ids: HashMap<&'static str, (String, String)>,
    /// The repository and the folder outside it, kept for the life of the process.
    _folders: (Repo, tempfile::TempDir),
}

fn id(bytes: &str) -> String {
    format!("blob:sha256:{}", sha256_hex(bytes.as_bytes()))
}

/// The repository and the folder outside it, made once per fuzzing process (libFuzzer exits
/// without dropping them, so they stay in the temporary folder).
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let outside = tempfile::tempdir().expect("a folder outside the repository");
        let secret = outside.path().join("secret");
        std::fs::write(&secret, SECRET).expect("secret");
        let repo = Repo::init();
        repo.write("a.txt", "hello\n");
        repo.write("dir/b.json", "{}\n");
        std::os::unix::fs::symlink(&secret, repo.path().join("leak")).expect("leak");
        repo.commit();
        repo.write("a.txt", "hello world\n");
        std::os::unix::fs::symlink(outside.path(), repo.path().join("dirlink")).expect("dirlink");
        mkfifo(&repo.path().join("fifo"));
        mkfifo(&repo.path().join("dir/fifo"));
        let ids = HashMap::from([
            ("a.txt", (id("hello\n"), id("hello world\n"))),
            ("dir/b.json", (id("{}\n"), id("{}\n"))),
            ("leak", (id(secret.to_str().expect("UTF-8")), id(SECRET))),
            ("dirlink/secret", (id(SECRET), id(SECRET))),
            ("fifo", (id(""), id(""))),
            ("dir/fifo", (id(""), id(""))),
        ]);
        let workspace = IntakeWorkspace::open(repo.path()).expect("the workspace");
        Fixture {
            workspace,
            ids,
            _folders: (repo, outside),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((flags, mut changeset)) = flagged(data, "changeset") else {
        return;
    };
    let fixture = fixture();
    if flags & 1 != 0 && changeset.is_object() {
        changeset["baseline"] = json!({"rev": fixture.workspace.baseline_rev()});
    }
    if flags & 2 != 0
        && let Some(changes) = changeset.get_mut("changes").and_then(Value::as_array_mut)
    {
        for change in changes.iter_mut().filter(|c| c.is_object()) {
            let path = change["path"].as_str().unwrap_or_default();
            if let Some((before, after)) = fixture.ids.get(path) {
                change["before"] = json!(before);
                change["after"] = json!(after);
            }
        }
    }
    let named: Vec<&str> = changeset["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| [c["path"].as_str(), c["from"].as_str()])
        .flatten()
        .collect();
    let blocking = intake(&fixture.workspace, &changeset);
    if let Some(at_hand) = intake_without_waiting(&fixture.workspace, &changeset) {
        assert_eq!(at_hand, blocking, "an attempt that was not refused differs");
    }
    let Ok((kept, _stale)) = blocking else {
        return;
    };
    for blob in kept {
        assert!(
            named.contains(&blob.path.as_str()),
            "{} was not named",
            blob.path
        );
        if let Some(bytes) = &blob.bytes {
            assert_eq!(
                format!("blob:sha256:{}", sha256_hex(bytes)),
                blob.id,
                "{}: kept bytes that are not its blob",
                blob.path
            );
            assert!(
                !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
                "{}: the file outside the repository was read",
                blob.path
            );
        }
    }
});
