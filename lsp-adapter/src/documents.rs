//! The document store: every open document in the workspace with its text, version, the evaluation
//! it waits for, and the diagnostics last published for it.
//!
//! It lives behind a std `Mutex` and every `did*` handler updates it synchronously, so no change can
//! be overtaken by another. Between evaluations the diagnostics move with the edits; an evaluation's
//! result is computed against the text of the version it was started for and moved through the edits
//! made since, and it is taken only if no newer evaluation of the document has been asked for.

mod position;

use std::collections::HashMap;
use std::sync::Arc;

use tower_lsp_server::ls_types::{Diagnostic, Range, TextDocumentContentChangeEvent, Uri};

pub(crate) use position::{Edit, Encoding, Text};

/// Every open document of the workspace; documents outside it are never stored.
#[derive(Debug, Default)]
pub(crate) struct Documents {
    docs: HashMap<Uri, Doc>,
}

impl Documents {
    pub(crate) fn get(&self, uri: &Uri) -> Option<&Doc> {
        self.docs.get(uri)
    }

    pub(crate) fn get_mut(&mut self, uri: &Uri) -> Option<&mut Doc> {
        self.docs.get_mut(uri)
    }

    /// Opens (or reopens) a document. A reopened one goes on counting its evaluations, so that a
    /// result for the text it replaces can never be taken for the new one's.
    pub(crate) fn open(&mut self, uri: Uri, mut doc: Doc) {
        if let Some(old) = self.docs.get(&uri) {
            doc.trigger = old.trigger;
        }
        self.docs.insert(uri, doc);
    }

    pub(crate) fn close(&mut self, uri: &Uri) -> Option<Doc> {
        self.docs.remove(uri)
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&Uri, &mut Doc)> {
        self.docs.iter_mut()
    }
}

/// The text of the version an evaluation was started for, and the edits made since.
#[derive(Debug)]
struct Snapshot {
    seq: u64,
    text: Arc<Text>,
    edits: Vec<Edit>,
}

/// One open document.
#[derive(Debug)]
pub(crate) struct Doc {
    pub(crate) version: i32,
    /// Repo-relative path, `/`-separated: what the host calls it.
    pub(crate) path: String,
    text: Text,
    /// The latest evaluation asked for (0: none yet).
    trigger: u64,
    /// Set while the latest evaluation has not been settled.
    snapshot: Option<Snapshot>,
    /// The host's findings as last published, in the current text's coordinates.
    findings: Vec<Diagnostic>,
    /// What did not run, shown at the top of the document.
    notice: Option<Diagnostic>,
    /// The evaluation that failed for want of a host, to run again once it is back.
    failed: Option<u64>,
    /// An evaluation got the host's answer: the findings shown are from a check that ran.
    checked: bool,
    /// Counts changes of the published set (the pull `resultId`).
    revision: u64,
    /// A pull was answered before the latest evaluation was settled.
    pulled_early: bool,
}

/// What an evaluation needs from a document, taken when it starts.
#[derive(Clone, Debug)]
pub(crate) struct Job {
    pub(crate) path: String,
    pub(crate) text: Arc<Text>,
}

impl Doc {
    pub(crate) fn new(version: i32, text: String, path: String) -> Doc {
        Doc {
            version,
            path,
            text: Text::new(text),
            trigger: 0,
            snapshot: None,
            findings: Vec::new(),
            notice: None,
            failed: None,
            checked: false,
            revision: 0,
            pulled_early: false,
        }
    }

    #[cfg(test)]
    pub(crate) fn text(&self) -> &str {
        self.text.as_str()
    }

    /// Asks for an evaluation of the text as it is now; returns its sequence number.
    pub(crate) fn begin(&mut self) -> u64 {
        self.trigger += 1;
        self.snapshot = Some(Snapshot {
            seq: self.trigger,
            text: Arc::new(self.text.clone()),
            edits: Vec::new(),
        });
        self.trigger
    }

    /// The latest evaluation asked for (0: none yet).
    pub(crate) fn trigger(&self) -> u64 {
        self.trigger
    }

    /// The evaluation `seq`, if it is still the latest one asked for.
    pub(crate) fn job(&self, seq: u64) -> Option<Job> {
        let snapshot = self.snapshot.as_ref().filter(|s| s.seq == seq)?;
        Some(Job {
            path: self.path.clone(),
            text: snapshot.text.clone(),
        })
    }

