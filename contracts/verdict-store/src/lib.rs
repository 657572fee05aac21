#![no_std]
//! Assay verdict store: the registry's consumer reads (`get_safety`, `is_safe`,
//! `is_safe_masked`, `assess`, `assess_many`), answered from the standing the registry publishes
//! for each asset, by a module small enough that a read costs a fraction of the registry's.
//!
//! Only its registry writes here (`publish`); it holds no admin and no upgrade. What it answers,
//! and when it is stricter than the registry, is documented in
//! `assay_registry_interface::VerdictStoreInterface` and `docs/contract-interface.md`.
//!
//! Each host function a module imports costs every call of it about 6,500 instructions, so this
//! code converts no structure: it reads a published standing as a vector of values
//! ([`standing`]), returns the `Safety` the registry encoded, builds an `Assessment` as the
//! vector it encodes to, and reads times as small values (ledger seconds fit them), an age limit
//! too (see [`max_age`]). It extends no TTL but its standings': the registry extends the store's
//! instance and code each time it publishes, so no call here imports the instance extension.
use assay_registry_interface::{
    rules::{admits, admits_masked, judge, Judged, Judgment},
    standing, Error, INTERFACE_VERSION, MAX_ASSESS_ASSETS, MAX_BATCH_SIZE,
};
use soroban_env_common::{Env as _, U32Val, U64Object, U64Small};
use soroban_sdk::{
    contract, contractimpl, symbol_short,
    unwrap::{UnwrapInfallible, UnwrapOptimized},
    Address, Env, EnvBase, Symbol, TryFromVal, Val, Vec,
};

/// Every standing written asks for the longest TTL there is and the host clamps it to the network
/// maximum (as the registry does: reading the maximum would import two more host functions).
const TTL_THRESHOLD: u32 = u32::MAX;
const TTL_EXTEND_TO: u32 = u32::MAX;

/// Storage keys, all bare values: a `#[contracttype]` key costs a read about 8,000 instructions
/// more to convert, and its conversion imports the host's symbol creation into every call.
/// - persistent, keyed by the bare asset `Address`: its published [`standing`] without the asset
///   ([`standing::STORED_LEN`] values);
/// - persistent, [`NAMES`]: the [`standing::NAMES`] symbols the registry hands over on binding;
/// - instance, keyed by a bare `u32` admission id: present once that admission ended;
/// - instance, [`REGISTRY`]: the registry that publishes here.
const NAMES: Symbol = symbol_short!("names");
const REGISTRY: Symbol = symbol_short!("registry");

#[contract]
pub struct VerdictStore;

#[contractimpl]
impl VerdictStore {
    /// Deploys a store for `registry`, which then binds it (`bind_verdict_store`) and from then
    /// on extends its instance and code each time it publishes.
    ///
    /// # Arguments
    /// * `registry` - the only address that can publish here.
    pub fn __constructor(env: Env, registry: Address) {
        env.storage().instance().set(&REGISTRY, &registry);
    }

    /// Interface version of this code (the registry's).
    pub fn version(_env: Env) -> u32 {
        INTERFACE_VERSION
    }

    /// The registry whose verdicts this store answers with.
    pub fn registry(env: Env) -> Address {
        registry(&env)
    }

    /// The registry's `get_safety` (an `Option<Safety>`), from the published standing.
    pub fn get_safety(env: Env, asset: Address) -> Val {
        match standing(&env, &asset) {
            Standing::Verdict { safety, .. } => safety,
            Standing::None { .. } | Standing::CodeChanged => Val::VOID.to_val(),
        }
    }

    /// The registry's `is_safe`, from the published standing.
    /// `max_age_secs` is a `u64` (typed `Val` here, see [`max_age`]).
    pub fn is_safe(env: Env, asset: Address, max_severity: u32, max_age_secs: Val) -> bool {
        match standing(&env, &asset) {
            Standing::Verdict { judged, .. } => {
                admits(judged, max_severity, max_age(max_age_secs), now(&env))
            }
            Standing::None { .. } | Standing::CodeChanged => false,
        }
    }

