//! From command arguments to fresh reports, for `attest`, `verify` and `watch` alike: each argument parsed
//! by the one parser ([`assay_core::Token`]), keyed by the contract address the registry holds it under,
//! scanned fresh and evaluated — a classic asset by its issuer's flags, a Stellar Asset Contract named by
//! `C…` the same way plus its `admin()`, a custom token by its code and its admin's domain — with the
//! SEP-41 suite when a runner is given.

use assay_core::checks::default_checks;
use assay_core::checks::sac_admin::SacAdmin;
use assay_core::{Asset, Check, Engine, Report, Token};

use crate::sac;
use crate::scanning::{scan_subjects_each, ScanSettings};
use crate::sep41::{evaluate_contract_subject, Sep41Outcome, Sep41Runner};
use crate::token::{read_token, TokenRead};
use crate::AttestError;

/// An asset to attest: what to scan and which contract address to key it by.
#[derive(Debug, Clone)]
pub struct Target {
    /// The classic asset, or the token contract itself.
    pub asset: Token,
    /// Its SAC id on the registry's network.
    pub contract: [u8; 32],
}

/// Parses `input` and keys it: a classic asset by its SAC on `registry_passphrase`, a `C…` by itself.
/// `native` is refused (it has no issuer to read). A `C…` must live on the registry's network, so a
/// different `asset_passphrase` is refused for it.
pub fn resolve(
    input: &str,
    registry_passphrase: &str,
    asset_passphrase: &str,
) -> Result<Target, AttestError> {
    let input_error = |e: &dyn std::fmt::Display| AttestError::Input(e.to_string());
    match Token::parse(input.trim()).map_err(|e| input_error(&e))? {
        Token::Classic(asset) => Ok(Target {
            contract: sac::asset_contract_id(&asset, registry_passphrase)
                .map_err(|e| input_error(&e))?,
            asset: Token::Classic(asset),
        }),
        Token::Native => Err(AttestError::Input(format!(
            "{input}: the native asset has no issuer whose powers could be read; name a classic asset \
             (CODE-ISSUER) or a token contract (C…)"
        ))),
        Token::Contract(c) => {
            if asset_passphrase != registry_passphrase {
                return Err(AttestError::Input(format!(
                    "{c} is a token contract: it is read on the registry's network, so drop --asset-network \
                     (or point --network at the token's network)"
                )));
            }
            let id = sac::parse_contract(&c)
                .ok_or_else(|| AttestError::Input(format!("{c}: not a contract address")))?;
            Ok(Target {
                asset: Token::Contract(c),
                contract: id,
            })
        }
    }
}

/// Evaluates a classic subject with the default checks, plus `sep41` and `sac-admin` when given.
fn evaluate_classic(
    subject: &assay_core::Subject,
    sep41: Option<&Sep41Outcome>,
    sac_admin: Option<SacAdmin>,
) -> Result<Report, AttestError> {
    let mut checks: Vec<Box<dyn Check + Send + Sync>> = default_checks();
    if let Some(run) = sep41 {
        checks.push(Box::new(run.check(assay_core::Timestamp::now())));
    }
    if let Some(c) = sac_admin {
        checks.push(Box::new(c));
    }
    Ok(Engine::with_checks(checks).run(subject)?)
}

/// One target's fresh report (or why there is none), with what its evidence bundle replays from.
#[derive(Debug)]
pub struct Evaluated {
    /// The report, or why there is none.
    pub report: Result<Report, AttestError>,
    /// The SEP-41 suite run, when the suite ran.
    pub suite: Option<Sep41Outcome>,
    /// The fork snapshot a custom token's power discovery read, when discovery ran.
    pub powers_snapshot: Option<serde_json::Value>,
}

impl Evaluated {
    /// No report, for `reason`.
    pub fn failed(reason: AttestError) -> Evaluated {
        Evaluated {
            report: Err(reason),
            suite: None,
            powers_snapshot: None,
        }
    }
}

/// Scans and evaluates every target fresh (cache bypassed), in input order. `rpc_url` / `passphrase`
/// name the network the contracts live on; `runner`, when given, runs the SEP-41 suite against each
/// target's contract.
pub fn evaluate_targets(
    settings: &ScanSettings,
    rpc_url: &str,
    passphrase: &str,
    targets: &[Target],
    runner: Option<&Sep41Runner>,
) -> Result<Vec<Evaluated>, AttestError> {
    let mut out: Vec<Option<Evaluated>> = Vec::new();
    out.resize_with(targets.len(), || None);
    evaluate_targets_each(settings, rpc_url, passphrase, targets, runner, |i, e| {
        out[i] = Some(e)
    })?;
    Ok(out
        .into_iter()
        .map(|e| {
            e.unwrap_or_else(|| {
                Evaluated::failed(AttestError::Internal("a scan result is missing".into()))
            })
        })
        .collect())
}

