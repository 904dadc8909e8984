//! The tool: the host as `tool.driver` with one rule per diagnostic code, and the providers
//! (diagnostic sources) as `tool.extensions` carrying their authority evidence.

use std::collections::{HashMap, HashSet};

use asp_wire::proto::{AuthorityEvidence, Decision, Finding};
use hygiene_rules as hygiene;
use serde_json::{Value, json};
use serde_sarif::sarif::{
    MultiformatMessageString, PropertyBag, ReportingConfiguration, ReportingDescriptor,
    ToolComponent,
};

use super::level::{level, level_name};
use super::{DESCRIPTION_MAX, NAME_MAX, TEXT_MAX, bag};
use crate::options::HostIdentity;
use crate::values::{clean, is_semver, is_web_uri, markdown_escape};

/// The driver's name when the host does not say its own.
pub(crate) const DEFAULT_HOST_NAME: &str = "asp-host";
/// The rule of a diagnostic that has no code.
pub(crate) const UNNAMED_RULE: &str = "asp/unnamed-rule";
/// The extension of a diagnostic that has no source.
const UNKNOWN_PROVIDER: &str = "(unknown provider)";

/// What one rule is built from: its first finding, and the first help and link any of its
/// findings gives.
#[derive(Clone)]
struct RuleFacts {
    id: String,
    source: String,
    level: &'static str,
    help: Option<String>,
    href: Option<String>,
}

/// The rules catalogue, in order of first use, with each code's rule index and each source's
/// provider name (computed once per distinct value, not once per finding).
pub(crate) struct Catalogue<'a> {
    facts: Vec<RuleFacts>,
    by_id: HashMap<String, usize>,
    by_code: HashMap<&'a str, usize>,
    providers: HashMap<&'a str, String>,
}

