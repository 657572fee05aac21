//! From command arguments to fresh reports, for `attest`, `verify` and `watch` alike: each argument parsed
//! by the one parser ([`assay_core::Token`]), keyed by the contract address the registry holds it under,
//! scanned fresh and evaluated — a classic asset by its issuer's flags, a Stellar Asset Contract named by
//! `C…` the same way plus its `admin()`, a custom token by its code and its admin's domain — with the
//! SEP-41 suite when a runner is given.

use std::time::SystemTime;

use assay_core::checks::default_checks;
use assay_core::checks::sac_admin::SacAdmin;
use assay_core::{Asset, Check, Engine, Report, Token};

use crate::attest::Target;
use crate::sac;
use crate::scanning::{scan_subjects, ScanSettings};
use crate::sep41::{evaluate_contract_subject, Sep41Outcome, Sep41Runner};
use crate::token::{read_token, TokenRead};
use crate::AttestError;

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

fn now() -> assay_core::Timestamp {
    assay_scan::scanner::timestamp(SystemTime::now())
}

/// Evaluates a classic subject with the default checks, plus `sep41` and `sac-admin` when given.
fn evaluate_classic(
    subject: &assay_core::Subject,
    sep41: Option<&Sep41Outcome>,
    sac_admin: Option<SacAdmin>,
) -> Result<Report, AttestError> {
    let mut checks: Vec<Box<dyn Check + Send + Sync>> = default_checks();
    if let Some(run) = sep41 {
        checks.push(Box::new(run.check(now())));
    }
    if let Some(c) = sac_admin {
        checks.push(Box::new(c));
    }
    Ok(Engine::with_checks(checks).run(subject)?)
}

/// One target's fresh report (or why there is none) and its suite run, when the suite ran.
pub type Evaluated = (Result<Report, AttestError>, Option<Sep41Outcome>);

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
    // What each target is scanned as: a classic asset (with the SAC's admin when named by C…), or a custom
    // token's subject.
    enum Plan {
        Classic(Asset, Option<SacAdmin>),
        Custom(Box<assay_core::contract::ContractSubject>),
        NoReport(AttestError),
    }
    let plans: Vec<Plan> = targets
        .iter()
        .map(|t| match &t.asset {
            Token::Classic(a) => Plan::Classic(a.clone(), None),
            Token::Native => Plan::NoReport(AttestError::Source(
                "the native asset has no issuer to read".into(),
            )),
            Token::Contract(c) => match read_token(settings, rpc_url, passphrase, t.contract) {
                Ok(TokenRead::Custom(s)) => Plan::Custom(s),
                Ok(TokenRead::StellarAsset { name, admin }) => match Token::parse(&name) {
                    Ok(Token::Classic(a)) => Plan::Classic(
                        a,
                        Some(SacAdmin {
                            contract: c.clone(),
                            admin,
                            at: now(),
                        }),
                    ),
                    _ => Plan::NoReport(AttestError::Source(format!(
                        "{c} is the Stellar Asset Contract of {name:?}, which has no issuer to read"
                    ))),
                },
                Err(e) => Plan::NoReport(e),
            },
        })
        .collect();
    let classic: Vec<Asset> = plans
        .iter()
        .filter_map(|p| match p {
            Plan::Classic(a, _) => Some(a.clone()),
            _ => None,
        })
        .collect();
    let mut subjects = if classic.is_empty() {
        Vec::new()
    } else {
        scan_subjects(settings, &classic)?
    }
    .into_iter();
    let mut out = Vec::with_capacity(targets.len());
    for (target, plan) in targets.iter().zip(plans) {
        let evaluated = match plan {
            Plan::NoReport(reason) => (Err(reason), None),
            Plan::Classic(_, sac_admin) => match subjects.next() {
                Some(Ok(subject)) => {
                    let suite = runner.map(|r| r.run(target.contract));
                    (evaluate_classic(&subject, suite.as_ref(), sac_admin), suite)
                }
                Some(Err(e)) => (Err(e), None),
                None => (
                    Err(AttestError::Internal("a scan result is missing".into())),
                    None,
                ),
            },
            Plan::Custom(subject) => {
                let suite = runner.map(|r| r.run(target.contract));
                (
                    evaluate_contract_subject(&subject, suite.as_ref(), now()),
                    suite,
                )
            }
        };
        out.push(evaluated);
    }
    Ok(out)
}