    /// The registry's `is_safe_masked`, from the published standing (`max_age_secs` a `u64`).
    pub fn is_safe_masked(
        env: Env,
        asset: Address,
        forbidden_mask: u32,
        max_age_secs: Val,
    ) -> bool {
        match standing(&env, &asset) {
            Standing::Verdict { judged, .. } => {
                admits_masked(judged, forbidden_mask, max_age(max_age_secs), now(&env))
            }
            Standing::None { .. } | Standing::CodeChanged => false,
        }
    }

    /// The registry's `assess` (an `Assessment`), from the published standing (`max_age_secs` a
    /// `u64`).
    pub fn assess(
        env: Env,
        asset: Address,
        max_severity: u32,
        forbidden_mask: u32,
        max_age_secs: Val,
    ) -> Val {
        let policy = (max_severity, forbidden_mask, max_age(max_age_secs));
        assess(&env, &asset, policy, now(&env), &mut Names::default())
    }

    /// The registry's `assess_many`, from the published standings (`max_age_secs` a `u64`).
    ///
    /// # Errors
    /// * [`Error::TooManyAssets`] (17) - more than `MAX_ASSESS_ASSETS` (10) assets.
    pub fn assess_many(
        env: Env,
        assets: Vec<Address>,
        max_severity: u32,
        forbidden_mask: u32,
        max_age_secs: Val,
    ) -> Result<Vec<Val>, Error> {
        let len = assets.len();
        if len > MAX_ASSESS_ASSETS {
            return Err(Error::TooManyAssets);
        }
        let mut assets_buf = [Val::VOID.to_val(); MAX_ASSESS_ASSETS as usize];
        let assets_buf = &mut assets_buf[..len as usize];
        env.vec_unpack_to_slice(assets.to_object(), assets_buf)
            .unwrap_infallible();
        let policy = (max_severity, forbidden_mask, max_age(max_age_secs));
        // One clock read for the batch: the ledger time is the same for every asset.
        let now = now(&env);
        let mut names = Names::default();
        for slot in assets_buf.iter_mut() {
            let asset = Address::try_from_val(&env, slot).unwrap_optimized();
            *slot = assess(&env, &asset, policy, now, &mut names);
        }
        Ok(vec_of(&env, assets_buf))
    }

    /// Replaces the standing of each asset in `standings`, ends `ended_admission`, if given, and
    /// keeps the variant `names`, if given (the registry passes them when it binds this store).
    /// The registry extends this store's instance and code itself, in the same call.
    ///
    /// # Errors
    /// Host auth error unless the registry is the caller.
    pub fn publish(
        env: Env,
        standings: Vec<Vec<Val>>,
        ended_admission: Option<u32>,
        names: Option<Vec<Val>>,
    ) {
        registry(&env).require_auth();
        // The registry publishes at most one batch of attestations at a time.
        let mut buf = [Val::VOID.to_val(); MAX_BATCH_SIZE as usize];
        let published = &mut buf[..standings.len() as usize];
        env.vec_unpack_to_slice(standings.to_object(), published)
            .unwrap_infallible();
        let storage = env.storage().persistent();
        for published in published.iter() {
            let mut fields = [Val::VOID.to_val(); standing::LEN as usize];
            // Traps unless it is a vector of exactly `LEN` values.
            env.vec_unpack_to_slice(
                Vec::<Val>::try_from_val(&env, published)
                    .unwrap_optimized()
                    .to_object(),
                &mut fields,
            )
            .unwrap_infallible();
            let asset = Address::try_from_val(&env, &fields[standing::ASSET as usize])
                .unwrap_optimized()
                .to_val();
            let kept = env
                .vec_new_from_slice(&fields[..standing::STORED_LEN as usize])
                .unwrap_infallible();
            storage.set(&asset, &kept.to_val());
            storage.extend_ttl(&asset, TTL_THRESHOLD, TTL_EXTEND_TO);
        }
        if let Some(admission) = ended_admission {
            env.storage().instance().set(&admission, &true);
        }
        if let Some(names) = names {
            // Traps unless it holds exactly the names' count, each a symbol.
            for name in unpack_names(&env, &names) {
                Symbol::try_from_val(&env, &name).unwrap_optimized();
            }
            storage.set(&NAMES, &names);
        }
        // Kept alive with the standings: `assess` reads it for most refusals. (Extending an
        // absent entry would trap, and with it the registry's write.)
        if storage.has(&NAMES) {
            storage.extend_ttl(&NAMES, TTL_THRESHOLD, TTL_EXTEND_TO);
        }
    }
}

