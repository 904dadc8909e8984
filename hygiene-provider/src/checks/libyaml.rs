//! The libyaml reading of YAML (what PyYAML's loaders, ruamel and most tools read), through
//! libyaml-safer, a line-by-line port of libyaml: consulted when the strict YAML 1.2 parser rejects
//! a file, so that what those tools load is no error by default (a `}` in column 0 closing a flow
//! mapping, flow content or a quoted scalar less indented than its block, a tab in flow
//! indentation). Undefined aliases are rejected as PyYAML's composer does.

use std::collections::HashSet;

use libyaml_safer::{EventData, Parser};

/// Deepest nesting read: deeper files are not taken as loading (the strict parser's finding, a
/// depth limit, stands), and the parser's state stays small however deep the input goes.
const MAX_DEPTH: usize = 128;

/// Whether libyaml reads `text` through to its end, every alias defined.
pub(super) fn loads(text: &str) -> bool {
    let mut input = text.as_bytes();
    let mut parser = Parser::new();
    parser.set_input_string(&mut input);
    let mut depth = 0usize;
    let mut anchors: HashSet<String> = HashSet::new();
    loop {
        let Ok(event) = parser.parse() else {
            return false;
        };
        match event.data {
            EventData::StreamEnd => return true,
            EventData::DocumentStart { .. } => anchors.clear(),
            EventData::SequenceStart { anchor, .. } | EventData::MappingStart { anchor, .. } => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return false;
                }
                anchors.extend(anchor);
            }
            EventData::Scalar { anchor, .. } => anchors.extend(anchor),
            EventData::SequenceEnd | EventData::MappingEnd => depth = depth.saturating_sub(1),
            EventData::Alias { anchor } if !anchors.contains(&anchor) => return false,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Settings, Subject, YamlReading, check};
    use crate::rules::Rule;

    /// What libyaml and ruamel load and strict YAML 1.2 rejects.
    const LOADS: [&str; 5] = [
        "a:\n  b: {c: 1,\n}\n",
        "a:\n  b: [1,\n2]\n",
        "a:\n  b: {c: 1,\n d: 2}\n",
        "a:\n  b: \"x\n y\"\n",
        "a: [\n\t1]\n",
    ];
    /// What every reading rejects.
    const BROKEN: [&str; 4] = [
        "a: [1, 2\n",
        "a: *nowhere\n",
        "k: v\n\"x\": a: b\n",
        "a:\n  b: x\n y\n",
    ];

    fn errors(text: &str, yaml: YamlReading) -> usize {
        check(
            Subject {
                path: "a.yaml",
                bytes: text.as_bytes(),
                other: None,
                added: true,
            },
            &[Rule::YamlSyntax],
            Settings {
                max_added_file_bytes: 1 << 20,
                yaml,
            },
        )
        .findings
        .len()
    }

    #[test]
    fn what_libyaml_loads_is_no_error_by_default_and_an_error_when_strict() {
        for text in LOADS {
            assert_eq!(errors(text, YamlReading::Compatible), 0, "{text:?}");
            assert_eq!(errors(text, YamlReading::Strict), 1, "{text:?}");
        }
        for text in BROKEN {
            assert_eq!(errors(text, YamlReading::Compatible), 1, "{text:?}");
            assert_eq!(errors(text, YamlReading::Strict), 1, "{text:?}");
        }
    }

    #[test]
    fn nesting_past_the_depth_is_not_read_and_costs_no_memory() {
        assert!(!super::loads(&"[".repeat(8 << 20)));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(!super::loads(&deep));
    }

    /// The reference: ruamel.yaml (pre-commit-hooks' `check-yaml` loads with it) loads exactly
    /// the files reported as loading.
    #[test]
    fn ruamel_loads_exactly_what_is_no_error_by_default() {
        let Some(python) =
            test_support::external_tool("ASP_BRIDGE_PYTHON", "Python with ruamel.yaml")
        else {
            return;
        };
        let script = "import io, json, sys\n\
            try:\n\
            \x20   from ruamel.yaml import YAML\n\
            except ImportError:\n\
            \x20   print('null'); sys.exit()\n\
            ok = []\n\
            for text in json.load(sys.stdin):\n\
            \x20   try:\n\
            \x20       list(YAML(typ='safe', pure=True).load_all(io.StringIO(text))); ok.append(True)\n\
            \x20   except Exception:\n\
            \x20       ok.append(False)\n\
            print(json.dumps(ok))\n";
        let cases: Vec<&str> = LOADS.iter().chain(BROKEN.iter()).copied().collect();
        let read = test_support::process::json_verdicts(
            python.as_ref(),
            &["-c", script],
            &cases,
            std::time::Duration::from_secs(60),
        );
        let Some(read): Option<Vec<bool>> = serde_json::from_value(read).unwrap() else {
            test_support::skip::skip("ruamel.yaml is not installed in ASP_BRIDGE_PYTHON");
            return;
        };
        for (text, read) in cases.iter().zip(read) {
            assert_eq!(
                read,
                errors(text, YamlReading::Compatible) == 0,
                "ruamel and the check on {text:?}"
            );
        }
    }
}