/// [`evaluate_targets`], handing each target's evaluation (with its index in `targets`) to `each` as
/// soon as it is ready: the targets without a scan first, then each classic one as its scan finishes,
/// while the others are still being read. Every target is handed over exactly once.
pub fn evaluate_targets_each(
    settings: &ScanSettings,
    rpc_url: &str,
    passphrase: &str,
    targets: &[Target],
    runner: Option<&Sep41Runner>,
    mut each: impl FnMut(usize, Evaluated),
) -> Result<(), AttestError> {
    // What each target is scanned as: a classic asset (with the SAC's admin when named by C…), or a custom
    // token's subject.
    enum Plan {
        Classic(Asset, Option<SacAdmin>),
        Custom(
            Box<assay_core::contract::ContractSubject>,
            Option<serde_json::Value>,
        ),
        NoReport(AttestError),
    }
    // The classic targets to scan: their index in `targets`, the asset, and the SAC's admin.
    let mut classic: Vec<(usize, Asset, Option<SacAdmin>)> = Vec::new();
    for (index, t) in targets.iter().enumerate() {
        let plan = match &t.asset {
            Token::Classic(a) => Plan::Classic(a.clone(), None),
            Token::Native => Plan::NoReport(AttestError::Source(
                "the native asset has no issuer to read".into(),
            )),
            Token::Contract(c) => match read_token(settings, rpc_url, passphrase, t.contract) {
                Ok(TokenRead::Custom {
                    subject,
                    powers_snapshot,
                }) => Plan::Custom(subject, powers_snapshot),
                Ok(TokenRead::StellarAsset { name, admin }) => match Token::parse(&name) {
                    Ok(Token::Classic(a)) => Plan::Classic(
                        a,
                        Some(SacAdmin {
                            contract: c.clone(),
                            admin,
                            at: assay_core::Timestamp::now(),
                        }),
                    ),
                    _ => Plan::NoReport(AttestError::Source(format!(
                        "{c} is the Stellar Asset Contract of {name:?}, which has no issuer to read"
                    ))),
                },
                Err(e) => Plan::NoReport(e),
            },
        };
        match plan {
            Plan::Classic(a, sac_admin) => classic.push((index, a, sac_admin)),
            Plan::NoReport(reason) => each(index, Evaluated::failed(reason)),
            Plan::Custom(subject, powers_snapshot) => {
                let powers = match &subject.powers {
                    assay_core::contract::PowersOutcome::Observed(o) => Some(o.value.clone()),
                    _ => None,
                };
                let suite = runner.map(|r| r.run_with(t.contract, powers));
                let report = evaluate_contract_subject(
                    &subject,
                    suite.as_ref(),
                    assay_core::Timestamp::now(),
                );
                each(
                    index,
                    Evaluated {
                        report,
                        suite,
                        powers_snapshot,
                    },
                );
            }
        }
    }
    if classic.is_empty() {
        return Ok(());
    }
    let assets: Vec<Asset> = classic.iter().map(|(_, a, _)| a.clone()).collect();
    let mut evaluate = |k: usize, scanned: Result<assay_core::Subject, AttestError>| {
        let (index, _, sac_admin) = &mut classic[k];
        let evaluated = match scanned {
            Ok(subject) => {
                let suite = runner.map(|r| r.run(targets[*index].contract));
                Evaluated {
                    report: evaluate_classic(&subject, suite.as_ref(), sac_admin.take()),
                    suite,
                    powers_snapshot: None,
                }
            }
            Err(e) => Evaluated::failed(e),
        };
        each(*index, evaluated);
    };
    if runner.is_none() {
        // Evaluating is pure and quick: done as each scan finishes.
        return scan_subjects_each(settings, &assets, evaluate);
    }
    // The suite drives a network of its own: it runs after the scans, outside the scanner's runtime.
    let mut scanned = Vec::with_capacity(assets.len());
    scan_subjects_each(settings, &assets, |k, subject| scanned.push((k, subject)))?;
    scanned.sort_by_key(|(k, _)| *k);
    for (k, subject) in scanned {
        evaluate(k, subject);
    }
    Ok(())
}