/// What the store answers for an asset.
enum Standing {
    /// No verdict answers; the latest revocation's time, if any.
    None { revoked_at: Val },
    /// The leading verdict, bound to the live code: as published, and the fields judged.
    Verdict { safety: Val, judged: Judged },
    /// A verdict that counted judged code that is no longer live.
    CodeChanged,
}

/// The asset's published standing, with what can change without a publish checked now: the
/// leading verdict's admission and code.
fn standing(env: &Env, asset: &Address) -> Standing {
    let Some(published) = env.storage().persistent().get::<_, Vec<Val>>(asset) else {
        return Standing::None {
            revoked_at: Val::VOID.to_val(),
        };
    };
    let fields = fields(env, &published);
    let revoked_at = fields[standing::REVOKED_AT as usize];
    let code = u32_at(&fields, standing::CODE);
    if code == standing::CODE_NONE {
        return Standing::None { revoked_at };
    }
    if env
        .storage()
        .instance()
        .has(&fields[standing::ADMISSION as usize])
    {
        // Its writer was removed: a less severe verdict may count now, which only the registry
        // knows; answer as for none until it publishes the asset again.
        return Standing::None { revoked_at };
    }
    if !code_is_live(env, asset, code, &fields) {
        return Standing::CodeChanged;
    }
    Standing::Verdict {
        safety: fields[standing::SAFETY as usize],
        judged: Judged {
            severity: u32_at(&fields, standing::SEVERITY),
            flags: u32_at(&fields, standing::FLAGS),
            attested_at: small_u64(fields[standing::ATTESTED_AT as usize]),
        },
    }
}

/// Whether the leading verdict's binding holds now, as the registry judges a binding.
fn code_is_live(env: &Env, asset: &Address, code: u32, fields: &[Val]) -> bool {
    let live = env
        .get_address_executable(asset.to_object())
        .unwrap_infallible();
    let same = |a: Val, b: Val| env.obj_cmp(a, b).unwrap_infallible() == 0;
    let executable = fields[standing::EXECUTABLE as usize];
    match code {
        standing::CODE_WASM => same(executable, live),
        // Nothing deployed yet: only that SAC can appear there (see the registry's `LiveCode`).
        standing::CODE_STELLAR_ASSET if live.is_void() => true,
        standing::CODE_STELLAR_ASSET => {
            same(executable, live)
                && same(
                    stellar_asset_admin(env, asset),
                    fields[standing::ADMIN as usize],
                )
        }
        _ => false,
    }
}

/// A Stellar Asset Contract's `admin()`, called with no conversion.
fn stellar_asset_admin(env: &Env, asset: &Address) -> Val {
    let no_args = env.vec_new_from_slice(&[]).unwrap_infallible();
    env.call(
        asset.to_object(),
        symbol_short!("admin").to_symbol_val(),
        no_args,
    )
    .unwrap_infallible()
}

/// The [`standing::NAMES`] symbols, read from storage once per call and only by an answer that
/// needs one.
#[derive(Default)]
struct Names(Option<[Val; standing::NAMES_LEN as usize]>);

impl Names {
    /// The name at `at`; traps before the registry bound this store (no names yet).
    fn get(&mut self, env: &Env, at: u32) -> Val {
        let names = self.0.get_or_insert_with(|| {
            let names: Vec<Val> = env.storage().persistent().get(&NAMES).unwrap_optimized();
            unpack_names(env, &names)
        });
        names[at as usize]
    }
}

