//! The HTML pages of `assay serve`: server-rendered, no JavaScript, every value escaped.
//!
//! The asset page keeps the report's two axes apart (severity is what the ledger lets the issuer do;
//! accountability is who claims the asset), attributes every claim to its source and time, and gives
//! what could not be checked its own section, so a gap never reads as a clean result.
use assay_core::report::Report;

use super::history::{describe, Listing};

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#111}\
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem .4rem;text-align:left;vertical-align:top}\
.undetermined{background:#fff3cd;border:1px solid #e0b400;padding:.6rem}.mono{font-family:ui-monospace,monospace;word-break:break-all}";

/// Escapes text for HTML element content and double-quoted attributes.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n",
        esc(title)
    )
}

/// The page of one asset: its latest report and the transitions between its observations.
pub(crate) fn asset(
    report: &Report,
    listing: &Listing,
    corrupt: &[i64],
    older: Option<&str>,
) -> String {
    let mut body = format!(
        "<header><h1 class=\"mono\">{}</h1><p>Latest report, scanned {}. <a href=\"/v1/assets/{}\">JSON</a> · <a href=\"/\">all assets</a></p></header>\n",
        esc(&listing.asset),
        esc(&report.scanned_at.to_string()),
        esc(&listing.asset),
    );
    if report.undetermined {
        body.push_str(
            "<p class=\"undetermined\" id=\"undetermined-banner\"><strong>Undetermined.</strong> Some checks could not \
conclude, so the severity below is a floor, not a verdict, and this report is never attested. See \
<a href=\"#could-not-check\">what could not be checked</a>.</p>\n"
        );
    }

    body.push_str(&format!(
        "<section id=\"severity\"><h2>Severity: <span class=\"value\">{}</span></h2>\
<p>What the ledger lets the issuer do to a holder's balance (capability base: {}{}).</p></section>\n",
        esc(report.severity.name()),
        esc(report.base_severity.name()),
        if report.escalated {
            "; escalated by a curated listing"
        } else {
            ""
        },
    ));
    body.push_str(&format!(
        "<section id=\"accountability\"><h2>Accountability: <span class=\"value\">{}</span></h2>\
<p>Who has publicly claimed the asset. It never changes severity.</p></section>\n",
        esc(report.accountability.name())
    ));

    let mechanics = report.mechanics.names();
    body.push_str("<section id=\"mechanics\"><h2>Mechanics</h2>");
    if mechanics.is_empty() {
        body.push_str("<p>No mechanics bit is set.</p>");
    } else {
        body.push_str("<ul>");
        for name in mechanics {
            body.push_str(&format!("<li class=\"mono\">{}</li>", esc(name)));
        }
        body.push_str("</ul>");
    }
    body.push_str("</section>\n");

    could_not_check(&mut body, report);
    findings(&mut body, report);
    evidence(&mut body, report);
    history(&mut body, listing, corrupt, older);
    page(&format!("{} — Assay", listing.asset), &body)
}

/// The checks that could not conclude and the reads that produced no answer.
fn could_not_check(body: &mut String, report: &Report) {
    body.push_str("<section id=\"could-not-check\"><h2>What could not be checked</h2>");
    let failures: Vec<_> = report.evidence.iter().filter(|e| e.attempted).collect();
    if report.undetermined_checks.is_empty() && failures.is_empty() {
        body.push_str("<p>Every source the verdict depends on answered.</p>");
    } else {
        if !report.undetermined_checks.is_empty() {
            body.push_str("<p>Checks that could not conclude:</p><ul>");
            for check in &report.undetermined_checks {
                let reasoning = report
                    .findings
                    .iter()
                    .find(|f| &f.check == check)
                    .map(|f| f.reasoning.as_str())
                    .unwrap_or("");
                body.push_str(&format!(
                    "<li><strong class=\"mono\">{}</strong>: {}</li>",
                    esc(check),
                    esc(reasoning)
                ));
            }
            body.push_str("</ul>");
        }
        if !failures.is_empty() {
            body.push_str("<p>Reads that produced no answer:</p><ul>");
            for e in failures {
                body.push_str(&format!(
                    "<li><strong>{}</strong> <span class=\"mono\">{}</span>: {}</li>",
                    esc(&e.source),
                    esc(&e.url),
                    esc(&e.claim)
                ));
            }
            body.push_str("</ul>");
        }
    }
    body.push_str("</section>\n");
}

