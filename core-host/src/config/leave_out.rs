//! What the trusted configuration leaves out (`../shared/LINTERS.md` §7): `exclude` (paths never
//! sent to a provider), `disable` (rule ids whose findings the host drops) and `min-severity` (the
//! least severe finding kept), at the top of `host.toml` for every provider and in a provider's own
//! section for that one. Each setting can only narrow: the lists are joined and the stricter floor
//! wins.

use toml::Spanned;

/// An ASP diagnostic severity (`diagnostic.schema.json`: `error`, `warning`, `info`), most severe
/// first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }

    /// The severity of an ASP diagnostic's `severity`; `None` for a word ASP does not have.
    pub fn parse(text: &str) -> Option<Severity> {
        [Severity::Error, Severity::Warning, Severity::Info]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// One `exclude` glob and the key that set it (`exclude` or `hygiene.exclude`, as said in answers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exclude {
    pub glob: String,
    pub key: String,
}

/// What one provider is not shown and what of its findings the host drops.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LeaveOut {
    pub exclude: Vec<Exclude>,
    /// Rule ids (`hygiene/trailing-whitespace`) whose findings are dropped.
    pub disable: Vec<String>,
    /// Findings less severe than this are dropped.
    pub min_severity: Option<Severity>,
}

impl LeaveOut {
    /// Whether nothing is left out.
    pub fn is_empty(&self) -> bool {
        self.exclude.is_empty() && self.disable.is_empty() && self.min_severity.is_none()
    }

    /// What is left out, in words (`None` when nothing is): for `host/status`, so that what a
    /// provider is never shown is said before anything is evaluated.
    pub(crate) fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.exclude.is_empty() {
            let globs: Vec<String> = self
                .exclude
                .iter()
                .map(|e| format!("`{}`", e.glob))
                .collect();
            parts.push(format!("paths excluded: {}", globs.join(", ")));
        }
        if !self.disable.is_empty() {
            parts.push(format!("rules disabled: {}", self.disable.join(", ")));
        }
        if let Some(floor) = self.min_severity {
            parts.push(format!("findings below {} dropped", floor.as_str()));
        }
        (!parts.is_empty()).then(|| format!("left out by host.toml: {}", parts.join("; ")))
    }

    /// Both settings together: lists joined, the stricter floor.
    pub(crate) fn and(&self, other: &LeaveOut) -> LeaveOut {
        let mut out = self.clone();
        for exclude in &other.exclude {
            if !out.exclude.iter().any(|e| e.glob == exclude.glob) {
                out.exclude.push(exclude.clone());
            }
        }
        for rule in &other.disable {
            if !out.disable.contains(rule) {
                out.disable.push(rule.clone());
            }
        }
        out.min_severity = match (self.min_severity, other.min_severity) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        out
    }
}

/// The three keys as written in a table (its fields, since `deny_unknown_fields` does not go with
/// `flatten`).
#[derive(Default)]
pub(super) struct RawLeaveOut {
    pub(super) exclude: Option<Spanned<Vec<String>>>,
    pub(super) disable: Option<Spanned<Vec<String>>>,
    pub(super) min_severity: Option<Spanned<String>>,
}

/// A failed key: where (the span of its value), which key (with `prefix`) and why.
pub(super) type Refusal = (std::ops::Range<usize>, String, String);

impl RawLeaveOut {
    /// Checks the keys; `prefix` names the table (`""`, `"hygiene."`, `"provider[0]."`).
    pub(super) fn check(&self, prefix: &str) -> Result<LeaveOut, Refusal> {
        let mut out = LeaveOut::default();
        if let Some(globs) = &self.exclude {
            let key = format!("{prefix}exclude");
            let refuse = |m: String| (globs.span(), key.clone(), m);
            crate::glob::check_bounds(globs.get_ref()).map_err(refuse)?;
            for glob in globs.get_ref() {
                check_glob(glob).map_err(|m| refuse(format!("`{glob}`: {m}")))?;
                out.exclude.push(Exclude {
                    glob: glob.trim().to_owned(),
                    key: key.clone(),
                });
            }
        }
        if let Some(rules) = &self.disable {
            for rule in rules.get_ref() {
                let namespaced = rule.split_once('/').is_some_and(|(ns, id)| {
                    !ns.is_empty() && !id.is_empty() && !rule.chars().any(char::is_whitespace)
                });
                if !namespaced || rule.chars().any(char::is_control) || rule.len() > 256 {
                    return Err((
                        rules.span(),
                        format!("{prefix}disable"),
                        format!(
                            "`{}` is not a rule id: each must be a namespaced rule id such as \"hygiene/trailing-whitespace\"",
                            asp_wire::text::one_line(rule, 80)
                        ),
                    ));
                }
                if !out.disable.contains(rule) {
                    out.disable.push(rule.clone());
                }
            }
        }
        if let Some(floor) = &self.min_severity {
            out.min_severity = Some(Severity::parse(floor.get_ref()).ok_or_else(|| {
                (
                    floor.span(),
                    format!("{prefix}min-severity"),
                    format!(
                        "unknown severity `{}`: expected \"error\", \"warning\" or \"info\" (the ASP severities)",
                        asp_wire::text::one_line(floor.get_ref(), 80)
                    ),
                )
            })?);
        }
        Ok(out)
    }
}

/// Refuses what the glob dialect of `crate::glob` would read otherwise than the user meant: an
/// empty glob, a `!` (an exclusion of an exclusion would widen), classes, alternates and escapes
/// (literal there, so `*.{js,ts}` would match nothing), `..` and control characters.
fn check_glob(glob: &str) -> Result<(), String> {
    let glob = glob.trim();
    if glob.is_empty() {
        return Err("an empty glob excludes nothing".into());
    }
    if glob.starts_with('!') {
        return Err("a glob of `exclude` cannot start with `!`: a setting can only narrow".into());
    }
    if let Some(c) = glob
        .chars()
        .find(|c| matches!(c, '[' | ']' | '{' | '}' | '\\'))
    {
        return Err(format!(
            "`{c}` is not supported: globs know `*`, `**` and `?` only (no classes, alternates or escapes)"
        ));
    }
    if glob.chars().any(char::is_control) {
        return Err("a glob cannot hold a control character".into());
    }
    if glob.split('/').any(|s| s == "..") {
        return Err("a glob is relative to the repository and cannot hold `..`".into());
    }
    Ok(())
}