    /// Whether a check of this document has run (its findings, if any, are shown).
    pub(crate) fn checked(&self) -> bool {
        self.checked
    }

    /// Whether an evaluation was asked for and has not been settled yet.
    pub(crate) fn pending(&self) -> bool {
        self.snapshot.is_some()
    }

    /// Asks again for the evaluation that failed for want of a host, unless a newer one was asked for.
    pub(crate) fn retry_failed(&mut self) -> Option<u64> {
        (self.failed? == self.trigger && self.snapshot.is_none()).then(|| self.begin())
    }

    /// Applies one content change; returns whether the diagnostics moved or went away.
    pub(crate) fn change(
        &mut self,
        change: &TextDocumentContentChangeEvent,
        encoding: Encoding,
    ) -> bool {
        let (replaced, inserted) = match change.range {
            Some(range) => {
                let mut a = self.text.offset(range.start, encoding);
                let mut b = self.text.offset(range.end, encoding);
                if a > b {
                    std::mem::swap(&mut a, &mut b);
                }
                (a..b, change.text.as_str())
            }
            None => {
                let (old, new) = self.text.difference(&change.text);
                (old, &change.text[new])
            }
        };
        let range = Range::new(
            self.text.position(replaced.start, encoding),
            self.text.position(replaced.end, encoding),
        );
        let edit = Edit::new(range, inserted, encoding);
        self.text.replace(replaced, inserted);
        let before = self.findings.len();
        let mut moved = false;
        let text = &self.text;
        self.findings
            .retain_mut(|d| match edit.move_range(d.range) {
                Some(range) if range == d.range => true,
                Some(range)
                    if text.fits(range.start, encoding) && text.fits(range.end, encoding) =>
                {
                    d.range = range;
                    moved = true;
                    true
                }
                _ => false,
            });
        if let Some(snapshot) = &mut self.snapshot {
            snapshot.edits.push(edit);
        }
        let changed = moved || self.findings.len() != before;
        if changed {
            self.revision += 1;
        }
        changed
    }

    /// Takes the result of evaluation `seq`: `findings` in the coordinates of the text it was started
    /// for (or `None` to keep the last ones), and the notice of what did not run. Returns false, and
    /// changes nothing, when a newer evaluation was asked for meanwhile.
    pub(crate) fn settle(
        &mut self,
        seq: u64,
        findings: Option<Vec<Diagnostic>>,
        notice: Option<Diagnostic>,
        failed: bool,
        encoding: Encoding,
    ) -> bool {
        if self.trigger != seq {
            return false;
        }
        let Some(snapshot) = self.snapshot.take() else {
            return false;
        };
        if let Some(mut findings) = findings {
            for edit in &snapshot.edits {
                findings.retain_mut(|d| match edit.move_range(d.range) {
                    Some(range) => {
                        d.range = range;
                        true
                    }
                    None => false,
                });
            }
            if !snapshot.edits.is_empty() {
                let text = &self.text;
                findings.retain(|d| {
                    text.fits(d.range.start, encoding) && text.fits(d.range.end, encoding)
                });
            }
            self.findings = findings;
            self.checked = true;
        }
        self.notice = notice;
        self.failed = failed.then_some(seq);
        self.revision += 1;
        true
    }

    /// The full set to publish: the notice of what did not run first, then the findings.
    pub(crate) fn shown(&self) -> impl Iterator<Item = &Diagnostic> + Clone {
        self.notice.iter().chain(self.findings.iter())
    }

    /// [`Doc::shown`], as a list of its own.
    pub(crate) fn diagnostics(&self) -> Vec<Diagnostic> {
        self.shown().cloned().collect()
    }

    /// The pull `resultId` of the set as it is now.
    pub(crate) fn result_id(&self) -> String {
        format!("{}.{}", self.version, self.revision)
    }

    /// Notes that a pull was answered while an evaluation was pending; true once per such pull.
    pub(crate) fn mark_pulled_early(&mut self) {
        if self.pending() {
            self.pulled_early = true;
        }
    }

