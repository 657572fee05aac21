//! `sep1-domain`: whether an identifiable party has publicly claimed this asset. Sets accountability only.

use super::normalize_domain;
use crate::evidence::{claims, Evidence, SOURCE_DIRECTORY, SOURCE_HORIZON, SOURCE_STELLAR_TOML};
use crate::finding::{Check, Finding};
use crate::model::{Accountability, Mechanics};
use crate::subject::{
    Asset, DirectoryOutcome, FlagsOutcome, HomeDomain, LinkedOutcome, Subject, TomlDocument,
    TomlOutcome, MAX_LINKED_DOCUMENTS,
};

/// The sep1-domain check.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sep1Domain;

/// The outcome of reciprocal verification, shared with `reputation` (for its caveat on blocklist hits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainVerdict {
    /// verified / unverified / unknown.
    pub accountability: Accountability,
    /// The claims it rests on.
    pub evidence: Vec<Evidence>,
    /// Why.
    pub reasoning: String,
    /// True when the verdict could not be reached because home_domain itself is not known.
    pub undetermined: bool,
}

impl DomainVerdict {
    fn new(accountability: Accountability, reasoning: String) -> DomainVerdict {
        DomainVerdict {
            accountability,
            evidence: Vec::new(),
            reasoning,
            undetermined: false,
        }
    }
}

/// Reciprocal SEP-1 verification: home_domain, its stellar.toml, and a CURRENCIES entry matching code AND
/// issuer. Pure over the subject.
pub fn verify_domain(s: &Subject) -> DomainVerdict {
    let asset = &s.asset;
    let domain = match &s.home_domain {
        HomeDomain::Absent => {
            return DomainVerdict::new(
                Accountability::Unknown,
                "The issuer account advertises no home_domain, so nobody has publicly claimed this asset. An \
                 absent claim is not a failed one: there is simply no named party behind it."
                    .to_string(),
            )
        }
        HomeDomain::Unknown => {
            let mut v = DomainVerdict::new(
                Accountability::Unknown,
                "The issuer account record was not read, so whether any domain claims this asset is not known."
                    .to_string(),
            );
            v.undetermined = true;
            return v;
        }
        HomeDomain::Present(d) => d,
    };

    if let Some(v) = contradicted_by_directory(s, domain) {
        return v;
    }

    match &s.stellar_toml {
        TomlOutcome::NotFetched => DomainVerdict::new(
            Accountability::Unverified,
            format!("The issuer advertises home_domain {domain:?}, but its stellar.toml was not fetched, so the claim is unverified."),
        ),
        TomlOutcome::Failed { requested_url, retrieved_at, failure } => {
            let mut v = DomainVerdict::new(
                Accountability::Unverified,
                format!(
                    "The issuer advertises home_domain {domain:?}, but {requested_url} could not be read ({}). We \
                     could not check the claim; that is not the same as the domain disowning the asset.",
                    failure.describe()
                ),
            );
            v.evidence.push(Evidence::failure(SOURCE_STELLAR_TOML, requested_url, failure, *retrieved_at));
            v
        }
        TomlOutcome::Refused { requested_url, retrieved_at, reason } => {
            let mut v = DomainVerdict::new(
                Accountability::Unverified,
                format!(
                    "The issuer advertises home_domain {domain:?}, but fetching {requested_url} was refused by \
                     policy ({reason}); a document served from a refused host is never this domain's claim."
                ),
            );
            v.evidence.push(Evidence::refusal(SOURCE_STELLAR_TOML, requested_url, reason, *retrieved_at));
            v
        }
        TomlOutcome::Document(doc) => from_document(doc, domain, asset),
    }
}

/// A directory entry naming another domain than the home domain: both claims reported, the toml not consulted.
fn contradicted_by_directory(s: &Subject, domain: &str) -> Option<DomainVerdict> {
    // A directory entry naming a different domain: a holder cannot tell a brand migration from an impersonation
    // while the two sources contradict each other, so both claims are reported and the toml is not consulted.
    let DirectoryOutcome::Listed(entry) = &s.directory else {
        return None;
    };
    let listed = entry.value.domain.as_ref()?;
    if normalize_domain(listed) == normalize_domain(domain) {
        return None;
    }
    let mut v = DomainVerdict::new(
        Accountability::Unverified,
        format!(
            "The issuer advertises home_domain {domain:?}, but StellarExpert's directory lists this \
             issuer under domain {listed:?}. The two claims contradict each other and a holder cannot \
             tell a brand migration from an impersonation, so the claim is unverified and the \
             stellar.toml was not consulted."
        ),
    );
    let (account_url, account_at) = match &s.account_flags {
        FlagsOutcome::Read(o) => (o.url.clone(), o.retrieved_at),
        FlagsOutcome::Failed(a) => (a.url.clone(), a.retrieved_at),
        FlagsOutcome::NotRead => (String::new(), s.scanned_at),
    };
    v.evidence.push(Evidence::answer(
        SOURCE_HORIZON,
        &account_url,
        claims::home_domain(domain),
        account_at,
    ));
    v.evidence.push(Evidence::answer(
        SOURCE_DIRECTORY,
        &entry.url,
        claims::listed_under_domain(listed),
        entry.retrieved_at,
    ));
    Some(v)
}