/// One row per check: its level and reasoning.
fn findings(body: &mut String, report: &Report) {
    body.push_str(
        "<section id=\"findings\"><h2>Findings</h2><table><tr><th>check</th><th>level</th><th>reasoning</th></tr>",
    );
    for f in &report.findings {
        body.push_str(&format!(
            "<tr><td class=\"mono\">{}</td><td>{}{}</td><td>{}</td></tr>",
            esc(&f.check),
            esc(f.severity.name()),
            if f.undetermined {
                " (undetermined)"
            } else {
                ""
            },
            esc(&f.reasoning)
        ));
    }
    body.push_str("</table></section>\n");
}

/// Every claim with its source, where it was read and when.
fn evidence(body: &mut String, report: &Report) {
    body.push_str(
        "<section id=\"evidence\"><h2>Evidence</h2><p>Every claim, attributed to the source that made it and \
the time it answered.</p><table><tr><th>source</th><th>claim</th><th>where</th><th>answered at</th></tr>",
    );
    for e in &report.evidence {
        body.push_str(&format!(
            "<tr><td>{}</td><td>{}{}</td><td class=\"mono\">{}</td><td>{}</td></tr>",
            esc(&e.source),
            if e.attempted { "no answer: " } else { "" },
            esc(&e.claim),
            esc(&e.url),
            esc(&e.retrieved_at.to_string())
        ));
    }
    body.push_str("</table></section>\n");
}

/// The asset's observations, each with what changed since the one before.
fn history(body: &mut String, listing: &Listing, corrupt: &[i64], older: Option<&str>) {
    body.push_str("<section id=\"transitions\"><h2>History</h2><table><tr><th>observed</th><th>severity</th><th>state</th><th>change since the previous</th></tr>");
    for (i, entry) in listing.observations.iter().enumerate() {
        let change = i
            .checked_sub(1)
            .and_then(|prev| listing.transitions.get(prev))
            .map(|step| describe(&step.transition))
            .unwrap_or_else(|| "first observation".to_string());
        body.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&entry.observation.at.to_string()),
            esc(entry.observation.severity.name()),
            esc(&entry.state),
            esc(&change)
        ));
    }
    body.push_str("</table>");
    if !corrupt.is_empty() {
        body.push_str(&format!(
            "<p class=\"undetermined\">{} stored observation(s) could not be read and are not shown (ids {}).</p>",
            corrupt.len(),
            esc(&corrupt
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", "))
        ));
    }
    if let Some(older) = older {
        body.push_str(&format!(
            "<p><a href=\"{}\">older observations</a></p>",
            esc(older)
        ));
    }
    body.push_str("</section>");
}

/// The index: every asset's latest severity, accountability and state, linking to its page.
pub(crate) fn index(assets: &[(&str, &Report)], next: Option<&str>) -> String {
    let mut body = String::from(
        "<h1>Assay: recorded reports</h1><table><tr><th>asset</th><th>severity</th><th>accountability</th><th>state</th></tr>",
    );
    for (asset, r) in assets {
        body.push_str(&format!(
            "<tr><td class=\"mono\"><a href=\"/assets/{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(asset),
            esc(asset),
            esc(r.severity.name()),
            esc(r.accountability.name()),
            if r.undetermined { "undetermined" } else { "complete" },
        ));
    }
    body.push_str("</table>");
    if let Some(next) = next {
        body.push_str(&format!("<p><a href=\"{}\">more assets</a></p>", esc(next)));
    }
    page("Assay", &body)
}

/// A page that says why there is nothing to show.
pub(crate) fn problem(status: u16, detail: &str) -> String {
    page(
        "Assay",
        &format!(
            "<h1>{status}</h1><p>{}</p><p><a href=\"/\">all assets</a></p>",
            esc(detail)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn markup_in_claims_is_escaped() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }
}