fn unpack_names(env: &Env, names: &Vec<Val>) -> [Val; standing::NAMES_LEN as usize] {
    let mut out = [Val::VOID.to_val(); standing::NAMES_LEN as usize];
    env.vec_unpack_to_slice(names.to_object(), &mut out)
        .unwrap_infallible();
    out
}

/// `assess` under `policy` at ledger time `now`, encoded as the registry's `Assessment`. The
/// short variant names are small symbols; the long ones come from `names`.
fn assess(env: &Env, asset: &Address, policy: (u32, u32, u64), now: u64, names: &mut Names) -> Val {
    let variant = |name: Val, field: Option<Val>| -> Val {
        match field {
            Some(field) => env.vec_new_from_slice(&[name, field]),
            None => env.vec_new_from_slice(&[name]),
        }
        .unwrap_infallible()
        .to_val()
    };
    let short = |name: Symbol| name.to_val();
    match standing(env, asset) {
        Standing::Verdict { safety, judged } => match judge(judged, policy, now) {
            Judgment::Safe => variant(short(symbol_short!("Safe")), Some(safety)),
            Judgment::Stale(age) => variant(short(symbol_short!("Stale")), Some(small_val(age))),
            Judgment::SeverityTooHigh(s) => {
                variant(names.get(env, standing::SEVERITY_TOO_HIGH), Some(s.into()))
            }
            Judgment::ForbiddenMechanics(bits) => variant(
                names.get(env, standing::FORBIDDEN_MECHANICS),
                Some(bits.into()),
            ),
        },
        Standing::CodeChanged => variant(names.get(env, standing::CODE_CHANGED), None),
        Standing::None { revoked_at } if revoked_at.is_void() => {
            variant(names.get(env, standing::NOT_ATTESTED), None)
        }
        Standing::None { revoked_at } => variant(short(symbol_short!("Revoked")), Some(revoked_at)),
    }
}

/// A kept standing's [`standing::STORED_LEN`] values, in one host call.
fn fields(env: &Env, published: &Vec<Val>) -> [Val; standing::STORED_LEN as usize] {
    let mut fields = [Val::VOID.to_val(); standing::STORED_LEN as usize];
    env.vec_unpack_to_slice(published.to_object(), &mut fields)
        .unwrap_infallible();
    fields
}

fn u32_at(fields: &[Val], at: u32) -> u32 {
    U32Val::try_from(fields[at as usize])
        .unwrap_optimized()
        .into()
}

/// A ledger time: always a small value (seconds below 2^56), so no host conversion is imported.
fn small_u64(val: Val) -> u64 {
    U64Small::try_from(val).unwrap_optimized().into()
}

/// An age limit (a `u64`) read without a host conversion, which would import one more function:
/// a small value as it is, and a larger one (an object: 2^56 seconds or more) as `u64::MAX`,
/// which it is as a limit: no age a ledger time allows reaches either. Anything else is not a
/// `u64` and traps, as the typed argument's conversion would.
fn max_age(val: Val) -> u64 {
    if let Ok(small) = U64Small::try_from(val) {
        small.into()
    } else {
        U64Object::try_from(val).unwrap_optimized();
        u64::MAX
    }
}

fn small_val(value: u64) -> Val {
    U64Small::try_from(value).unwrap_optimized().to_val()
}

/// The ledger time, read as a small value.
fn now(env: &Env) -> u64 {
    small_u64(env.get_ledger_timestamp().unwrap_infallible().to_val())
}

/// `vals` as a vector, in one host call (`push_back` would import another function).
fn vec_of(env: &Env, vals: &[Val]) -> Vec<Val> {
    let raw = env.vec_new_from_slice(vals).unwrap_infallible();
    Vec::try_from_val(env, &raw).unwrap_optimized()
}

fn registry(env: &Env) -> Address {
    // The constructor always stores it; `unwrap_optimized` traps without panic formatting.
    env.storage().instance().get(&REGISTRY).unwrap_optimized()
}

#[cfg(test)]
mod test;
