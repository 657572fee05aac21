//! What runs on the suite's own network before the suite: a caller's power discovery, which sees the token
//! with its holder funded and hands back what it observed (`assay_core::powers::PowerSurvey`). The mint and
//! the clawback it exercised are the calls `sep41-events-mint` and `sep41-events-clawback` judge; the suite
//! knows nothing of how they were found.
use std::fmt;
use std::sync::Arc;

use assay_core::powers::{PowerEffect, PowerSurvey};
use assay_localnet::LocalNet;
use stellar_xdr::{ContractEvent, Limits, ReadXdr, ScAddress};

use crate::checks::ExercisedPower;

/// The mint and the clawback a discovery exercised, if any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exercised {
    pub mint: Option<ExercisedPower>,
    pub clawback: Option<ExercisedPower>,
}

impl Exercised {
    /// The first mint and the first burning clawback `survey` observed, with their events. A forced
    /// transfer (a balance moved, not burned) publishes a transfer, not a clawback, so it is not one here.
    pub fn from_survey(survey: &PowerSurvey) -> Exercised {
        let mut out = Exercised::default();
        for p in &survey.powers {
            let (slot, account, amount) = match &p.effect {
                PowerEffect::CreatesSupply { credited, amount } => {
                    (&mut out.mint, credited, amount)
                }
                PowerEffect::TakesBalance {
                    holder,
                    amount,
                    moved_to: None,
                } => (&mut out.clawback, holder, amount),
                _ => continue,
            };
            if slot.is_some() {
                continue;
            }
            let (Ok(account), Ok(amount)) =
                (assay_chain::parse_address(account), amount.parse::<i128>())
            else {
                continue;
            };
            // Encoded by this process from the host's output; decoding is still bounded.
            let limits = Limits {
                depth: 500,
                len: 4 * 1024 * 1024,
            };
            let events = p
                .events
                .iter()
                .filter_map(|e| ContractEvent::from_xdr_base64(e, limits.clone()).ok())
                .collect();
            *slot = Some(ExercisedPower {
                function: p.function.clone(),
                account,
                amount,
                events,
            });
        }
        out
    }
}

/// Why a discovery run before the suite could not run: the discovery's own typed error (for power
/// discovery, `assay_powers::DiscoveryError`), its message naming the cause.
pub type DiscoveryFailure = Box<dyn std::error::Error + Send + Sync>;

/// What a discovery run before the suite found: the survey, or why it could not run.
pub type Discovered = Result<PowerSurvey, DiscoveryFailure>;

/// A discovery run once the suite's network holds the token and its holder is funded: given the network,
/// the token and the addresses holding units. It must leave the network as it found it (power discovery
/// works in a sandbox copy).
#[derive(Clone)]
#[allow(clippy::type_complexity)]
pub struct BeforeSuite(
    pub Arc<dyn Fn(&LocalNet, &ScAddress, &[ScAddress]) -> Discovered + Send + Sync>,
);

impl BeforeSuite {
    /// A step that hands over a survey found earlier, for the same code (when the token's subject was
    /// read).
    pub fn found(survey: PowerSurvey) -> BeforeSuite {
        BeforeSuite(Arc::new(move |_, _, _| Ok(survey.clone())))
    }

    /// Runs the step when there is one: what it found, and the mint and clawback it exercised.
    pub(crate) fn run(
        this: Option<&BeforeSuite>,
        localnet: &LocalNet,
        contract: &ScAddress,
        holders: &[ScAddress],
    ) -> (Option<Discovered>, Exercised) {
        let Some(step) = this else {
            return (None, Exercised::default());
        };
        let found = (step.0)(localnet, contract, holders);
        let exercised = found
            .as_ref()
            .map(Exercised::from_survey)
            .unwrap_or_default();
        (Some(found), exercised)
    }
}

impl fmt::Debug for BeforeSuite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BeforeSuite(..)")
    }
}
