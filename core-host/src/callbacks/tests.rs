//! The callbacks as opcore-asp-provider 0.2.1 calls them: its recorded `workspace/listTree` queries
//! (`tests/fixtures/opcore/callbacks.type-errors.json`) answered from a real git baseline.

use std::sync::Arc;

use serde_json::{Value, json};
use test_support::git::Repo;

use super::*;

const FILES: [(&str, &str); 4] = [
    (
        "src/math.ts",
        "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
    ),
    (
        "src/index.ts",
        "import { add } from \"./math\";\n\nexport const total: number = add(1, 2);\n",
    ),
    ("tsconfig.json", "{\"include\": [\"src\"]}\n"),
    ("package.json", "{\"private\": true}\n"),
];

fn blob_id(text: &str) -> String {
    asp_wire::digest::blob_id(text.as_bytes())
}

/// The callbacks of a provider whose scope is open on the repository's baseline, with opcore's
/// grant (`**/*` ∩ `**`).
fn opened(workspace: &Arc<Workspace>) -> (Callbacks, ScopeGuard, Baseline) {
    let scope = Arc::new(Scope::new("opcore"));
    scope.set_grant(GlobSet::new(&["**/*"]), GlobSet::new(&["**"]));
    let baseline = workspace.baseline();
    let guard = scope.open(RequestScope {
        baseline: baseline.clone(),
        blobs: Arc::default(),
        served: Default::default(),
        refused: 0,
    });
    let workspace = workspace.clone();
    (Callbacks { scope, workspace }, guard, baseline)
}

#[tokio::test]
async fn opcores_list_tree_queries_get_the_real_baseline_entries() {
    let repo = Repo::new(&FILES);
    let workspace = Arc::new(Workspace::open(repo.path()).unwrap());
    let (callbacks, _guard, baseline) = opened(&workspace);
    let recorded: Value = serde_json::from_str(include_str!(
        "../../../tests/fixtures/opcore/callbacks.type-errors.json"
    ))
    .unwrap();
    let queries: Vec<&Value> = recorded
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["method"] == "workspace/listTree")
        .map(|c| &c["params"])
        .collect();
    assert!(
        queries
            .iter()
            .any(|q| q["paths"] == json!(["src/tsconfig.json"])),
        "the recording has the paths queries"
    );
    for query in queries {
        let mut params = query.clone();
        params["baseline"] = baseline.value.clone();
        let path = query["paths"][0].as_str().unwrap();
        let expected: Vec<Value> = FILES
            .iter()
            .filter(|(p, _)| *p == path)
            .map(|(p, text)| json!({"path": p, "blobId": blob_id(text), "kind": "file"}))
            .collect();
        let answer = list_tree(&callbacks, params).await.unwrap();
        assert_eq!(
            answer,
            json!({"entries": expected, "truncated": false}),
            "{path}"
        );
    }
}

#[tokio::test]
async fn list_tree_without_paths_lists_every_baseline_file_and_a_folder_path_lists_its_files() {
    let repo = Repo::new(&FILES);
    let workspace = Arc::new(Workspace::open(repo.path()).unwrap());
    let (callbacks, _guard, baseline) = opened(&workspace);
    let sorted_paths = async |params: Value| {
        let answer = list_tree(&callbacks, params).await.unwrap();
        let mut paths: Vec<String> = answer["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap().to_owned())
            .collect();
        paths.sort();
        paths
    };
    let mut expected: Vec<String> = FILES.iter().map(|(p, _)| (*p).to_owned()).collect();
    expected.sort();
    let all = json!({"baseline": baseline.value, "globs": ["**/*"]});
    assert_eq!(sorted_paths(all).await, expected);
    let src = json!({"baseline": baseline.value, "paths": ["src"]});
    assert_eq!(sorted_paths(src).await, ["src/index.ts", "src/math.ts"]);
}

/// Blobs of the request itself, as `encode` takes them, each with a grant-free path.
fn scoped(texts: &[&[u8]]) -> Vec<(String, Source, String)> {
    texts
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            let path = format!("f{i}");
            let blob = ScopedBlob {
                path: path.clone(),
                bytes: Some(Arc::new(bytes.to_vec())),
                again: None,
            };
            (format!("blob:{i}"), Source::Scoped(blob), path)
        })
        .collect()
}

fn everything() -> Grant {
    Grant(vec![GlobSet::new(&["**"])])
}

#[test]
fn the_answer_cap_counts_the_json_as_sent_escapes_included() {
    let texts: [&[u8]; 4] = [
        b"plain",
        b"\"quoted\" \\ tab\t nl\n",
        b"\x01\x1f\x7f",
        b"\xff\xfe",
    ];
    let answer = encode(scoped(&texts), &everything(), &|_| unreachable_baseline())
        .unwrap_or_else(|_| panic!("small blobs are served"));
    let sent = serde_json::to_string(&ReadBlobResult { blobs: answer }).unwrap();
    let counted = r#"{"blobs":[]}"#.len()
        + texts.len()
        - 1
        // `plain`; `\"quoted\" \\ tab\t nl\n`; `\u0001\u001f` and DEL as it is
        + [("blob:0", 5), ("blob:1", 24), ("blob:2", 13)]
            .iter()
            .map(|(id, len)| entry_len(id, "utf-8", *len))
            .sum::<usize>()
        + entry_len("blob:3", "base64", 4);
    assert_eq!(sent.len(), counted, "{sent}");
}

#[test]
fn control_characters_under_the_cap_raw_but_over_it_escaped_are_refused() {
    // 3 MiB of \u0001 is 18 MiB once escaped: a provider must never get an answer past the cap.
    let text = vec![1u8; 3 << 20];
    let refused = encode(scoped(&[&text]), &everything(), &|_| unreachable_baseline());
    match refused {
        Err(ReadFailure::Error(e)) => assert!(e.message.contains("would pass"), "{}", e.message),
        _ => panic!("an answer past the cap once escaped is refused"),
    }
    let fits = vec![b'a'; 3 << 20];
    assert!(encode(scoped(&[&fits]), &everything(), &|_| unreachable_baseline()).is_ok());
}

#[test]
fn escaped_lengths_are_those_serde_json_writes() {
    let mut texts: Vec<String> = (0u8..0x80).map(|b| char::from(b).to_string()).collect();
    // Runs longer than a counting run (255 bytes), and text that is not ASCII.
    texts.push("\u{1}\"\n".repeat(300));
    texts.push("é\\ü\t".repeat(100));
    for text in texts {
        let written = serde_json::to_string(&text).unwrap().len() - 2;
        assert_eq!(escaped_len(&text), written, "{text:?}");
    }
}

#[test]
fn the_room_an_answer_waits_for_is_its_length_as_sent() {
    let texts: [&[u8]; 3] = [b"\x01\x02 text", b"\xff\xfe\xfd\xfc", b""];
    let answer = encode(scoped(&texts), &everything(), &|_| unreachable_baseline())
        .unwrap_or_else(|_| panic!("small blobs are served"));
    let counted = answer_len(&answer);
    let sent = serde_json::to_string(&ReadBlobResult { blobs: answer }).unwrap();
    assert_eq!(sent.len(), counted, "{sent}");
}
