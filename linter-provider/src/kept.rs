//! What the linter found in files it already linted, kept while the provider runs: keyed by the
//! file's path and blob and the blobs of the configuration files that apply to it, so a file
//! whose bytes and configuration did not change is not linted again. Bounded in bytes; the oldest
//! entries go first.

use std::collections::{HashMap, VecDeque};

use provider_kit::Finding;

/// Most bytes of findings kept (messages, help and fingerprints, roughly).
pub(crate) const MAX_KEPT_BYTES: usize = 16 << 20;

/// What one linted file is known by.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) path: String,
    pub(crate) blob: String,
    /// The configuration files that apply to it: (path, blob id), sorted.
    pub(crate) configs: Vec<(String, String)>,
}

impl Key {
    fn size(&self) -> usize {
        self.path.len()
            + self.blob.len()
            + self
                .configs
                .iter()
                .map(|(p, b)| p.len() + b.len())
                .sum::<usize>()
    }
}

/// The findings of linted files, oldest first out.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    found: HashMap<Key, Vec<Finding>>,
    order: VecDeque<Key>,
    bytes: usize,
}

fn size_of(findings: &[Finding]) -> usize {
    findings
        .iter()
        .map(|f| {
            64 + f.code.len()
                + f.message.len()
                + f.fingerprint.len()
                + f.help.len()
                + f.help_uri.len()
        })
        .sum()
}

impl Kept {
    pub(crate) fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// Forgets everything (the linter that found it is not the one installed now).
    pub(crate) fn clear(&mut self) {
        *self = Kept::default();
    }

    pub(crate) fn get(&self, key: &Key) -> Option<Vec<Finding>> {
        self.found.get(key).cloned()
    }

    /// Keeps `findings` under `key`, dropping the oldest entries past [`MAX_KEPT_BYTES`]. An entry
    /// larger than the whole bound is not kept.
    pub(crate) fn put(&mut self, key: Key, findings: Vec<Finding>) {
        let size = key.size() + size_of(&findings);
        if size > MAX_KEPT_BYTES || self.found.contains_key(&key) {
            return;
        }
        while self.bytes + size > MAX_KEPT_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(gone) = self.found.remove(&oldest) {
                self.bytes -= oldest.size() + size_of(&gone);
            }
        }
        self.bytes += size;
        self.order.push_back(key.clone());
        self.found.insert(key, findings);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.found.len()
    }
}

#[cfg(test)]
mod tests {
    use provider_kit::Severity;

    use super::*;

    fn key(blob: &str) -> Key {
        Key {
            path: "a.py".into(),
            blob: blob.into(),
            configs: vec![("pyproject.toml".into(), "blob:c".into())],
        }
    }

    fn findings(message_bytes: usize) -> Vec<Finding> {
        vec![Finding {
            code: "ruff/F401".into(),
            severity: Severity::Warning,
            message: "m".repeat(message_bytes),
            range: None,
            fingerprint: "sha256:f".into(),
            help: String::new(),
            help_uri: String::new(),
        }]
    }

    #[test]
    fn a_file_is_found_again_only_with_the_same_bytes_and_configuration() {
        let mut kept = Kept::default();
        kept.put(key("blob:1"), findings(10));
        assert_eq!(kept.get(&key("blob:1")).unwrap(), findings(10));
        assert!(kept.get(&key("blob:2")).is_none());
        let mut other_config = key("blob:1");
        other_config.configs[0].1 = "blob:d".into();
        assert!(kept.get(&other_config).is_none());
    }

    #[test]
    fn the_bytes_kept_stay_under_the_bound_and_the_oldest_go_first() {
        let mut kept = Kept::default();
        let each = MAX_KEPT_BYTES / 4;
        for i in 0..10 {
            kept.put(key(&format!("blob:{i}")), findings(each));
            assert!(kept.bytes <= MAX_KEPT_BYTES);
        }
        assert_eq!(kept.len(), 3);
        assert!(kept.get(&key("blob:9")).is_some());
        assert!(kept.get(&key("blob:0")).is_none());
        kept.put(key("huge"), findings(MAX_KEPT_BYTES + 1));
        assert!(kept.get(&key("huge")).is_none(), "larger than the bound");
    }
}
