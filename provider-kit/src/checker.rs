//! The seam between the kit and a provider's own checks: the [`Checker`] trait, the file sides it
//! is given in batches, and what it gives back for each. The kit does everything around it: the
//! lifecycle, the request, reading blobs, the comparison, the caps and the Assessment.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;

use crate::bounds::Stop;
use crate::changed::changed_lines;
use crate::text::{Range, Text};
use crate::wire::{Severity, TreeEntry};
use crate::workspace::{self, Read, Workspace};

/// The bytes of one blob, shared between the kit and the checks that read them.
pub type Blob = Arc<Vec<u8>>;

/// Who a checker is: its provider id, its diagnostic source and what it says of its caps.
#[derive(Clone, Copy, Debug)]
pub struct About {
    /// The provider id (`serverInfo.name`, `provider.id` of every assessment).
    pub id: &'static str,
    /// The diagnostic source and rule namespace (`hygiene` for `hygiene/private-key`).
    pub source: &'static str,
    /// Who publishes it (`initialize`'s `provenance.publisher`).
    pub publisher: &'static str,
    /// Most findings of one rule in one file side, when the checker caps them (said in the
    /// degradation of a truncated answer).
    pub per_rule_cap: Option<usize>,
}

/// Who this provider is: shown in `initialize` and in every assessment.
#[derive(Clone, Debug)]
pub struct Identity {
    /// Its version.
    pub version: String,
    /// A content hash of its build (`sha256:<hex>`), which changes with every build.
    pub fingerprint: String,
}

/// What a provider checks. The kit gives it the sides of the files in scope, a batch at a time (a
/// linter runs once over many files), with the before-sides when the comparison needs them; it
/// reads extra files through [`Run`] and stops at [`Run::deadline`] or once [`Run::stop`] is set.
pub trait Checker: Send + Sync + 'static {
    /// One rule (an enum for a fixed catalogue, a string for a tool's own ids).
    type Rule: Clone + PartialEq + Debug + Send + Sync + 'static;
    /// The checker's settings, from the request's `configuration`.
    type Settings: Clone + Debug + Send + Sync + 'static;

    fn about(&self) -> About;

    /// Every rule, in catalogue order: what runs when the request names none.
    fn rules(&self) -> Vec<Self::Rule>;

    /// A rule's namespaced id.
    fn rule_id<'r>(&'r self, rule: &'r Self::Rule) -> &'r str;

    /// The rule an asked-for id names, if this checker has it.
    fn parse_rule(&self, id: &str) -> Option<Self::Rule> {
        self.rules()
            .into_iter()
            .find(|rule| self.rule_id(rule) == id)
    }

    /// Reads the request's `configuration` (`None`: absent): the settings and the effective
    /// configuration (defaults filled in) that the config digest is taken of. `Err`: why it is
    /// invalid (an `input` error for the caller).
    fn configure(&self, configuration: Option<&Value>) -> Result<(Self::Settings, Value), String>;

    /// Whether the file at `path` is this checker's to check (a linter's file globs). A file it
    /// does not want is not read and not reported: it is outside what this provider checks.
    fn wants(&self, _settings: &Self::Settings, _path: &str) -> bool {
        true
    }

    /// What the checker kept of `sides`, named but not read yet: for each, `Some` with exactly what
    /// [`Checker::check`] would give it, or `None` for a side the kit is to read and check. The kit
    /// asks before it reads a batch, so a file checked before (a linter's result kept by blob) is
    /// not read again. By default nothing is kept.
    fn recall<W: Workspace>(
        &self,
        sides: &[Named],
        run: &Run<'_, Self, W>,
    ) -> impl Future<Output = Vec<Option<Checked>>> + Send
    where
        Self: Sized,
    {
        let _ = run;
        std::future::ready(sides.iter().map(|_| None).collect())
    }

    /// Checks `sides`, giving one [`Checked`] per side in their order; fewer when it stopped early
    /// (the deadline, or the evaluation gone): the rest are reported as not checked. `Err`: the
    /// checks failed as a whole (a panic, a tool that could not run).
    fn check<W: Workspace>(
        &self,
        sides: Vec<Side>,
        run: &Run<'_, Self, W>,
    ) -> impl Future<Output = Result<Vec<Checked>, String>> + Send
    where
        Self: Sized;
}

/// How a file changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Create,
    Modify,
    Delete,
    Rename,
    /// Not changed: a baseline file in a workspace or paths scope.
    Unchanged,
}

impl ChangeKind {
    pub(crate) fn parse(kind: &str) -> ChangeKind {
        match kind {
            "create" => ChangeKind::Create,
            "delete" => ChangeKind::Delete,
            "rename" => ChangeKind::Rename,
            _ => ChangeKind::Modify,
        }
    }
}

