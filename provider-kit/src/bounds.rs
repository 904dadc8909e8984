//! What bounds one evaluation: the findings it keeps (the most severe first, at most
//! [`MAX_DIAGNOSTICS`]) and the stop signal of its blocking work, raised when it ends or is dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::wire::{Diagnostic, Severity};

/// Most diagnostics in one assessment; past it the most severe are kept and the answer is
/// `truncated` (never `complete`).
pub const MAX_DIAGNOSTICS: usize = 10_000;

/// The diagnostics of an answer as they are found: once [`MAX_DIAGNOSTICS`] are kept, a new one
/// takes the place of a less severe one or is left out, so an error is never dropped to make room
/// for notes. Each is counted in `cut` when one is left out.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// Kept diagnostics by severity (error, warning, info), each with its arrival number.
    by_severity: [Vec<(usize, Diagnostic)>; 3],
    arrived: usize,
    /// Findings left out, here or by a check's own cap.
    pub(crate) cut: usize,
}

impl Kept {
    pub(crate) fn push(&mut self, diagnostic: Diagnostic) {
        let rank = rank(diagnostic.severity);
        let arrival = self.arrived;
        self.arrived += 1;
        if self.len() < MAX_DIAGNOSTICS {
            self.by_severity[rank].push((arrival, diagnostic));
            return;
        }
        self.cut += 1;
        let less_severe = (rank + 1..self.by_severity.len())
            .rev()
            .find(|&r| !self.by_severity[r].is_empty());
        if let Some(less_severe) = less_severe {
            self.by_severity[less_severe].pop();
            self.by_severity[rank].push((arrival, diagnostic));
        }
    }

    fn len(&self) -> usize {
        self.by_severity.iter().map(Vec::len).sum()
    }

    /// The kept diagnostics in the order they were found.
    pub(crate) fn into_diagnostics(self) -> Vec<Diagnostic> {
        let mut all: Vec<(usize, Diagnostic)> = self.by_severity.into_iter().flatten().collect();
        all.sort_unstable_by_key(|(arrival, _)| *arrival);
        all.into_iter().map(|(_, diagnostic)| diagnostic).collect()
    }
}

fn rank(severity: Severity) -> usize {
    match severity {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    }
}

/// Raised when dropped: the evaluation that owns it ended, or was dropped because the host
/// cancelled it (`$/cancelRequest` aborts the handler) or went away.
#[derive(Debug)]
pub struct Cancel(Arc<AtomicBool>);

/// What blocking work polls to learn that its evaluation is gone.
#[derive(Clone, Debug)]
pub struct Stop(Arc<AtomicBool>);

impl Cancel {
    pub fn on_drop() -> Cancel {
        Cancel(Arc::default())
    }

    pub fn signal(&self) -> Stop {
        Stop(self.0.clone())
    }
}

impl Drop for Cancel {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Stop {
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Location;

    fn diagnostic(severity: Severity, line: usize) -> Diagnostic {
        Diagnostic {
            code: "hygiene/x".into(),
            severity,
            source: "hygiene",
            message: line.to_string(),
            location: Location {
                path: "a.txt".into(),
                range: None,
            },
            fingerprint: String::new(),
            introduced: None,
            help: String::new(),
            code_description: crate::wire::CodeDescription {
                href: String::new(),
            },
        }
    }

    #[test]
    fn past_the_cap_an_error_takes_the_place_of_a_note_and_notes_are_left_out() {
        let mut kept = Kept::default();
        for line in 0..MAX_DIAGNOSTICS + 3 {
            kept.push(diagnostic(Severity::Info, line));
        }
        kept.push(diagnostic(Severity::Warning, 1));
        kept.push(diagnostic(Severity::Error, 2));
        assert_eq!(kept.cut, 5);
        let kept = kept.into_diagnostics();
        assert_eq!(kept.len(), MAX_DIAGNOSTICS);
        let severities: Vec<Severity> = kept[MAX_DIAGNOSTICS - 2..]
            .iter()
            .map(|d| d.severity)
            .collect();
        assert_eq!(
            severities,
            [Severity::Warning, Severity::Error],
            "both kept, last in the order found"
        );
        assert_eq!(kept[0].message, "0", "the first notes stay");
    }

    #[test]
    fn a_dropped_cancel_stops_the_work_that_polls_it() {
        let cancel = Cancel::on_drop();
        let stop = cancel.signal();
        assert!(!stop.is_set());
        drop(cancel);
        assert!(stop.is_set());
    }
}
