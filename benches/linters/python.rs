//! The linter benchmark's seeded Python: modules of a few hundred lines (imports, constants, a
//! dataclass, a class with methods, functions with loops, branches, comprehensions and
//! `try`/`except`), with the findings real code has planted at random: unused imports and locals,
//! `== None` and `== True`, f-strings without placeholders, bare `except:`, a lambda bound to a
//! name. The same seed gives the same files.

/// A small seeded generator (SplitMix64): the benchmark needs no other randomness.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True once in `n` times.
    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Modules a file may import, and a name each offers.
const IMPORTS: [(&str, &str); 13] = [
    ("os", "os.path.join"),
    ("sys", "sys.argv"),
    ("json", "json.dumps"),
    ("re", "re.compile"),
    ("itertools", "itertools.chain"),
    ("functools", "functools.reduce"),
    ("collections", "collections.Counter"),
    ("pathlib", "pathlib.Path"),
    ("hashlib", "hashlib.sha256"),
    ("textwrap", "textwrap.dedent"),
    ("shutil", "shutil.which"),
    ("time", "time.monotonic"),
    ("math", "math.floor"),
];

const NOUNS: [&str; 16] = [
    "order", "record", "item", "user", "account", "entry", "batch", "event", "ticket", "node",
    "job", "payload", "invoice", "session", "chunk", "report",
];

const VERBS: [&str; 10] = [
    "load", "parse", "merge", "render", "check", "collect", "update", "build", "export", "score",
];

/// The `pyproject.toml` both sides read: two checks beyond ruff's defaults, so that `== None`
/// and `== True` are findings.
pub(crate) const PYPROJECT: &str = "[project]\nname = \"bench\"\nversion = \"0.1.0\"\n\n\
[tool.ruff]\nline-length = 100\n\n[tool.ruff.lint]\nextend-select = [\"E711\", \"E712\"]\n";

/// The repository path of file `i`: a few packages, a few modules each.
pub(crate) fn path(i: usize) -> String {
    format!("src/pkg{:02}/{}_{i:04}.py", i % 20, NOUNS[i % NOUNS.len()])
}

/// The text of module `i`.
pub(crate) fn module(rng: &mut Rng, i: usize) -> String {
    let mut out = String::with_capacity(12 * 1024);
    let noun = NOUNS[i % NOUNS.len()];
    out.push_str(&format!(
        "\"\"\"The {noun} helpers of package {} (module {i}).\"\"\"\n\nfrom __future__ import annotations\n\n",
        i % 20
    ));
    // Imports: most are used below, one in three files has an unused one.
    out.push_str("import logging\n");
    let mut used = Vec::new();
    let count = 3 + rng.below(4);
    let start = rng.below(IMPORTS.len());
    for k in 0..count {
        let (module, name) = IMPORTS[(start + k) % IMPORTS.len()];
        out.push_str(&format!("import {module}\n"));
        used.push(name);
    }
    if rng.one_in(3) {
        let (module, _) = IMPORTS[(start + count) % IMPORTS.len()];
        out.push_str(&format!("import {module}  # unused\n"));
    }
    out.push_str("from dataclasses import dataclass, field\nfrom typing import Any, Iterable\n\n");
    let names = [rng.pick(&NOUNS), rng.pick(&NOUNS), rng.pick(&NOUNS)];
    out.push_str(&format!(
        "LOG = logging.getLogger(__name__)\nLIMIT = {}\nNAMES = (\"{}\", \"{}\", \"{}\")\n\n\n",
        10 + rng.below(990),
        names[0],
        names[1],
        names[2]
    ));
    dataclass(&mut out, rng, noun);
    let functions = 8 + rng.below(8);
    for f in 0..functions {
        function(&mut out, rng, noun, f, &used);
    }
    class(&mut out, rng, noun);
    out.push_str("\n\nif __name__ == \"__main__\":\n    main()\n");
    out
}

fn dataclass(out: &mut String, rng: &mut Rng, noun: &str) {
    let class = capitalised(noun);
    out.push_str(&format!(
        "@dataclass\nclass {class}:\n    \"\"\"One {noun} as it is stored.\"\"\"\n\n    key: str\n"
    ));
    for n in 0..3 + rng.below(4) {
        let kind = rng.pick(&["int", "str", "float", "bool"]);
        let default = match kind {
            "int" => "0",
            "str" => "\"\"",
            "float" => "0.0",
            _ => "False",
        };
        out.push_str(&format!("    field_{n}: {kind} = {default}\n"));
    }
    out.push_str(
        "    tags: list[str] = field(default_factory=list)\n\n    def label(self) -> str:\n        \
         return f\"{self.key}:{len(self.tags)}\"\n\n\n",
    );
}