/// Which side of a change a [`Side`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    After,
    Before,
}

/// One side of one file, named by its path and blob but not read: what [`Checker::recall`] is
/// asked about.
#[derive(Clone, Debug)]
pub struct Named {
    pub path: String,
    pub change: ChangeKind,
    pub which: Which,
    /// The blob id of this side (`blob:sha256:<hex>`).
    pub blob: String,
    /// The file is added by the change (and this is its after side).
    pub added: bool,
}

/// One side of one file to check, with the other side to compare against.
#[derive(Clone, Debug)]
pub struct Side {
    /// The path findings are reported on (a rename's new path for both sides, so that a rename
    /// does not look like new findings).
    pub path: String,
    pub change: ChangeKind,
    pub which: Which,
    /// The blob id of this side (`blob:sha256:<hex>`): the key of what a checker keeps.
    pub blob: String,
    pub bytes: Blob,
    /// The other side; `None` when the path is new (or gone) on it.
    pub other: Option<Blob>,
    /// The file is added by the change.
    pub added: bool,
}

impl Side {
    /// `changed[i]` is true when line `i` of this side (read as UTF-8, lossily) is not in the
    /// other side; with no other side every line is.
    pub fn changed_lines(&self) -> Vec<bool> {
        let this = crate::text::lossy(&self.bytes);
        let other = self.other.as_ref().map(|o| crate::text::lossy(o));
        let other = other.as_deref().map(Text::new);
        changed_lines(&Text::new(&this), other.as_ref())
    }
}

/// What the checks found in one side.
#[derive(Debug, Default)]
pub struct Checked {
    /// The findings kept, in order.
    pub findings: Vec<Finding>,
    /// Findings the checker's own cap left out.
    pub cut: usize,
    /// What could not be checked in this file, and why (reported as not covered, never clean).
    pub unchecked: Vec<String>,
    /// What the checks have to say beyond findings (a tool's results dropped, and why): each one
    /// becomes an evidence message of the assessment.
    pub notes: Vec<String>,
}

/// One finding, as the Assessment carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The namespaced rule id.
    pub code: String,
    pub severity: Severity,
    pub message: String,
    /// `None`: about the whole file.
    pub range: Option<Range>,
    /// Stable when lines move (see [`crate::digest::fingerprint`]): findings of the two sides
    /// are matched by it.
    pub fingerprint: String,
    /// What to do about it.
    pub help: String,
    /// Where the rule is documented.
    pub help_uri: String,
}

/// One evaluation as a checker sees it: the rules and settings asked for, its deadline and stop
/// signal, and the host's content callbacks.
pub struct Run<'a, C: Checker, W> {
    pub rules: &'a [C::Rule],
    pub settings: &'a C::Settings,
    pub deadline: Instant,
    pub stop: Stop,
    pub(crate) workspace: &'a W,
    /// The changed paths, with the blob of their after side (`None`: deleted).
    pub(crate) changes: &'a HashMap<String, Option<String>>,
    /// The blobs the checks read themselves: the assessment's `validAsOf.blobs` names them too.
    pub(crate) read: Mutex<BTreeSet<String>>,
}

impl<C: Checker, W: Workspace> Run<'_, C, W> {
    /// Reads blobs (a configuration file, say) as the kit reads the changed files: in one call,
    /// halving a batch the host refuses, each checked against its id.
    pub async fn read_blobs(&self, ids: Vec<String>) -> Read {
        let read = workspace::read(self.workspace, ids, self.deadline).await;
        rpc_peer::lock(&self.read).extend(read.blobs.keys().cloned());
        read
    }

    /// A changed path's after side: `Some(Some(id))` changed, `Some(None)` deleted, `None`
    /// not changed (the baseline's, if any, is current).
    pub fn changed(&self, path: &str) -> Option<Option<&str>> {
        self.changes.get(path).map(Option::as_deref)
    }

    /// `workspace/listTree` of the baseline (`paths` narrows it): the entries and whether the
    /// host cut the list.
    pub async fn list_tree(
        &self,
        paths: Option<Vec<String>>,
    ) -> Result<(Vec<TreeEntry>, bool), String> {
        self.workspace
            .list_tree(paths, workspace::remaining(self.deadline))
            .await
    }

    /// `workspace/listTree` of the baseline's files that match `globs`: the entries and whether
    /// the host cut the list.
    pub async fn list_globs(&self, globs: Vec<String>) -> Result<(Vec<TreeEntry>, bool), String> {
        self.workspace
            .list_globs(globs, workspace::remaining(self.deadline))
            .await
    }
}
