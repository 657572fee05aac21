//! The human rendering of a report: severity and accountability side by side, the capability in plain
//! language, what could not be checked, and every claim with its source.
use std::fmt::Write;

use assay_core::report::Report;

fn upper(name: &str) -> String {
    name.to_ascii_uppercase()
}

/// The powers discovery observed: per power its function, who can use it and what was seen.
pub(crate) fn render_powers(out: &mut String, survey: &assay_core::powers::PowerSurvey) {
    let _ = writeln!(
        out,
        "  powers (observed in a sandbox at ledger {}: {} functions probed, {} invocations):",
        survey.ledger,
        survey.probed.len(),
        survey.invocations
    );
    if survey.powers.is_empty() && survey.unclassified.is_empty() {
        let _ = writeln!(out, "    none observed");
    }
    for p in &survey.powers {
        let label = p
            .label
            .as_ref()
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default();
        let from = p
            .usable_from
            .map(|t| format!(", usable from {t} (refused at the ledger's time)"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    {} {}{label}: usable by {}{from}",
            p.function,
            p.effect.kind(),
            p.authorization()
        );
        let _ = writeln!(out, "      observed: {}", p.effect.detail());
    }
    for u in &survey.unclassified {
        let by: Vec<String> = u.authorized_by.iter().map(|a| a.describe()).collect();
        let _ = writeln!(
            out,
            "    {} writes state whose effect on holders was not classified: usable by {}",
            u.function,
            by.join(" and ")
        );
    }
    if let Some(r) = &survey.reach {
        let offsets: Vec<String> = r
            .later_offsets
            .iter()
            .map(|s| match s {
                s if s % 86_400 == 0 => format!("+{} d", s / 86_400),
                s => format!("+{} h", s / 3_600),
            })
            .collect();
        let cut = |c: bool| if c { "; a bound cut them" } else { "" };
        let _ = writeln!(
            out,
            "    later clock: {} refused argument sets re-probed{}{}",
            r.later_sets,
            if offsets.is_empty() {
                String::new()
            } else {
                format!(" at {}", offsets.join(", "))
            },
            cut(r.later_cut)
        );
        let _ = writeln!(
            out,
            "    module values: {} of the module's constants and stored addresses tried in {} invocations{}",
            r.module_values,
            r.module_calls,
            cut(r.module_cut)
        );
    }
    for cut in &survey.cut {
        let _ = writeln!(out, "    bound: {cut}");
    }
    if let Some(why) = &survey.unobservable {
        let _ = writeln!(out, "    not observable: {why}");
    }
}

/// Renders one report as text, ending with a blank line.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", report.asset);
    let base = if report.escalated {
        format!(" (escalated from {})", report.base_severity.name())
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  severity: {}{base}    |    accountability: {}",
        upper(report.severity.name()),
        upper(report.accountability.name()),
    );
    let state = match (report.undetermined, report.stale) {
        (true, _) => "unknown: the scan could not be completed, so the severity above is a floor, not a verdict",
        (false, true) => "stale",
        (false, false) => "valid: every source the verdict depends on answered",
    };
    let _ = writeln!(out, "  state: {state}");
    if let Some(network) = &report.network {
        let _ = writeln!(out, "  network: {network}");
    }
    let mechanics = report.mechanics.names();
    if !mechanics.is_empty() {
        let _ = writeln!(out, "  mechanics: {}", mechanics.join(", "));
    }
    if let Some(who) = &report.who_can_act {
        let _ = writeln!(out, "  who can use the issuer's powers: {who}");
    }
    if let Some(survey) = &report.powers {
        render_powers(&mut out, survey);
    }
    for finding in &report.findings {
        let marker = if finding.undetermined {
            " [could not conclude]"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {} ({}){marker}:",
            finding.title,
            finding.severity.name()
        );
        let _ = writeln!(out, "    {}", finding.reasoning);
    }
    let gaps: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.undetermined)
        .map(|f| {
            let sources: Vec<String> = f.undetermined_by_source.keys().cloned().collect();
            if sources.is_empty() {
                f.check.clone()
            } else {
                format!("{} (no answer from {})", f.check, sources.join(", "))
            }
        })
        .collect();
    let unread: Vec<String> = report
        .evidence
        .iter()
        .filter(|e| e.attempted)
        .map(|e| format!("{}: {}", e.source, e.claim))
        .collect();
    let _ = writeln!(out, "  could not be checked:");
    if gaps.is_empty() && unread.is_empty() {
        let _ = writeln!(out, "    nothing: every source answered");
    }
    for gap in gaps {
        let _ = writeln!(out, "    check {gap}");
    }
    for line in unread {
        let _ = writeln!(out, "    {line}");
    }
    let _ = writeln!(out, "  evidence (who said what, where, when):");
    for e in &report.evidence {
        let _ = writeln!(out, "    [{}] {}", e.source, e.claim);
        let _ = writeln!(out, "      {} at {}", e.url, e.retrieved_at);
        if let Some(requested) = e.requested_url.as_deref().filter(|r| *r != e.url) {
            let _ = writeln!(out, "      requested {requested}");
        }
    }
    let _ = writeln!(out, "  scanned at {}", report.scanned_at);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::render_powers;
    use assay_core::powers::{Authority, ObservedPower, PowerEffect, PowerSurvey, Reach};

    #[test]
    fn a_power_usable_later_shows_from_when_and_the_reach_is_counted() {
        let survey = PowerSurvey {
            wasm_hash: "ab".into(),
            ledger: 7,
            probed: vec!["settle".into()],
            invocations: 40,
            holders: vec!["GHOLDER".into()],
            powers: vec![ObservedPower {
                function: "settle".into(),
                authorized_by: vec![Authority {
                    address: "GADMIN".into(),
                    control: "1 key".into(),
                    locked: false,
                }],
                effect: PowerEffect::TakesBalance {
                    holder: "GHOLDER".into(),
                    amount: "2".into(),
                    moved_to: None,
                },
                label: None,
                events: vec![],
                steps: vec![],
                usable_from: assay_core::time::Timestamp::from_unix(1_800_000_000),
            }],
            unclassified: vec![],
            cut: vec![],
            unobservable: None,
            reach: Some(Reach {
                later_sets: 3,
                later_offsets: vec![3_600, 86_400, 604_800],
                later_cut: false,
                module_values: 17,
                module_calls: 24,
                module_cut: true,
            }),
        };
        let mut out = String::new();
        render_powers(&mut out, &survey);
        assert!(
            out.contains("usable by GADMIN (1 key, 0 s), usable from 2027-01-15T08:00:00Z (refused at the ledger's time)"),
            "{out}"
        );
        assert!(
            out.contains("later clock: 3 refused argument sets re-probed at +1 h, +1 d, +7 d\n"),
            "{out}"
        );
        assert!(
            out.contains("module values: 17 of the module's constants and stored addresses tried in 24 invocations; a bound cut them"),
            "{out}"
        );
    }

    #[test]
    fn a_transfer_fee_shows_its_share_who_was_credited_and_who_authorizes_it() {
        let survey = PowerSurvey {
            wasm_hash: "ab".into(),
            ledger: 7,
            probed: vec!["set_levy".into()],
            invocations: 227,
            holders: vec!["GHOLDER".into()],
            powers: vec![ObservedPower {
                function: "set_levy".into(),
                authorized_by: vec![Authority {
                    address: "GADMIN".into(),
                    control: "1 key".into(),
                    locked: false,
                }],
                effect: PowerEffect::TransferFee {
                    holder: "GHOLDER".into(),
                    sent: "999998".into(),
                    delivered: "699999".into(),
                    share_bps: 3_000,
                    credited: Some("GADMIN".into()),
                },
                label: None,
                events: vec![],
                steps: vec![],
                usable_from: None,
            }],
            unclassified: vec![],
            cut: vec![],
            unobservable: None,
            reach: None,
        };
        let mut out = String::new();
        render_powers(&mut out, &survey);
        assert!(
            out.contains(
                "set_levy changes what a holder's transfer delivers: usable by GADMIN (1 key, 0 s)\n"
            ),
            "{out}"
        );
        assert!(
            out.contains(
                "observed: after the call GHOLDER's transfer of 999998 delivered 699999 to its recipient \
                 (30 % not delivered); GADMIN was credited the rest"
            ),
            "{out}"
        );
    }
}