fn function(out: &mut String, rng: &mut Rng, noun: &str, f: usize, used: &[&str]) {
    let verb = VERBS[(f + rng.below(VERBS.len())) % VERBS.len()];
    let name = format!("{verb}_{noun}s_{f}");
    out.push_str(&format!(
        "def {name}(items: Iterable[Any], limit: int = LIMIT) -> dict[str, Any]:\n    \
         \"\"\"{} the {noun}s, at most `limit` of them.\"\"\"\n    result: dict[str, Any] = {{}}\n    \
         seen = 0\n",
        capitalised(verb)
    ));
    if rng.one_in(4) {
        out.push_str("    unused_total = 0\n");
    }
    out.push_str(
        "    for index, item in enumerate(items):\n        if index >= limit:\n            break\n",
    );
    match rng.below(6) {
        0 => out.push_str("        if item == None:\n            continue\n"),
        1 => out.push_str(
            "        if getattr(item, \"active\", False) == True:\n            seen += 1\n",
        ),
        _ => out.push_str("        if item is None:\n            continue\n"),
    }
    for _ in 0..2 + rng.below(4) {
        let key = rng.pick(&NOUNS);
        match rng.below(5) {
            0 => out.push_str(&format!(
                "        values = [str(v) for v in getattr(item, \"values\", ()) if v]\n        \
                 result[\"{key}\"] = \", \".join(values)\n"
            )),
            1 => out.push_str(&format!(
                "        result.setdefault(\"{key}\", []).append(index * {})\n",
                1 + rng.below(9)
            )),
            2 => out.push_str(&format!(
                "        if isinstance(item, dict) and \"{key}\" in item:\n            \
                 result[\"{key}\"] = item[\"{key}\"]\n        elif seen > {}:\n            \
                 LOG.debug(\"skipped %s\", index)\n",
                rng.below(50)
            )),
            3 => out.push_str(
                "        total = sum(x * x for x in range(index % 7))\n        seen += total % 3\n",
            ),
            _ => out.push_str(&format!(
                "        while seen < index % {}:\n            seen += 1\n",
                2 + rng.below(5)
            )),
        }
    }
    // A use of each imported name now and then.
    let call = used[rng.below(used.len())];
    out.push_str(&format!("    result[\"tool\"] = repr({call})\n"));
    match rng.below(8) {
        0 => out.push_str(
            "    try:\n        result[\"size\"] = len(result)\n    except:\n        \
             LOG.warning(\"no size\")\n",
        ),
        1 => out.push_str("    message = f\"done\"\n    LOG.info(message)\n"),
        2 => out.push_str("    double = lambda x: x * 2\n    result[\"double\"] = double(seen)\n"),
        _ => out.push_str(
            "    try:\n        result[\"size\"] = len(result)\n    except TypeError as error:\n        \
             LOG.warning(\"no size: %s\", error)\n",
        ),
    }
    out.push_str("    result[\"seen\"] = seen\n    return result\n\n\n");
}

fn class(out: &mut String, rng: &mut Rng, noun: &str) {
    let class = format!("{}Store", capitalised(noun));
    out.push_str(&format!(
        "class {class}:\n    \"\"\"The {noun}s in memory, by key.\"\"\"\n\n    \
         def __init__(self) -> None:\n        self._items: dict[str, {}] = {{}}\n\n",
        capitalised(noun)
    ));
    for m in 0..4 + rng.below(5) {
        let verb = rng.pick(&VERBS);
        out.push_str(&format!(
            "    def {verb}_{m}(self, key: str, default: Any = None) -> Any:\n        \
             \"\"\"{} one {noun}.\"\"\"\n        found = self._items.get(key, default)\n        \
             if found is default:\n            return default\n        \
             return [tag.upper() for tag in found.tags if tag.startswith(\"{}\")]\n\n",
            capitalised(verb),
            &noun[..1]
        ));
    }
    out.push_str(
        "    def __len__(self) -> int:\n        return len(self._items)\n\n\n\
         def main() -> None:\n    store = ",
    );
    out.push_str(&format!(
        "{class}()\n    LOG.info(\"%d items\", len(store))\n"
    ));
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}
