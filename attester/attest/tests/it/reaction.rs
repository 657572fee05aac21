//! Issue #18, item 3: between passes, `watch` follows the ledger entries a verdict rests on and checks
//! the assets concerned at once. Each test watches one asset (checked on the clock every 300 s, reacting
//! every ledger), changes what its verdict rests on while `watch` runs, and asserts that the registry
//! holds a new verdict (a different evidence hash) within 30 s — long before the next pass — after
//! exactly one more check. Registry from the built WASM, sources over local HTTPS.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use assay_attest::registry::read_safety;
use assay_attest::registry::Safety;
use assay_attest::sac;
use assay_attest::watch::{Checked, Reaction, WatchConfig};
use assay_chain::Signer;
use assay_core::Token;
use common::*;

const DOMAIN: &str = "aqua.network";

/// What the registry held after the first pass, what it held after the change, and the last outcome.
struct Followed {
    before: Safety,
    after: Option<Safety>,
    checks: u64,
    outcome: Checked,
    /// The ledger the re-scans' stellar-rpc reads had to reach when the loop stopped.
    ledger_floor: u32,
}

/// Runs `watch` over `token` (keyed by `contract`) until its first write, applies `change`, and waits up
/// to 30 s for the registry to hold another evidence hash.
fn follow(w: &World, token: Token, contract: [u8; 32], change: impl FnOnce()) -> Followed {
    follow_reading(w, w.settings(&[DOMAIN]), token, contract, change)
}