/// The home domain's stellar.toml was read: does it, or a document it links, declare the asset?
fn from_document(doc: &TomlDocument, domain: &str, asset: &Asset) -> DomainVerdict {
    let n = doc.currencies.len();
    let line = |claim: String| Evidence {
        requested_url: Some(doc.requested_url.clone()),
        ..Evidence::answer(SOURCE_STELLAR_TOML, &doc.url, claim, doc.retrieved_at)
    };
    let via = if doc.url == doc.requested_url {
        String::new()
    } else {
        format!(
            " (requested {}, read from {} after a same-site redirect)",
            doc.requested_url, doc.url
        )
    };
    if doc.currencies.iter().any(|c| c.declares(asset)) {
        let mut v = DomainVerdict::new(
            Accountability::Verified,
            format!(
                "home_domain {domain:?} serves a stellar.toml{via} whose CURRENCIES declares {asset}: code \
                 and issuer both match, so a named party has publicly claimed this asset. That establishes \
                 who stands behind it, not that they are honest."
            ),
        );
        v.evidence.push(line(claims::toml_claims(asset)));
        return v;
    }
    let links = crate::parse::unresolved_links(&doc.currencies, asset);
    if links.is_empty() {
        let mut v = DomainVerdict::new(
            Accountability::Unverified,
            format!(
                "home_domain {domain:?} serves a stellar.toml{via} listing {n} currencies, none declaring \
                 {asset} (code and issuer must both match), so the domain does not claim this asset."
            ),
        );
        v.evidence.push(line(claims::toml_no_match(n, asset)));
        return v;
    }
    from_linked(doc, &links, domain, asset, &via)
}

/// No inline entry declares the asset, but some delegate to linked documents (`toml=`): what they said.
fn from_linked(
    doc: &TomlDocument,
    links: &[String],
    domain: &str,
    asset: &Asset,
    via: &str,
) -> DomainVerdict {
    let n = doc.currencies.len();
    let line = |claim: String| Evidence {
        requested_url: Some(doc.requested_url.clone()),
        ..Evidence::answer(SOURCE_STELLAR_TOML, &doc.url, claim, doc.retrieved_at)
    };
    let outcome = |url: &str| doc.linked.iter().find(|l| l.url == url).map(|l| &l.outcome);
    for url in links {
        if let Some(LinkedOutcome::Read {
            retrieved_at,
            currencies,
        }) = outcome(url)
        {
            if currencies.iter().any(|c| c.declares(asset)) {
                let mut v = DomainVerdict::new(
                    Accountability::Verified,
                    format!(
                        "home_domain {domain:?} serves a stellar.toml{via} that delegates a currency to \
                         {url}, and that linked document declares {asset} (code and issuer match)."
                    ),
                );
                v.evidence.push(Evidence {
                    requested_url: Some(url.clone()),
                    ..Evidence::answer(
                        SOURCE_STELLAR_TOML,
                        url,
                        claims::linked_claims(asset),
                        *retrieved_at,
                    )
                });
                return v;
            }
        }
    }
    let k = links.len();
    let unread = links
        .iter()
        .filter(|u| matches!(outcome(u), None | Some(LinkedOutcome::NotFollowed)))
        .count();
    let attempted = k - unread;
    let failed = links
        .iter()
        .filter(|u| {
            matches!(
                outcome(u),
                Some(LinkedOutcome::Failed { .. } | LinkedOutcome::Refused { .. })
            )
        })
        .count();
    let (claim, why) = if doc.linked.is_empty() {
        (
            claims::toml_links_not_followed(n, asset, k),
            format!("{k} entries delegate to linked documents that were not followed"),
        )
    } else if unread > 0 {
        (
            claims::toml_links_beyond_bound(n, asset, unread, MAX_LINKED_DOCUMENTS),
            format!("{unread} linked documents were left unread past the bound of {MAX_LINKED_DOCUMENTS}"),
        )
    } else if failed > 0 {
        (
            claims::toml_links_unreadable(n, asset, failed, attempted),
            format!("{failed} of {attempted} linked documents could not be read"),
        )
    } else {
        let mut v = DomainVerdict::new(
            Accountability::Unverified,
            format!(
                "home_domain {domain:?} serves a stellar.toml{via} listing {n} currencies and {attempted} \
                 linked documents, none declaring {asset}, so the domain does not claim this asset."
            ),
        );
        v.evidence
            .push(line(claims::toml_links_no_match(n, attempted, asset)));
        return v;
    };
    let mut v = DomainVerdict::new(
        Accountability::Unverified,
        format!(
            "home_domain {domain:?} serves a stellar.toml{via} that does not declare {asset} inline, and \
             {why}. The claim is unconfirmed, not refuted: a linked document might declare it."
        ),
    );
    v.evidence.push(line(claim));
    v
}

impl Check for Sep1Domain {
    fn id(&self) -> &'static str {
        "sep1-domain"
    }

    fn title(&self) -> &'static str {
        "Issuer domain verification"
    }

    fn run(&self, s: &Subject) -> Finding {
        let mut f = Finding::new(self);
        let v = verify_domain(s);
        if v.accountability != Accountability::Verified {
            f.mechanics.set(Mechanics::DOMAIN_UNVERIFIED);
        }
        if v.undetermined {
            f.undetermined = true;
            f.undetermined_by_source
                .insert(crate::evidence::SOURCE_HORIZON.to_string(), 1);
            f.undetermined_rate = Some("1/1".to_string());
        }
        f.accountability = Some(v.accountability);
        f.reasoning = format!("{} Accountability never changes severity.", v.reasoning);
        f.evidence = v.evidence;
        f
    }
}