impl<'a> Catalogue<'a> {
    pub(crate) fn build(findings: &[&'a Finding]) -> Catalogue<'a> {
        let mut catalogue = Catalogue {
            facts: Vec::new(),
            by_id: HashMap::new(),
            by_code: HashMap::new(),
            providers: HashMap::new(),
        };
        for finding in findings {
            let d = &finding.diagnostic;
            let source = catalogue
                .providers
                .entry(d.source.as_str())
                .or_insert_with(|| provider_name(&d.source));
            let i = match catalogue.by_code.get(d.code.as_str()) {
                Some(&i) => i,
                None => {
                    // Codes that differ only in hidden characters are one rule.
                    let id = rule_id(&d.code);
                    let next = catalogue.facts.len();
                    let i = *catalogue.by_id.entry(id.clone()).or_insert(next);
                    if i == next {
                        catalogue.facts.push(RuleFacts {
                            id,
                            source: source.clone(),
                            level: level_name(level(finding)),
                            help: None,
                            href: None,
                        });
                    }
                    catalogue.by_code.insert(d.code.as_str(), i);
                    i
                }
            };
            let facts = &mut catalogue.facts[i];
            if facts.help.is_none() {
                facts.help = d
                    .help
                    .as_deref()
                    .map(|h| clean(h, TEXT_MAX, ""))
                    .filter(|h| !h.is_empty());
            }
            if facts.href.is_none() {
                facts.href = d
                    .code_description
                    .as_ref()
                    .map(|c| c.href.trim().to_owned())
                    .filter(|h| is_web_uri(h));
            }
        }
        catalogue
    }

    /// The rule id and index of a finding the catalogue was built from.
    pub(crate) fn rule_of(&self, finding: &Finding) -> Option<(&str, usize)> {
        let &i = self.by_code.get(finding.diagnostic.code.as_str())?;
        Some((self.facts[i].id.as_str(), i))
    }

    /// The provider name of a finding's source (without hidden characters, never empty).
    pub(crate) fn provider(&self, finding: &Finding) -> String {
        let source = finding.diagnostic.source.as_str();
        self.providers
            .get(source)
            .cloned()
            .unwrap_or_else(|| provider_name(source))
    }

    pub(crate) fn len(&self) -> usize {
        self.facts.len()
    }

    pub(crate) fn rules(&self) -> Vec<ReportingDescriptor> {
        self.facts.iter().cloned().map(rule).collect()
    }
}

/// The rule id of a diagnostic code: the code without hidden characters.
pub(crate) fn rule_id(code: &str) -> String {
    clean(code, NAME_MAX * 4, UNNAMED_RULE)
}

fn provider_name(source: &str) -> String {
    clean(source, NAME_MAX, UNKNOWN_PROVIDER)
}

fn rule(facts: RuleFacts) -> ReportingDescriptor {
    let RuleFacts {
        id,
        source,
        level,
        help,
        href,
    } = facts;
    // The built-in hygiene provider's rules are described from the one table it reports by
    // (the seam carries no rule descriptors); any other provider's from its id.
    let builtin = hygiene::rule(&id).filter(|_| source == hygiene::SOURCE);
    let short = clean(
        &builtin.map_or_else(
            || format!("{id} (reported by {source})"),
            |rule| rule.short.to_owned(),
        ),
        DESCRIPTION_MAX,
        &id,
    );
    let full = clean(
        &builtin.map_or_else(
            || {
                format!(
                    "Findings of rule {id}, reported by the provider {source} through the ASP \
                     host. The host decides; this log is advisory."
                )
            },
            |rule| format!("{} The host decides; this log is advisory.", rule.full),
        ),
        DESCRIPTION_MAX,
        &id,
    );
    let href = href.or_else(|| builtin.map(|rule| rule.help_uri()));
    let help_text = help.clone().unwrap_or_else(|| {
        format!("{source} gives no help for {id}: see each result's message and next step.")
    });
    let mut markdown = match &help {
        Some(help) => markdown_escape(help),
        None => markdown_escape(&help_text),
    };
    if let Some(href) = &href {
        markdown.push_str(&format!("\n\n[Rule documentation](<{href}>)"));
    }
    let mut tags = vec!["asp".to_owned()];
    if !tags.contains(&source) {
        tags.push(source.clone());
    }
    for tag in builtin.map_or(&[][..], |rule| rule.tags) {
        if !tags.iter().any(|t| t == tag) {
            tags.push((*tag).to_owned());
        }
    }
    let problem_severity = match level {
        "error" => "error",
        "warning" => "warning",
        _ => "recommendation",
    };
    ReportingDescriptor::builder()
        .id(id.as_str())
        .opt_name(pascal_name(&id))
        .short_description(MultiformatMessageString::builder().text(short).build())
        .full_description(MultiformatMessageString::builder().text(full).build())
        .help(
            MultiformatMessageString::builder()
                .text(help_text)
                .markdown(markdown)
                .build(),
        )
        .opt_help_uri(href)
        .default_configuration(
            ReportingConfiguration::builder()
                .level(json!(level))
                .build(),
        )
        .properties(PropertyBag {
            tags: Some(tags),
            ..bag([
                ("problem.severity", json!(problem_severity)),
                ("provider", json!(source)),
                (
                    "security-severity",
                    json!(builtin.and_then(|rule| rule.security_severity)),
                ),
            ])
        })
        .build()
}

/// A readable rule name from its id: `lattice/secrets` → `LatticeSecrets`.
fn pascal_name(id: &str) -> Option<String> {
    let name: String = id
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .flat_map(|word| {
            let mut chars = word.chars();
            let first = chars.next().into_iter().flat_map(char::to_uppercase);
            first.chain(chars)
        })
        .take(NAME_MAX)
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The driver: the host that decided, with the rules catalogue.
pub(crate) fn driver(
    decision: &Decision,
    fallback: Option<&HostIdentity>,
    rules: Vec<ReportingDescriptor>,
) -> ToolComponent {
    let host = &decision.receipt.raw["host"];
    let text = |key: &str| {
        host.get(key)
            .and_then(Value::as_str)
            .map(|s| clean(s, NAME_MAX, ""))
            .filter(|s| !s.is_empty())
    };
    let (name, version) = match (text("name"), fallback) {
        (Some(name), _) => (name, text("version")),
        (None, Some(host)) => (
            clean(&host.name, NAME_MAX, DEFAULT_HOST_NAME),
            Some(clean(&host.version, NAME_MAX, "")).filter(|v| !v.is_empty()),
        ),
        (None, None) => (DEFAULT_HOST_NAME.to_owned(), None),
    };
    let semantic_version = version.clone().filter(|v| is_semver(v));
    ToolComponent::builder()
        .name(name)
        .opt_version(version)
        .opt_semantic_version(semantic_version)
        .rules(rules)
        .build()
}

/// One extension per provider (diagnostic source, in order of first finding) with the distinct
/// authority evidence its findings carry; at most `limit`, with how many more there were.
pub(crate) fn extensions<'a>(findings: &'a [Finding], limit: usize) -> (Vec<ToolComponent>, usize) {
    struct Provider<'a> {
        name: String,
        findings: usize,
        evidence: Vec<Value>,
        seen: HashSet<EvidenceKey<'a>>,
    }
    let mut providers: Vec<Provider<'a>> = Vec::new();
    let mut by_source: HashMap<&str, usize> = HashMap::new();
    // Two sources that differ only in hidden characters are one provider, by name.
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for finding in findings {
        let source = finding.diagnostic.source.as_str();
        let i = match by_source.get(source) {
            Some(&i) => i,
            None => {
                let name = provider_name(source);
                let i = *by_name.entry(name.clone()).or_insert_with(|| {
                    providers.push(Provider {
                        name,
                        findings: 0,
                        evidence: Vec::new(),
                        seen: HashSet::new(),
                    });
                    providers.len() - 1
                });
                by_source.insert(source, i);
                i
            }
        };
        let provider = &mut providers[i];
        provider.findings += 1;
        if let Some(evidence) = &finding.authority
            && provider.seen.insert(evidence_key(evidence))
        {
            provider.evidence.push(authority_json(evidence));
        }
    }
    let omitted = providers.len().saturating_sub(limit);
    let extensions = providers
        .into_iter()
        .take(limit)
        .map(|p| {
            ToolComponent::builder()
                .name(p.name)
                .properties(bag([
                    ("authorityEvidence", Value::Array(p.evidence)),
                    ("findings", json!(p.findings)),
                ]))
                .build()
        })
        .collect();
    (extensions, omitted)
}

/// Every field of a piece of authority evidence, to list each distinct one once.
type EvidenceKey<'a> = (
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    bool,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
);

fn evidence_key(e: &AuthorityEvidence) -> EvidenceKey<'_> {
    let grant = &e.authority;
    (
        &e.identity,
        &e.integrity,
        e.conformance.as_deref(),
        e.isolation.as_deref(),
        grant.granted,
        &grant.requirement,
        grant.call_site.as_deref(),
        grant.policy_digest.as_deref(),
    )
}

/// Authority evidence as the host sent it (the fields the bridge reads).
pub(crate) fn authority_json(evidence: &AuthorityEvidence) -> Value {
    let grant = &evidence.authority;
    let mut authority = json!({"granted": grant.granted, "requirement": grant.requirement});
    if let Some(call_site) = &grant.call_site {
        authority["callSite"] = json!(call_site);
    }
    if let Some(digest) = &grant.policy_digest {
        authority["policyDigest"] = json!(digest);
    }
    let mut value = json!({
        "identity": evidence.identity,
        "integrity": evidence.integrity,
        "authority": authority,
    });
    if let Some(conformance) = &evidence.conformance {
        value["conformance"] = json!(conformance);
    }
    if let Some(isolation) = &evidence.isolation {
        value["isolation"] = json!(isolation);
    }
    value
}