/// [`follow`], the sources read under `settings`.
fn follow_reading(
    w: &World,
    settings: assay_attest::scanning::ScanSettings,
    token: Token,
    contract: [u8; 32],
    change: impl FnOnce(),
) -> Followed {
    let config = WatchConfig::parse(&format!(
        "registry = \"C\"\nnetwork = \"local\"\n[[asset]]\nasset = \"{token}\"\n"
    ))
    .unwrap();
    let mut watch = w.watcher(
        &w.rpc,
        settings,
        config,
        vec![(token, contract, Duration::from_secs(300))],
    );
    watch.reaction = Some(Reaction::new(1, true));
    let held = || read_safety(&w.rpc, w.registry, contract).unwrap();
    // The first entry that `accept`s, or `None` after 30 s.
    let wait_for = |accept: &dyn Fn(&Safety) -> bool| {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if let Some(s) = held().filter(|s| accept(s)) {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    };
    let stop = AtomicBool::new(false);
    let (before, after, outcomes) = std::thread::scope(|s| {
        let running = s.spawn(|| watch.run(&stop, false));
        let before = wait_for(&|_| true);
        let after = before.as_ref().and_then(|first| {
            // A moment for the first poll to record the entries as they are.
            std::thread::sleep(Duration::from_millis(1500));
            change();
            wait_for(&|s| s.evidence_hash != first.evidence_hash)
        });
        // Stopped before any assertion, so a failure ends the test instead of leaving the loop running.
        stop.store(true, Ordering::Relaxed);
        (before, after, running.join().unwrap())
    });
    let checks = watch.health.lock().unwrap().checks_total;
    Followed {
        before: before.expect("the first pass never wrote"),
        after,
        checks,
        outcome: outcomes[0].clone(),
        ledger_floor: watch.settings.ledger_floor.load(Ordering::Acquire),
    }
}

impl Followed {
    /// The entry after the change, asserting it came from one reaction check (not a pass on the clock).
    fn reacted(self) -> (Safety, Safety) {
        let after = self.after.unwrap_or_else(|| {
            panic!(
                "the registry did not follow the change within 30 s (still {:?})",
                self.before
            )
        });
        assert_eq!(self.checks, 2, "the first pass, then one reaction check");
        assert!(
            matches!(self.outcome, Checked::Written(_)),
            "{:?}",
            self.outcome
        );
        (self.before, after)
    }
}

/// A classic asset of a fresh issuer (the key of `seed`), verified by its replayed sources: clear when
/// `locked` (master weight 0: no key can set a flag), else medium (its key can set `AUTH_REVOCABLE` and
/// freeze at any time: the latent freeze).
fn issued(w: &World, seed: u8, code: &'static str, locked: bool) -> (Signer, ClassicAsset) {
    let issuer = Signer::from_seed([seed; 32]);
    let asset = w.issue(code, &issuer.address(), 0, Some(DOMAIN));
    if locked {
        w.lock(&issuer.address());
    }
    w.serve_eval("aqua-clear-verified", &issuer.address(), DOMAIN);
    (issuer, asset)
}

/// Sets `AUTH_REVOCABLE` on `issuer`'s account: clear becomes medium.
fn make_revocable(w: &World, issuer: &Signer) {
    w.net
        .admin_set_account_flags(&g_account(&issuer.address()), 2)
        .unwrap()
}

/// A contract watched by its `C…` address.
fn by_address(contract: [u8; 32]) -> Token {
    Token::parse(&sac::contract_strkey(contract)).unwrap()
}

/// A classic asset: an issuer's flag change is seen in its account entry.
#[test]
fn an_issuer_flag_change_is_rewritten_before_the_next_pass() {
    let w = World::start(&[DOMAIN]);
    let (issuer, asset) = issued(&w, 0x60, "RCT", true);
    let contract = sac::asset_contract_id(&asset.core(), &w.spec.passphrase).unwrap();
    let (before, after) = follow(&w, Token::Classic(asset.core()), contract, || {
        make_revocable(&w, &issuer)
    })
    .reacted();
    assert_eq!((before.severity, after.severity), (0, 2));
}

/// Issue #26 item 2: the issuer read through the stellar-rpc the reaction reads, Horizon unreachable. The
/// reaction raises the ledger the re-scan must read at to the ledger it saw (at or after the change), and the
/// re-scan, reading the same stellar-rpc, sees the change.
#[test]
fn a_flag_change_is_rescanned_through_the_reactions_stellar_rpc_at_its_ledger() {
    let w = World::start(&[DOMAIN]);
    let (issuer, asset) = issued(&w, 0x65, "RRP", true);
    let contract = sac::asset_contract_id(&asset.core(), &w.spec.passphrase).unwrap();
    let mut settings = w.settings(&[DOMAIN]);
    settings.rpc_url = Some(w.net.rpc_url());
    settings.horizon_url = format!(
        "http://127.0.0.1:{}/horizon",
        assay_scan::testsupport::closed_port()
    );
    let changed_at = std::cell::Cell::new(0);
    let followed = follow_reading(&w, settings, Token::Classic(asset.core()), contract, || {
        make_revocable(&w, &issuer);
        changed_at.set(w.rpc.get_latest_ledger().unwrap().sequence);
    });
    let floor = followed.ledger_floor;
    let (before, after) = followed.reacted();
    assert_eq!((before.severity, after.severity), (0, 2));
    assert!(
        floor >= changed_at.get(),
        "the re-scan may read ledger {floor}, before the change at {}",
        changed_at.get()
    );
}

/// A Stellar Asset Contract named by its address: `set_admin` rewrites its instance storage, and the
/// report's `sac-admin` evidence names the new admin, so the verdict moves although its severity does not
/// (the issuer's flags still decide it).
#[test]
fn a_sac_admin_change_is_rewritten_before_the_next_pass() {
    let w = World::start(&[DOMAIN]);
    // The issuer signs set_admin, so it keeps its key (and with it the latent freeze: medium).
    let (issuer, asset) = issued(&w, 0x61, "RSA", false);
    let contract = w.deploy_sac(&asset);
    let new_admin = Signer::from_seed([0x62; 32]).public_key();
    let (before, after) = follow(&w, by_address(contract), contract, || {
        w.set_sac_admin(contract, &issuer, new_admin);
    })
    .reacted();
    assert_eq!(
        (before.severity, after.severity, after.flags),
        (2, 2, before.flags)
    );
}

/// A Stellar Asset Contract named by its address is judged by its issuer's flags: its issuer account,
/// learned from the SAC's instance, is followed like a classic asset's.
#[test]
fn a_sac_issuers_flag_change_is_rewritten_before_the_next_pass() {
    let w = World::start(&[DOMAIN]);
    let (issuer, asset) = issued(&w, 0x64, "RSF", true);
    let contract = w.deploy_sac(&asset);
    let (before, after) = follow(&w, by_address(contract), contract, || {
        make_revocable(&w, &issuer)
    })
    .reacted();
    assert_eq!((before.severity, after.severity), (0, 2));
}

/// A token contract: an `upgrade` replaces its executable in the instance entry, and the report's
/// `contract-mechanics` evidence names the code's hash (here the new code can no longer be replaced, so
/// bit 9 goes too).
#[test]
fn a_token_code_update_is_rewritten_before_the_next_pass() {
    let w = World::start(&[DOMAIN]);
    let token = w.deploy_token("upgradable_token", 0x63);
    let conformant = w.upload("conformant_token");
    let (before, after) = follow(&w, by_address(token), token, || {
        w.upgrade_token(token, conformant);
    })
    .reacted();
    const CODE_REPLACEABLE: u32 = 1 << 9;
    assert_eq!(before.flags & CODE_REPLACEABLE, CODE_REPLACEABLE);
    assert_eq!(after.flags & CODE_REPLACEABLE, 0, "{after:?}");
}