    /// Whether a pull was answered before the result just settled (and forgets it).
    pub(crate) fn take_pulled_early(&mut self) -> bool {
        std::mem::take(&mut self.pulled_early)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::Position;

    fn finding(line: u32, from: u32, to: u32) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, from), Position::new(line, to)),
            message: "m".into(),
            ..Diagnostic::default()
        }
    }

    fn insert(line: u32, character: u32, text: &str) -> TextDocumentContentChangeEvent {
        let at = Position::new(line, character);
        TextDocumentContentChangeEvent {
            range: Some(Range::new(at, at)),
            range_length: None,
            text: text.into(),
        }
    }

    /// [`Doc::settle`] with `findings` (in UTF-16 columns), no notice, not failed.
    fn settle_with(doc: &mut Doc, seq: u64, findings: Vec<Diagnostic>) -> bool {
        doc.settle(seq, Some(findings), None, false, Encoding::Utf16)
    }

    fn ranges(doc: &Doc) -> Vec<(u32, u32, u32)> {
        doc.diagnostics()
            .iter()
            .map(|d| {
                (
                    d.range.start.line,
                    d.range.start.character,
                    d.range.end.character,
                )
            })
            .collect()
    }

    #[test]
    fn findings_move_with_edits_and_go_when_an_edit_cuts_them() {
        let mut doc = Doc::new(1, "a\nb\n    secret = 1\n".into(), "f".into());
        let seq = doc.begin();
        assert!(settle_with(&mut doc, seq, vec![finding(2, 4, 10)]));
        assert!(doc.change(&insert(0, 0, "\n"), Encoding::Utf16));
        assert_eq!(ranges(&doc), [(3, 4, 10)]);
        assert!(doc.change(&insert(3, 0, "xx"), Encoding::Utf16));
        assert_eq!(ranges(&doc), [(3, 6, 12)]);
        assert!(
            !doc.change(&insert(0, 0, "z"), Encoding::Utf16),
            "nothing moved"
        );
        let cut = TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(3, 10), Position::new(3, 14))),
            range_length: None,
            text: String::new(),
        };
        assert!(doc.change(&cut, Encoding::Utf16));
        assert_eq!(ranges(&doc), []);
        assert_eq!(doc.text(), "z\na\nb\nxx    secr 1\n");
    }

    #[test]
    fn a_result_started_before_edits_is_moved_through_them() {
        let mut doc = Doc::new(1, "one\ntwo secret\n".into(), "f".into());
        let seq = doc.begin();
        doc.change(&insert(0, 0, "zero\n"), Encoding::Utf16);
        assert!(settle_with(&mut doc, seq, vec![finding(1, 4, 10)]));
        assert_eq!(ranges(&doc), [(2, 4, 10)]);
    }

    #[test]
    fn a_superseded_result_is_never_taken() {
        let mut doc = Doc::new(1, "x\n".into(), "f".into());
        let first = doc.begin();
        let second = doc.begin();
        assert!(!settle_with(&mut doc, first, vec![finding(0, 0, 1)]));
        assert!(doc.job(first).is_none());
        assert!(doc.job(second).is_some());
        assert!(doc.pending());
        assert!(settle_with(&mut doc, second, vec![]));
        assert!(!doc.pending());
    }

    #[test]
    fn a_reopened_document_never_takes_a_result_meant_for_the_text_it_replaced() {
        let uri: Uri = "file:///w/a.ts".parse().unwrap();
        let mut docs = Documents::default();
        docs.open(uri.clone(), Doc::new(1, "old\n".into(), "a.ts".into()));
        let old_seq = docs.get_mut(&uri).unwrap().begin();
        docs.open(uri.clone(), Doc::new(1, "new\n".into(), "a.ts".into()));
        let doc = docs.get_mut(&uri).unwrap();
        let new_seq = doc.begin();
        assert_ne!(old_seq, new_seq);
        assert!(!settle_with(doc, old_seq, vec![]));
        assert!(settle_with(doc, new_seq, vec![]));
    }

    #[test]
    fn a_full_text_change_is_one_minimal_edit() {
        let mut doc = Doc::new(1, "a\nkey = 1\n".into(), "f".into());
        let seq = doc.begin();
        settle_with(&mut doc, seq, vec![finding(1, 0, 3)]);
        let full = TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: "new\na\nkey = 1\n".into(),
        };
        assert!(doc.change(&full, Encoding::Utf16));
        assert_eq!(ranges(&doc), [(2, 0, 3)]);
    }

    #[test]
    fn a_failed_evaluation_is_retried_only_if_nothing_newer_was_asked_for() {
        let mut doc = Doc::new(1, "x\n".into(), "f".into());
        let seq = doc.begin();
        doc.settle(seq, None, Some(finding(0, 0, 0)), true, Encoding::Utf16);
        assert_eq!(doc.retry_failed(), Some(seq + 1));
        assert_eq!(doc.retry_failed(), None, "already pending");
    }
}
