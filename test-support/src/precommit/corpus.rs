//! A seeded repository of JSON, YAML, TOML, Python, text and Markdown files (and a few PNGs), some
//! with a planted problem of each kind both pre-commit-hooks and the hygiene provider check, and a
//! few of the kinds where they are known to differ. The same seed and count give the same bytes.

use std::collections::BTreeMap;
use std::path::Path;

use crate::git::Repo;

/// The seed the benchmark and its test use.
pub const SEED: u64 = 0x5eed_2026;

/// The largest file the hooks and the provider both let pass (500 KB); a planted large file is
/// past it.
const LARGE_BYTES: usize = 600 * 1024;

/// A problem planted in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Plant {
    TrailingWhitespace,
    MissingFinalNewline,
    MergeConflict,
    PrivateKey,
    JsonSyntax,
    YamlSyntax,
    TomlSyntax,
    DuplicateJsonKey,
    DuplicateYamlKey,
    LargeFile,
    MixedLineEndings,
    /// A Markdown setext heading underlined with `=======`: no conflict marker.
    SetextHeading,
    /// A private key's armour inside a binary (PNG) file.
    KeyInBinary,
    /// A file that ends in more than one newline.
    ExtraFinalNewlines,
}

impl Plant {
    const ALL: [Plant; 14] = [
        Plant::TrailingWhitespace,
        Plant::MissingFinalNewline,
        Plant::MergeConflict,
        Plant::PrivateKey,
        Plant::JsonSyntax,
        Plant::YamlSyntax,
        Plant::TomlSyntax,
        Plant::DuplicateJsonKey,
        Plant::DuplicateYamlKey,
        Plant::LargeFile,
        Plant::MixedLineEndings,
        Plant::SetextHeading,
        Plant::KeyInBinary,
        Plant::ExtraFinalNewlines,
    ];

    /// Files of this problem per 1,000 files (at least one in any corpus).
    fn per_mille(self) -> usize {
        match self {
            Plant::LargeFile => 1,
            Plant::KeyInBinary | Plant::SetextHeading | Plant::ExtraFinalNewlines => 2,
            _ => 10,
        }
    }

