//! The HTML pages of `assay serve`: server-rendered, no JavaScript, every value escaped.
//!
//! The asset page keeps the report's two axes apart (severity is what the ledger lets the issuer do;
//! accountability is who claims the asset), attributes every claim to its source and time, and gives
//! what could not be checked its own section, so a gap never reads as a clean result. Colour only
//! repeats what the text says: without the style sheet the badge still reads "Severity: critical", the
//! powers are a plain table and the timeline's points and segments carry text labels and titles.
use assay_core::powers::{Authority, PowerSurvey};
use assay_core::report::Report;
use assay_core::{Mechanics, Observation, Rating, Severity, State, Timestamp, TransitionState};

use super::history::{describe, Listing, Step};

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;color:#111}\
h1{margin-bottom:.2rem;font-size:1.6rem}\
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem .4rem;text-align:left;vertical-align:top}td{overflow-wrap:anywhere}\
th{background:#f6f8fa}\
.undetermined{background:#fff3cd;border:1px solid #e0b400;padding:.6rem}\
.mono,code{font-family:ui-monospace,monospace;overflow-wrap:anywhere}\
.check,.level,.nowrap{white-space:nowrap}.check{font-family:ui-monospace,monospace}\
.url{font-family:ui-monospace,monospace;font-size:.85em;overflow-wrap:anywhere;min-width:12rem}\
.hint{color:#57606a;font-size:.85em;font-weight:normal}\
.badges{display:flex;flex-wrap:wrap;gap:.8rem;margin:1rem 0}.badges .sep{display:none}\
.badge{display:inline-block;border-radius:.5rem;padding:.5rem .9rem;border:3px solid transparent;min-width:9rem}\
.badge .k{display:block;font-size:.75rem;text-transform:uppercase;letter-spacing:.06em}\
.badge .v{display:block;font-size:1.6rem;line-height:1.2;text-transform:uppercase;letter-spacing:.04em}\
.badge .note{display:block;font-size:.85rem;max-width:22rem}\
.sev-clear{background:#1a7f37;color:#fff}.sev-low{background:#0969da;color:#fff}.sev-medium{background:#f5c542;color:#3b2300}\
.sev-high{background:#d1570b;color:#fff}.sev-critical{background:#b3141f;color:#fff}.sev-unknown{background:#6e7781;color:#fff}\
.severity.floor{background-image:repeating-linear-gradient(135deg,transparent 0 10px,rgba(255,255,255,.3) 10px 20px);border:3px dashed #111}\
.accountability{background:#fff;border-color:currentColor}\
.acc-verified{color:#1a7f37}.acc-unverified{color:#9a6700}.acc-unknown{color:#57606a}\
.pill{display:inline-block;border-radius:.3rem;padding:0 .4rem;font-weight:600}\
.scroll{overflow-x:auto}.who{min-width:17rem}.who .mono,.hint .mono{font-size:.85em}";

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

/// A URL escaped, with a line-break opportunity after each separator (`/`, `?`, `&`, `=`, `.`), so a
/// long one wraps between its parts rather than mid-word.
fn url(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut rest = text;
    while let Some(at) = rest.find(['/', '?', '&', '=', '.']) {
        let (part, tail) = rest.split_at(at + 1);
        out.push_str(&esc(part));
        // No break inside the scheme's `//`.
        if !tail.starts_with('/') {
            out.push_str("<wbr>");
        }
        rest = tail;
    }
    out.push_str(&esc(rest));
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

/// The fill of a severity: the badge's background and the timeline point's colour.
fn colour(rating: Rating) -> &'static str {
    match rating {
        Rating::Level(Severity::Clear) => "#1a7f37",
        Rating::Level(Severity::Low) => "#0969da",
        Rating::Level(Severity::Medium) => "#d4a017",
        Rating::Level(Severity::High) => "#d1570b",
        Rating::Level(Severity::Critical) => "#b3141f",
        Rating::Unevaluated => "#6e7781",
    }
}

/// What identifies a power across observations: (function, what it does, the addresses whose
/// authorization it asked for). The same power held by another party is another power.
pub(crate) type PowerKey = (String, String, Vec<String>);

/// The key of each of a survey's powers, then of each unclassified write, in its order.
pub(crate) fn power_keys(survey: &PowerSurvey) -> Vec<PowerKey> {
    let addresses = |a: &[Authority]| a.iter().map(|a| a.address.clone()).collect::<Vec<_>>();
    survey
        .powers
        .iter()
        .map(|p| {
            (
                p.function.clone(),
                p.effect.kind().to_string(),
                addresses(&p.authorized_by),
            )
        })
        .chain(survey.unclassified.iter().map(|u| {
            (
                u.function.clone(),
                UNCLASSIFIED.to_string(),
                addresses(&u.authorized_by),
            )
        }))
        .collect()
}

/// What an unclassified write does, in the powers table.
const UNCLASSIFIED: &str = "writes state whose effect on holders was not classified";

/// The page of one asset: its latest report and the transitions between its observations.
/// `first_seen` holds, per row of [`power_keys`] of the report's powers, when the history first
/// recorded it.
pub(crate) fn asset(
    report: &Report,
    listing: &Listing,
    corrupt: &[i64],
    older: Option<&str>,
    first_seen: &[Option<Timestamp>],
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
    badges(&mut body, report);
    timeline(&mut body, listing);
    if let Some(survey) = &report.powers {
        powers(&mut body, survey, first_seen);
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

/// The verdict at a glance: the severity badge (its colour, and its words: a floor when undetermined,
/// the escalation, staleness) with the accountability badge beside it.
fn badges(body: &mut String, report: &Report) {
    let mut notes = Vec::new();
    if report.undetermined {
        notes.push("undetermined: a floor, not a verdict".to_string());
    }
    if report.escalated {
        notes.push(format!(
            "escalated from {} by a curated listing",
            report.base_severity.name()
        ));
    }
    if report.state == State::Stale {
        notes.push("stale: older than the freshness window".to_string());
    }
    let note = if notes.is_empty() {
        String::new()
    } else {
        format!("<span class=\"note\"> ({})</span>", esc(&notes.join("; ")))
    };
    body.push_str(&format!(
        "<section id=\"verdict\"><p class=\"badges\">\
<span class=\"badge severity sev-{sev}{floor}\" title=\"What the ledger lets the issuer do to a holder's balance\">\
<span class=\"k\">Severity:</span> {at_least}<strong class=\"v\">{sev}</strong>{note}</span>\
<span class=\"sep\"> · </span><span class=\"badge accountability acc-{acc}\" title=\"Who has publicly claimed the asset; it never changes severity\">\
<span class=\"k\">Accountability:</span> <strong class=\"v\">{acc}</strong>\
<span class=\"note\"> ({acc_note})</span></span></p></section>\n",
        sev = esc(report.severity.name()),
        floor = if report.undetermined { " floor" } else { "" },
        at_least = if report.undetermined { "at least " } else { "" },
        acc = esc(report.accountability.name()),
        acc_note = match report.accountability {
            assay_core::Accountability::Verified => "the home domain claims it",
            assay_core::Accountability::Unverified => "a claim that could not be confirmed",
            assay_core::Accountability::Unknown => "nobody has claimed it",
        },
    ));
}

/// The steps into each observation of the page: `None` for the first one ever recorded. A page after the
/// first also carries the step from the observation just older than it.
fn steps_into(listing: &Listing) -> Vec<Option<&Step>> {
    let offset = listing.transitions.len() + 1 - listing.observations.len().max(1);
    (0..listing.observations.len())
        .map(|i| {
            (i + offset)
                .checked_sub(1)
                .and_then(|t| listing.transitions.get(t))
        })
        .collect()
}

/// A transition in a few words for the timeline: the mechanics bits added and removed between the two
/// observations (a token's power bits and the report bits too, not only the capability bits the
/// transition compares), or the severity move; the full sentence is its title.
fn short(step: &Step, before: &Observation, after: &Observation) -> String {
    if step.transition.state != TransitionState::Valid {
        return "unknown".into();
    }
    let (b, a) = (before.mechanics.bits(), after.mechanics.bits());
    let names = |bits: u32| {
        Mechanics::from_bits(bits)
            .unwrap_or_default()
            .names()
            .into_iter()
    };
    let mut parts: Vec<String> = names(a & !b).map(|n| format!("+{n}")).collect();
    parts.extend(names(b & !a).map(|n| format!("−{n}")));
    if parts.is_empty() {
        parts.push(if before.severity == after.severity {
            "no change".into()
        } else {
            format!("{} → {}", before.severity.name(), after.severity.name())
        });
    }
    let text = parts.join(" ");
    if text.chars().count() > 30 {
        format!("{}…", text.chars().take(29).collect::<String>())
    } else {
        text
    }
}

/// The page's observations as a timeline: an inline SVG (no script) with a point per observation, its
/// severity and time written beside it, and a segment per transition, labelled with what changed.
fn timeline(body: &mut String, listing: &Listing) {
    let n = listing.observations.len();
    if n == 0 {
        return;
    }
    const GAP: usize = 190;
    const MARGIN: usize = 75;
    let width = 2 * MARGIN + (n - 1) * GAP;
    let x = |i: usize| MARGIN + i * GAP;
    let steps = steps_into(listing);
    let path: Vec<&str> = listing
        .observations
        .iter()
        .map(|e| e.observation.severity.name())
        .collect();
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-labelledby=\"timeline-title\" \
width=\"{width}\" height=\"108\" viewBox=\"0 0 {width} 108\" font-family=\"system-ui,sans-serif\" font-size=\"12\">\
<title id=\"timeline-title\">{} observation(s), oldest first; severity {}</title>",
        n,
        esc(&path.join(" → ")),
    );
    for (i, step) in steps.iter().enumerate().skip(1) {
        let Some(step) = step else { continue };
        let (before, after) = (
            &listing.observations[i - 1].observation,
            &listing.observations[i].observation,
        );
        let (stroke, dash) = if step.transition.state != TransitionState::Valid {
            ("#6e7781", " stroke-dasharray=\"5 4\"")
        } else if after.severity > before.severity {
            ("#b3141f", "")
        } else if after.severity < before.severity {
            ("#1a7f37", "")
        } else {
            ("#6e7781", "")
        };
        let mid = (x(i - 1) + x(i)) / 2;
        svg.push_str(&format!(
            "<g class=\"transition\"><title>{} → {}: {}</title>\
<line x1=\"{}\" y1=\"56\" x2=\"{}\" y2=\"56\" stroke=\"{stroke}\" stroke-width=\"4\"{dash}/>\
<text x=\"{mid}\" y=\"16\" text-anchor=\"middle\" fill=\"#57606a\" font-style=\"italic\">{}</text></g>",
            esc(&step.from),
            esc(&step.to),
            esc(&describe(&step.transition)),
            x(i - 1) + 12,
            x(i) - 12,
            esc(&short(step, before, after)),
        ));
    }
    for (i, entry) in listing.observations.iter().enumerate() {
        let o = &entry.observation;
        let at = o.at.to_string();
        let (date, time) = at.split_once('T').unwrap_or((&at, ""));
        let fill = colour(o.severity);
        let (circle_fill, dash, level) = if o.undetermined {
            (
                "#fff",
                " stroke-dasharray=\"4 3\"",
                format!("at least {}", o.severity.name()),
            )
        } else {
            (fill, "", o.severity.name().to_string())
        };
        svg.push_str(&format!(
            "<g class=\"observation\"><title>{at}: severity {}{}, accountability {}</title>\
<circle cx=\"{cx}\" cy=\"56\" r=\"10\" fill=\"{circle_fill}\" stroke=\"{fill}\" stroke-width=\"3\"{dash}/>\
<text x=\"{cx}\" y=\"38\" text-anchor=\"middle\" font-weight=\"bold\" fill=\"#111\">{}</text>\
<text x=\"{cx}\" y=\"84\" text-anchor=\"middle\" fill=\"#111\">{}</text>\
<text x=\"{cx}\" y=\"99\" text-anchor=\"middle\" fill=\"#57606a\">{}</text></g>",
            esc(o.severity.name()),
            if o.undetermined { " (undetermined: a floor)" } else { "" },
            esc(&entry.accountability),
            esc(&level),
            esc(date),
            esc(time),
            cx = x(i),
        ));
    }
    svg.push_str("</svg>");
    body.push_str(&format!(
        "<section id=\"timeline\"><h2>Timeline</h2><div class=\"scroll\">{svg}</div>\
<p class=\"hint\">One point per recorded observation on this page, oldest first; each segment is the \
transition between two, labelled with the mechanics bits it added (+) or removed (−): red when severity \
rose, green when it fell, dashed when it cannot be stated. Details under <a href=\"#transitions\">History</a>.</p></section>\n"
    ));
}

/// Who can use a power: each party on its own line, or anyone.
fn holders(authorized_by: &[Authority]) -> String {
    if authorized_by.is_empty() {
        return "anyone (no authorization asked)".into();
    }
    authorized_by
        .iter()
        .map(|a| {
            format!(
                "<span class=\"mono\">{}</span> ({}{})",
                esc(&a.address),
                esc(&a.control),
                if a.locked { "; locked for good" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

/// A token's powers as power discovery observed them: one row per power (the function, what it does,
/// who holds it, and since when the history has seen it), then the writes it could not classify.
fn powers(body: &mut String, survey: &PowerSurvey, first_seen: &[Option<Timestamp>]) {
    body.push_str(&format!(
        "<section id=\"powers\"><h2>Powers</h2><p>What the token's code was seen to do to holders on a fork \
at ledger {} (code <span class=\"mono\">{}</span>): {} exported function(s) probed in {} invocation(s), each \
power exercised with exactly the authorization it asked for.</p>",
        survey.ledger,
        esc(&survey.wasm_hash),
        survey.probed.len(),
        survey.invocations,
    ));
    if let Some(why) = survey.incomplete() {
        body.push_str(&format!(
            "<p class=\"undetermined\"><strong>Incomplete:</strong> {}. The powers below are a floor.</p>",
            esc(&why)
        ));
    }
    if survey.powers.is_empty() && survey.unclassified.is_empty() {
        body.push_str("<p>No power over holders was observed.</p>");
    } else {
        body.push_str(
            "<table><thead><tr><th scope=\"col\">power</th><th scope=\"col\">what it does</th>\
<th scope=\"col\" class=\"who\">who holds it</th><th scope=\"col\">first observed <span class=\"hint\">(not recorded in the \
report: the earliest observation in this history that shows it)</span></th>\
</tr></thead><tbody>",
        );
        let since = |i: usize| {
            first_seen
                .get(i)
                .copied()
                .flatten()
                .map(|t| {
                    let at = t.to_string();
                    match at.split_once('T') {
                        Some((date, time)) => format!("{}<br>{}", esc(date), esc(time)),
                        None => esc(&at),
                    }
                })
                .unwrap_or_else(|| "not in the readable history".into())
        };
        let function = |f: &str| {
            if f.is_empty() {
                "(the code itself)".to_string()
            } else {
                format!("<code>{}</code>", esc(f))
            }
        };
        for (i, p) in survey.powers.iter().enumerate() {
            let mut name = function(&p.function);
            if let Some(label) = p.label.as_ref().filter(|l| **l != p.function) {
                name.push_str(&format!(" <span class=\"hint\">({})</span>", esc(label)));
            }
            if p.dormant() {
                name.push_str(" <span class=\"hint\">dormant: every holder is locked</span>");
            }
            body.push_str(&format!(
                "<tr class=\"power\"><td class=\"check\">{name}</td><td><strong>{}</strong><br>\
<span class=\"hint\">{}</span></td><td class=\"who\">{}</td><td class=\"nowrap\">{}</td></tr>",
                esc(p.effect.kind()),
                esc(&p.effect.detail()),
                holders(&p.authorized_by),
                since(i),
            ));
        }
        for (i, u) in survey.unclassified.iter().enumerate() {
            body.push_str(&format!(
                "<tr class=\"unclassified\"><td class=\"check\">{}</td><td><strong>{UNCLASSIFIED}</strong></td>\
<td>{}</td><td class=\"nowrap\">{}</td></tr>",
                function(&u.function),
                holders(&u.authorized_by),
                since(survey.powers.len() + i),
            ));
        }
        body.push_str("</tbody></table>");
    }
    if !survey.cut.is_empty() {
        body.push_str("<p>Where a bound cut the search:</p><ul>");
        for cut in &survey.cut {
            body.push_str(&format!("<li>{}</li>", esc(cut)));
        }
        body.push_str("</ul>");
    }
    body.push_str("</section>\n");
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
                    "<li><strong class=\"check\">{}</strong>: {}</li>",
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
                    "<li><strong>{}</strong> <span class=\"url\">{}</span>: {}</li>",
                    esc(&e.source),
                    url(&e.url),
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
        "<section id=\"findings\"><h2>Findings</h2><table><thead><tr><th scope=\"col\">check</th>\
<th scope=\"col\">level</th><th scope=\"col\">reasoning</th></tr></thead><tbody>",
    );
    for f in &report.findings {
        body.push_str(&format!(
            "<tr><td class=\"check\">{}</td><td class=\"level\"><span class=\"pill sev-{}\">{}</span>{}</td><td>{}</td></tr>",
            esc(&f.check),
            esc(f.severity.name()),
            esc(f.severity.name()),
            if f.undetermined {
                " (undetermined)"
            } else {
                ""
            },
            esc(&f.reasoning)
        ));
    }
    body.push_str("</tbody></table></section>\n");
}

/// Every claim with its source, where it was read and when.
fn evidence(body: &mut String, report: &Report) {
    body.push_str(
        "<section id=\"evidence\"><h2>Evidence</h2><p>Every claim, attributed to the source that made it and \
the time it answered.</p><table><thead><tr><th scope=\"col\">source</th><th scope=\"col\">claim</th>\
<th scope=\"col\">where</th><th scope=\"col\">answered at</th></tr></thead><tbody>",
    );
    for e in &report.evidence {
        body.push_str(&format!(
            "<tr><td class=\"nowrap\">{}</td><td>{}{}</td><td class=\"url\">{}</td><td class=\"nowrap\">{}</td></tr>",
            esc(&e.source),
            if e.attempted { "no answer: " } else { "" },
            esc(&e.claim),
            url(&e.url),
            esc(&e.retrieved_at.to_string())
        ));
    }
    body.push_str("</tbody></table></section>\n");
}

/// The asset's observations, each with what changed since the one before.
fn history(body: &mut String, listing: &Listing, corrupt: &[i64], older: Option<&str>) {
    body.push_str("<section id=\"transitions\"><h2>History</h2><table><thead><tr><th scope=\"col\">observed</th>\
<th scope=\"col\">severity</th><th scope=\"col\">state</th><th scope=\"col\">change since the previous</th></tr></thead><tbody>");
    for (entry, step) in listing.observations.iter().zip(steps_into(listing)) {
        let change = step
            .map(|step| describe(&step.transition))
            .unwrap_or_else(|| "first observation".to_string());
        body.push_str(&format!(
            "<tr><td class=\"nowrap\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&entry.observation.at.to_string()),
            esc(entry.observation.severity.name()),
            esc(&entry.state),
            esc(&change)
        ));
    }
    body.push_str("</tbody></table>");
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
        "<h1>Assay: recorded reports</h1><table><thead><tr><th scope=\"col\">asset</th><th scope=\"col\">severity</th>\
<th scope=\"col\">accountability</th><th scope=\"col\">state</th></tr></thead><tbody>",
    );
    for (asset, r) in assets {
        body.push_str(&format!(
            "<tr><td class=\"mono\"><a href=\"/assets/{}\">{}</a></td><td class=\"level\"><span class=\"pill sev-{sev}\">{sev}</span></td><td>{}</td><td>{}</td></tr>",
            esc(asset),
            esc(asset),
            esc(r.accountability.name()),
            if r.undetermined { "undetermined" } else { "complete" },
            sev = esc(r.severity.name()),
        ));
    }
    body.push_str("</tbody></table>");
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
    use super::{esc, url};

    #[test]
    fn markup_in_claims_is_escaped() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }

    #[test]
    fn urls_break_between_their_parts_and_stay_escaped() {
        assert_eq!(
            url("https://a.example/x?b=<c>&d"),
            "https://<wbr>a.<wbr>example/<wbr>x?<wbr>b=<wbr>&lt;c&gt;&amp;<wbr>d"
        );
        assert_eq!(url("plain"), "plain");
    }
}