    fn fits(self, kind: Kind) -> bool {
        match self {
            Plant::TrailingWhitespace
            | Plant::MissingFinalNewline
            | Plant::MixedLineEndings
            | Plant::ExtraFinalNewlines => kind != Kind::Png,
            Plant::MergeConflict | Plant::PrivateKey => {
                matches!(kind, Kind::Python | Kind::Text)
            }
            Plant::JsonSyntax | Plant::DuplicateJsonKey => kind == Kind::Json,
            Plant::YamlSyntax | Plant::DuplicateYamlKey => kind == Kind::Yaml,
            Plant::TomlSyntax => kind == Kind::Toml,
            Plant::LargeFile => kind == Kind::Text,
            Plant::SetextHeading => kind == Kind::Markdown,
            Plant::KeyInBinary => kind == Kind::Png,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Json,
    Yaml,
    Toml,
    Python,
    Text,
    Markdown,
    Png,
}

impl Kind {
    const ALL: [Kind; 7] = [
        Kind::Json,
        Kind::Yaml,
        Kind::Toml,
        Kind::Python,
        Kind::Text,
        Kind::Markdown,
        Kind::Png,
    ];

    fn extension(self) -> &'static str {
        match self {
            Kind::Json => "json",
            Kind::Yaml => "yaml",
            Kind::Toml => "toml",
            Kind::Python => "py",
            Kind::Text => "txt",
            Kind::Markdown => "md",
            Kind::Png => "png",
        }
    }
}

/// A generated repository: its files are committed, and what was planted where is kept.
#[derive(Debug)]
pub struct Corpus {
    pub repo: Repo,
    /// Every tracked file, in `git ls-files` order.
    pub files: Vec<String>,
    /// The files each problem was planted in.
    pub planted: BTreeMap<Plant, Vec<String>>,
    /// Bytes of all files together.
    pub bytes: usize,
}

/// A repository of `files` files from `seed`, committed: about a quarter JSON, a fifth Python, a
/// sixth each YAML and TOML, the rest text and Markdown and a few PNGs, in 100-file folders.
pub fn generate(seed: u64, files: usize) -> Corpus {
    let mut rng = fastrand::Rng::with_seed(seed);
    // One of each kind first, so that every problem has a file to be planted in.
    let kinds: Vec<Kind> = (0..files)
        .map(|i| match Kind::ALL.get(i) {
            Some(&kind) => kind,
            None => match rng.u32(0..100) {
                0..25 => Kind::Json,
                25..42 => Kind::Yaml,
                42..58 => Kind::Toml,
                58..78 => Kind::Python,
                78..90 => Kind::Text,
                90..98 => Kind::Markdown,
                _ => Kind::Png,
            },
        })
        .collect();
    let path = |i: usize| {
        format!(
            "pkg{:02}/mod{}/{}{i}.{}",
            i / 1000,
            i / 100 % 10,
            ["config", "data", "util", "notes"][i % 4],
            kinds[i].extension()
        )
    };
    // Each problem in its own files, so that each finding has one cause.
    let mut plants: Vec<Option<Plant>> = vec![None; files];
    let mut planted: BTreeMap<Plant, Vec<String>> = BTreeMap::new();
    for plant in Plant::ALL {
        let wanted = (files * plant.per_mille()).div_ceil(1000).max(1);
        let mut fitting: Vec<usize> = (0..files)
            .filter(|&i| plants[i].is_none() && plant.fits(kinds[i]))
            .collect();
        rng.shuffle(&mut fitting);
        for &i in fitting.iter().take(wanted) {
            plants[i] = Some(plant);
            planted.entry(plant).or_default().push(path(i));
        }
    }
    for paths in planted.values_mut() {
        paths.sort();
    }
    let repo = Repo::init();
    let mut bytes = 0;
    for i in 0..files {
        let content = content(&mut rng, kinds[i], i, plants[i]);
        bytes += content.len();
        let full = repo.path().join(path(i));
        std::fs::create_dir_all(full.parent().expect("a folder")).expect("create folders");
        std::fs::write(&full, &content).expect("write a file");
    }
    // No line-ending conversion: the bytes written are the bytes committed.
    repo.git(&["config", "core.autocrlf", "false"]);
    repo.commit();
    let files = tracked(repo.path());
    Corpus {
        repo,
        files,
        planted,
        bytes,
    }
}

/// `git ls-files` of `root`: every tracked file, as pre-commit's `--all-files` lists them.
pub fn tracked(root: &Path) -> Vec<String> {
    crate::git::git(root, &["ls-files", "-z"])
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

fn word(rng: &mut fastrand::Rng) -> &'static str {
    const WORDS: [&str; 16] = [
        "alpha", "build", "cache", "delta", "event", "field", "graph", "index", "json", "kernel",
        "layer", "module", "node", "option", "parser", "queue",
    ];
    WORDS[rng.usize(..WORDS.len())]
}

fn content(rng: &mut fastrand::Rng, kind: Kind, i: usize, plant: Option<Plant>) -> Vec<u8> {
    let mut text = match kind {
        Kind::Json => json(rng, i, plant),
        Kind::Yaml => yaml(rng, i, plant),
        Kind::Toml => toml(rng, i, plant),
        Kind::Python => python(rng, i),
        Kind::Text => prose(rng, i, plant == Some(Plant::LargeFile)),
        Kind::Markdown => markdown(rng, i, plant == Some(Plant::SetextHeading)),
        Kind::Png => return png(rng, plant == Some(Plant::KeyInBinary)),
    };
    // One final newline, as an editor saves a file, unless a plant says otherwise.
    text.truncate(text.trim_end_matches('\n').len());
    text.push('\n');
    let lines = text.lines().count();
    match plant {
        Some(Plant::TrailingWhitespace) => {
            // A space (YAML) or a tab at the end of one line.
            let at = rng.usize(0..lines);
            let tail = if kind == Kind::Yaml { " " } else { "\t " };
            text = text
                .lines()
                .enumerate()
                .map(|(n, l)| {
                    if n == at {
                        format!("{l}{tail}\n")
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect();
        }
        Some(Plant::MissingFinalNewline) => {
            text.pop();
        }
        Some(Plant::MergeConflict) => {
            let at = rng.usize(1..lines);
            let mut out: Vec<String> = text.lines().map(str::to_owned).collect();
            out.splice(
                at..at,
                [
                    "<<<<<<< HEAD".to_owned(),
                    format!("value = {}", rng.u32(..1000)),
                    "=======".to_owned(),
                    format!("value = {}", rng.u32(..1000)),
                    ">>>>>>> feature/topic".to_owned(),
                ],
            );
            text = out.join("\n") + "\n";
        }
        Some(Plant::PrivateKey) => {
            let armour = ["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"][i % 3];
            text.push_str(&format!(
                "-----BEGIN {armour}-----\nMIIEowIBAAKCAQEA{}\n-----END {armour}-----\n",
                "x".repeat(40)
            ));
        }
        Some(Plant::MixedLineEndings) => {
            // Every third line ends in CRLF, the rest in LF.
            text = text
                .lines()
                .enumerate()
                .map(|(n, l)| {
                    if n % 3 == 1 {
                        format!("{l}\r\n")
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect();
        }
        Some(Plant::ExtraFinalNewlines) => text.push_str("\n\n"),
        _ => {}
    }
    text.into_bytes()
}

fn json(rng: &mut fastrand::Rng, i: usize, plant: Option<Plant>) -> String {
    let mut out = format!(
        "{{\n  \"name\": \"item-{i}\",\n  \"version\": \"1.{}.0\",\n",
        i % 7
    );
    let entries = rng.usize(3..30);
    out.push_str("  \"settings\": {\n");
    for n in 0..entries {
        let comma = if n + 1 < entries { "," } else { "" };
        out.push_str(&format!(
            "    \"{}_{n}\": {{\"enabled\": {}, \"weight\": {}, \"label\": \"{} {}\"}}{comma}\n",
            word(rng),
            rng.bool(),
            rng.u32(..10_000),
            word(rng),
            word(rng)
        ));
    }
    match plant {
        Some(Plant::JsonSyntax) => out.push_str("  },\n"),
        Some(Plant::DuplicateJsonKey) => {
            out.push_str("  },\n  \"name\": \"again\"\n");
        }
        _ => out.push_str("  }\n"),
    }
    out.push_str("}\n");
    out
}

fn yaml(rng: &mut fastrand::Rng, i: usize, plant: Option<Plant>) -> String {
    let mut out = format!("name: service-{i}\nreplicas: {}\nlabels:\n", rng.u32(1..9));
    for n in 0..rng.usize(2..6) {
        out.push_str(&format!("  {}_{n}: {}\n", word(rng), word(rng)));
    }
    out.push_str("steps:\n");
    for n in 0..rng.usize(3..25) {
        out.push_str(&format!(
            "  - id: step-{n}\n    run: make {} {}\n    retries: {}\n",
            word(rng),
            word(rng),
            rng.u32(..4)
        ));
    }
    match plant {
        // A value given at a deeper indent than its sibling key: a mapping where none may start.
        Some(Plant::YamlSyntax) => out.push_str("env:\n  mode: fast\n    level: high\n"),
        Some(Plant::DuplicateYamlKey) => out.push_str(&format!("replicas: {}\n", rng.u32(1..9))),
        _ => out.push_str("env:\n  mode: fast\n"),
    }
    out
}

fn toml(rng: &mut fastrand::Rng, i: usize, plant: Option<Plant>) -> String {
    let mut out = format!(
        "[package]\nname = \"crate-{i}\"\nversion = \"0.{}.1\"\nedition = \"2021\"\n\n[dependencies]\n",
        i % 9
    );
    for n in 0..rng.usize(2..20) {
        out.push_str(&format!(
            "{}-{n} = {{ version = \"{}.{}\", features = [\"{}\"] }}\n",
            word(rng),
            rng.u32(..5),
            rng.u32(..20),
            word(rng)
        ));
    }
    if plant == Some(Plant::TomlSyntax) {
        out.push_str("broken = \"no closing quote\n");
    }
    out.push_str("\n[features]\ndefault = []\n");
    out
}

fn python(rng: &mut fastrand::Rng, i: usize) -> String {
    let mut out = format!("\"\"\"Module {i}.\"\"\"\n\nimport os\n\n");
    for n in 0..rng.usize(2..12) {
        let name = word(rng);
        out.push_str(&format!(
            "\ndef {name}_{n}(value):\n    \"\"\"Return the {} of value.\"\"\"\n    if value > {}:\n        return os.path.join(\"{}\", str(value))\n    return None\n\n",
            word(rng),
            rng.u32(..100),
            word(rng)
        ));
    }
    out
}

fn prose(rng: &mut fastrand::Rng, i: usize, large: bool) -> String {
    let mut out = format!("Notes for item {i}\n\n");
    let lines = if large { usize::MAX } else { rng.usize(5..60) };
    let mut n = 0;
    while n < lines && out.len() < LARGE_BYTES + 1024 {
        let words: Vec<&str> = (0..rng.usize(4..14)).map(|_| word(rng)).collect();
        out.push_str(&words.join(" "));
        out.push('\n');
        n += 1;
    }
    out
}

fn markdown(rng: &mut fastrand::Rng, i: usize, setext: bool) -> String {
    let mut out = if setext {
        format!("Item {i}\n=======\n\n")
    } else {
        format!("# Item {i}\n\n")
    };
    for n in 0..rng.usize(1..6) {
        out.push_str(&format!("## Part {n}\n\n"));
        for _ in 0..rng.usize(1..6) {
            let words: Vec<&str> = (0..rng.usize(5..12)).map(|_| word(rng)).collect();
            out.push_str(&format!("- {}\n", words.join(" ")));
        }
        out.push('\n');
    }
    out
}

fn png(rng: &mut fastrand::Rng, key: bool) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    out.extend((0..rng.usize(200..4000)).map(|_| rng.u8(..)));
    if key {
        out.extend_from_slice(b"\0-----BEGIN RSA PRIVATE KEY-----\0"); // pragma: allowlist secret
        out.extend((0..64).map(|_| rng.u8(..)));
    }
    out
}
