//! The attester's one registry client (interface 5). It owns the ABI as the attester speaks it
//! (`Attestation`, `Safety`, `CodeBinding`, `MAX_BATCH_SIZE`, the error table), the host functions
//! of every write (`attest_many(attester, Vec<Attestation>)`, `revoke(attester, asset)`) and every
//! read ([`read`]: `get_safety`, `get_safety_by`, `assess`, `is_safe_quorum`, and the verdicts of
//! many assets straight from storage). Struct values are `ScVal::Map`s with symbol keys in sorted
//! order, which is how `#[contracttype]` structs encode. The copy of the ABI is pinned against
//! `assay-registry-interface` by `constants_error_codes_and_bits_match_the_registry_interface`.

mod read;
pub use read::*;

use stellar_xdr::{
    AccountId, ContractId, Hash, HostFunction, InvokeContractArgs, PublicKey, ScAddress, ScBytes,
    ScMap, ScMapEntry, ScSymbol, ScVal, Uint256,
};

/// The registry refuses larger batches (`BatchTooLarge`, code 7): 35 `attest` events (each with its
/// evidence hash and attester topic) stay at or below 70 % of the 16 KiB per-transaction event budget.
pub const MAX_BATCH_SIZE: usize = 35;

/// Registry error codes the attester explains.
pub fn registry_error(code: u32) -> &'static str {
    match code {
        1 => "AlreadyInitialized",
        2 => "NotInitialized",
        3 => "InvalidSeverity",
        4 => "InconsistentAttestation (clawback bit below high)",
        5 => "NotAttested",
        6 => "NoPendingAdmin",
        7 => "BatchTooLarge (more than 35)",
        8 => "ReservedFlags",
        9 => "ViolationBelowCritical (sep41_violation below critical)",
        10 => "NotAttester (the source account is not in the registry's attester set; the admin adds it with add_attester)",
        11 => "AttesterExists",
        12 => "UpgradeDelayRequired (a notice below one hour needs allow_instant_upgrade)",
        13 => "NoPendingUpgrade",
        14 => "UpgradeNotDue (the upgrade's notice has not run yet)",
        15 => "TooManyAttesters (the set holds 16)",
        16 => "CodeMismatch (the token's code, or its SAC admin, is not the one scanned: it changed since; scan again)",
        17 => "TooManyAssets (assess_many takes at most 10)",
        18 => "NoPendingAttesterChange",
        19 => "AttesterChangeNotDue (the attester change's notice has not run yet)",
        20 => "VerdictStoreBound (the registry's verdict store is bound once)",
        21 => "VerdictStoreMismatch (that store answers for another registry)",
        22 => "NoVerdictStore (bind a verdict store before republishing)",
        23 => "AttesterLeaving (this attester's removal is pending: it may only write critical verdicts, and not revoke)",
        24 => "NoPendingVerdictStore (no verdict store is proposed: bind_verdict_store proposes one)",
        25 => "VerdictStoreNotDue (the verdict store's notice has not run yet)",
        _ => "unknown registry error",
    }
}

/// The code a verdict judged (the registry's `CodeBinding`): the registry accepts the write only if
/// it is the asset's live code, and stops admitting the asset once it no longer is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeBinding {
    /// A custom token: the SHA-256 of the WASM scanned.
    Wasm([u8; 32]),
    /// A classic asset's Stellar Asset Contract: its admin (the issuer the scan judged).
    StellarAssetAdmin(ScAddress),
}

impl CodeBinding {
    /// The `#[contracttype]` enum encoding: `[Symbol(variant), payload]`.
    pub fn to_scval(&self) -> ScVal {
        let (variant, payload) = match self {
            CodeBinding::Wasm(hash) => ("Wasm", bytes32(*hash)),
            CodeBinding::StellarAssetAdmin(admin) => {
                ("StellarAssetAdmin", ScVal::Address(admin.clone()))
            }
        };
        ScVal::Vec(Some(
            vec![ScVal::Symbol(sym(variant)), payload]
                .try_into()
                .expect("two elements"),
        ))
    }

    /// What `report` judged: for a classic asset its SAC's admin as the `sac-admin` check read it
    /// (`admin() is the issuer G…`, `admin() is X, not the issuer G…`), else its issuer (the admin a
    /// SAC is deployed with); for a custom token the WASM hash on its `contract-mechanics` evidence
    /// line `wasm <hex>`.
    ///
    /// # Errors
    /// [`BindingError`], naming what is missing: a report of a custom token whose code was not read
    /// carries no hash, and a verdict bound to no code is not written.
    pub fn judged_by(report: &assay_core::Report) -> Result<CodeBinding, BindingError> {
        match &report.asset {
            assay_core::Token::Classic(asset) => {
                let observed = report
                    .findings
                    .iter()
                    .filter(|f| f.check == "sac-admin")
                    .flat_map(|f| f.evidence.iter())
                    .filter(|e| !e.attempted)
                    .find_map(|e| {
                        let rest = e.claim.strip_prefix("admin() is ")?;
                        Some(match rest.strip_prefix("the issuer ") {
                            Some(issuer) => issuer,
                            None => rest.split_once(", not the issuer").map(|(a, _)| a)?,
                        })
                    });
                let admin = observed.unwrap_or(&asset.issuer);
                Ok(CodeBinding::StellarAssetAdmin(strkey_address(admin)?))
            }
            assay_core::Token::Contract(contract) => report
                .findings
                .iter()
                .filter(|f| f.check == "contract-mechanics")
                .flat_map(|f| f.evidence.iter())
                .find_map(|e| e.claim.strip_prefix("wasm "))
                .and_then(|hex_hash| {
                    let mut hash = [0u8; 32];
                    hex::decode_to_slice(hex_hash.trim(), &mut hash).ok()?;
                    Some(CodeBinding::Wasm(hash))
                })
                .ok_or_else(|| BindingError::NoWasmHash {
                    contract: contract.clone(),
                }),
            assay_core::Token::Native => Err(BindingError::Native),
        }
    }
}

/// Why a report's verdict cannot be bound to the code it judged, so it is not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindingError {
    /// A custom token whose code was not read.
    #[error(
        "the report of {contract} names no WASM hash (its code was not read), so the verdict cannot be \
         bound to the code it judged"
    )]
    NoWasmHash {
        /// The token contract (C…).
        contract: String,
    },
    /// The native asset.
    #[error("the native asset has no issuer to bind a verdict to")]
    Native,
    /// The admin a classic asset's report names is not an address.
    #[error("{0:?} is neither a G… account nor a C… contract")]
    NotAnAddress(String),
}

/// A `G…` account or `C…` contract address.
fn strkey_address(text: &str) -> Result<ScAddress, BindingError> {
    if let Ok(key) = stellar_strkey::ed25519::PublicKey::from_string(text) {
        return Ok(ScAddress::Account(account_id(key.0)));
    }
    stellar_strkey::Contract::from_string(text)
        .map(|c| contract(c.0))
        .map_err(|_| BindingError::NotAnAddress(text.to_string()))
}

/// One write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attestation {
    /// The asset's token contract id.
    pub asset: [u8; 32],
    /// 0..=4.
    pub severity: u32,
    /// Mechanics bits.
    pub flags: u32,
    /// SHA-256 of the evidence.
    pub evidence_hash: [u8; 32],
    /// The code judged.
    pub code: CodeBinding,
}

/// What the registry holds for an asset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Safety {
    /// 0..=4.
    pub severity: u32,
    /// Mechanics bits.
    pub flags: u32,
    /// SHA-256 of the evidence.
    pub evidence_hash: [u8; 32],
    /// Ledger time of the write.
    pub attested_at: u64,
}

fn sym(s: &str) -> ScSymbol {
    ScSymbol(s.try_into().expect("short symbol"))
}

fn contract(id: [u8; 32]) -> ScAddress {
    ScAddress::Contract(ContractId(Hash(id)))
}

/// The account of an ed25519 public key.
pub fn account_id(public_key: [u8; 32]) -> AccountId {
    AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(public_key)))
}

/// An account address value.
pub fn account_val(public_key: [u8; 32]) -> ScVal {
    ScVal::Address(ScAddress::Account(account_id(public_key)))
}

/// A contract address value.
pub fn contract_val(id: [u8; 32]) -> ScVal {
    ScVal::Address(contract(id))
}

fn bytes32(b: [u8; 32]) -> ScVal {
    ScVal::Bytes(ScBytes(b.to_vec().try_into().expect("32 bytes")))
}

impl Attestation {
    /// The `#[contracttype]` struct encoding.
    pub fn to_scval(&self) -> ScVal {
        let entries = vec![
            ScMapEntry {
                key: ScVal::Symbol(sym("asset")),
                val: ScVal::Address(contract(self.asset)),
            },
            ScMapEntry {
                key: ScVal::Symbol(sym("code")),
                val: self.code.to_scval(),
            },
            ScMapEntry {
                key: ScVal::Symbol(sym("evidence_hash")),
                val: bytes32(self.evidence_hash),
            },
            ScMapEntry {
                key: ScVal::Symbol(sym("flags")),
                val: ScVal::U32(self.flags),
            },
            ScMapEntry {
                key: ScVal::Symbol(sym("severity")),
                val: ScVal::U32(self.severity),
            },
        ];
        ScVal::Map(Some(ScMap(entries.try_into().expect("5 entries"))))
    }
}

/// A contract call.
pub fn call(registry: [u8; 32], function: &str, args: Vec<ScVal>) -> HostFunction {
    HostFunction::InvokeContract(InvokeContractArgs {
        contract_address: contract(registry),
        function_name: sym(function),
        args: args.try_into().expect("few arguments"),
    })
}

/// `attest_many(attester, attestations)`.
pub fn attest_many(registry: [u8; 32], attester: [u8; 32], batch: &[Attestation]) -> HostFunction {
    let items: Vec<ScVal> = batch.iter().map(Attestation::to_scval).collect();
    call(
        registry,
        "attest_many",
        vec![
            account_val(attester),
            ScVal::Vec(Some(items.try_into().expect("batch fits"))),
        ],
    )
}

/// `revoke(attester, asset)`.
pub fn revoke(registry: [u8; 32], attester: [u8; 32], asset: [u8; 32]) -> HostFunction {
    call(
        registry,
        "revoke",
        vec![account_val(attester), ScVal::Address(contract(asset))],
    )
}

/// `get_safety(asset)`.
pub fn get_safety(registry: [u8; 32], asset: [u8; 32]) -> HostFunction {
    call(
        registry,
        "get_safety",
        vec![ScVal::Address(contract(asset))],
    )
}

/// `assess(asset, max_severity, forbidden_mask, max_age_secs)`.
pub fn assess(
    registry: [u8; 32],
    asset: [u8; 32],
    max_severity: u32,
    forbidden_mask: u32,
    max_age_secs: u64,
) -> HostFunction {
    call(
        registry,
        "assess",
        vec![
            ScVal::Address(contract(asset)),
            ScVal::U32(max_severity),
            ScVal::U32(forbidden_mask),
            ScVal::U64(max_age_secs),
        ],
    )
}

/// Whether an `Assessment` value is `CodeChanged`: a verdict that counts judged code that is no
/// longer live.
pub fn is_code_changed(assessment: &ScVal) -> bool {
    matches!(assessment, ScVal::Vec(Some(v))
        if v.first() == Some(&ScVal::Symbol(sym("CodeChanged"))))
}

/// Whether an `assess` answer admits the asset (`Safe(..)`).
pub fn is_safe_assessment(assessment: &ScVal) -> bool {
    matches!(assessment, ScVal::Vec(Some(v))
        if v.first() == Some(&ScVal::Symbol(sym("Safe"))))
}

/// An `assess` answer in a few words: its variant, and its field (`Safe`'s severity and flags).
pub fn describe_assessment(assessment: &ScVal) -> String {
    let ScVal::Vec(Some(v)) = assessment else {
        return format!("{assessment:?}");
    };
    let name = match v.first() {
        Some(ScVal::Symbol(s)) => String::from_utf8_lossy(s.as_slice()).into_owned(),
        _ => return format!("{assessment:?}"),
    };
    match v.get(1) {
        None => name,
        Some(field @ ScVal::Map(_)) => match decode_safety(field) {
            Ok(Some(s)) => format!("{name}(severity {}, flags {})", s.severity, s.flags),
            _ => format!("{name}({field:?})"),
        },
        Some(ScVal::U32(n)) => format!("{name}({n})"),
        Some(ScVal::U64(n)) => format!("{name}({n})"),
        Some(field) => format!("{name}({field:?})"),
    }
}

/// `get_safety_by(asset, attester)`: one attester's own verdict.
pub fn get_safety_by(registry: [u8; 32], asset: [u8; 32], attester: [u8; 32]) -> HostFunction {
    call(
        registry,
        "get_safety_by",
        vec![ScVal::Address(contract(asset)), account_val(attester)],
    )
}

/// `is_safe_quorum(asset, attesters, threshold, max_severity, max_age_secs)`.
pub fn is_safe_quorum(
    registry: [u8; 32],
    asset: [u8; 32],
    attesters: &[[u8; 32]],
    threshold: u32,
    max_severity: u32,
    max_age_secs: u64,
) -> HostFunction {
    let list: Vec<ScVal> = attesters.iter().map(|a| account_val(*a)).collect();
    call(
        registry,
        "is_safe_quorum",
        vec![
            ScVal::Address(contract(asset)),
            ScVal::Vec(Some(list.try_into().expect("a short list"))),
            ScVal::U32(threshold),
            ScVal::U32(max_severity),
            ScVal::U64(max_age_secs),
        ],
    )
}

/// The shortest notice a registry takes without the constructor's explicit consent (one hour).
pub const MIN_NOTICE_SECS: u64 = 3_600;

/// The registry's constructor arguments: `(admin, upgrade_delay_secs, allow_instant_upgrade)`.
/// A notice below [`MIN_NOTICE_SECS`] (0 on a local network) is passed as explicitly allowed.
pub fn constructor_args(admin: [u8; 32], upgrade_delay_secs: u64) -> Vec<ScVal> {
    vec![
        account_val(admin),
        ScVal::U64(upgrade_delay_secs),
        ScVal::Bool(upgrade_delay_secs < MIN_NOTICE_SECS),
    ]
}

/// Decodes `Option<Safety>`.
pub fn decode_safety(v: &ScVal) -> Result<Option<Safety>, crate::AttestError> {
    let map = match v {
        ScVal::Void => return Ok(None),
        ScVal::Map(Some(m)) => m,
        other => {
            return Err(crate::AttestError::Chain(format!(
                "get_safety returned {other:?}, expected a Safety map or void"
            )))
        }
    };
    let field = |name: &str| {
        map.iter()
            .find(|e| e.key == ScVal::Symbol(sym(name)))
            .map(|e| &e.val)
    };
    let severity = match field("severity") {
        Some(ScVal::U32(n)) => *n,
        _ => return Err(crate::AttestError::Chain("Safety.severity missing".into())),
    };
    let flags = match field("flags") {
        Some(ScVal::U32(n)) => *n,
        _ => return Err(crate::AttestError::Chain("Safety.flags missing".into())),
    };
    let attested_at = match field("attested_at") {
        Some(ScVal::U64(n)) => *n,
        _ => {
            return Err(crate::AttestError::Chain(
                "Safety.attested_at missing".into(),
            ))
        }
    };
    let evidence_hash: [u8; 32] = match field("evidence_hash") {
        Some(ScVal::Bytes(b)) => b.as_slice().try_into().map_err(|_| {
            crate::AttestError::Chain("Safety.evidence_hash is not 32 bytes".into())
        })?,
        _ => {
            return Err(crate::AttestError::Chain(
                "Safety.evidence_hash missing".into(),
            ))
        }
    };
    Ok(Some(Safety {
        severity,
        flags,
        evidence_hash,
        attested_at,
    }))
}

/// `attester`'s record in the registry's storage value for one asset (interface 5: a vector of
/// records, each a map with `admission`, `attested_at`, `attester`, `code`, `evidence_hash`, `flags`,
/// `severity`), as the `Safety` it holds; `None` without one.
pub fn record_of(
    stored: &ScVal,
    attester: &ScAddress,
) -> Result<Option<Safety>, crate::AttestError> {
    let ScVal::Vec(Some(records)) = stored else {
        return Err(crate::AttestError::Chain(format!(
            "the registry's verdicts of an asset are {stored:?}, expected a vector of records"
        )));
    };
    for record in records.iter() {
        let ScVal::Map(Some(map)) = record else {
            return Err(crate::AttestError::Chain(format!(
                "a stored verdict is {record:?}, expected a record map"
            )));
        };
        let field = |name: &str| {
            map.iter()
                .find(|e| e.key == ScVal::Symbol(sym(name)))
                .map(|e| &e.val)
        };
        if field("attester") != Some(&ScVal::Address(attester.clone())) {
            continue;
        }
        return decode_safety(record);
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safety_round_trip_shape() {
        assert_eq!(decode_safety(&ScVal::Void), Ok(None));
        let a = Attestation {
            asset: [1; 32],
            severity: 3,
            flags: 6,
            evidence_hash: [9; 32],
            code: CodeBinding::Wasm([5; 32]),
        };
        let ScVal::Map(Some(m)) = a.to_scval() else {
            panic!()
        };
        let keys: Vec<String> = m.iter().map(|e| format!("{:?}", e.key)).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted, "contracttype maps are key-sorted");
        let mut entries: Vec<ScMapEntry> = m.0.to_vec();
        entries.retain(|e| {
            e.key != ScVal::Symbol(sym("asset")) && e.key != ScVal::Symbol(sym("code"))
        });
        entries.insert(
            0,
            ScMapEntry {
                key: ScVal::Symbol(sym("attested_at")),
                val: ScVal::U64(7),
            },
        );
        let s = decode_safety(&ScVal::Map(Some(ScMap(entries.try_into().unwrap()))))
            .unwrap()
            .unwrap();
        assert_eq!(
            (s.severity, s.flags, s.evidence_hash, s.attested_at),
            (3, 6, [9; 32], 7)
        );
        assert!(decode_safety(&ScVal::U32(1)).is_err());
    }

    /// This crate speaks the registry's ABI without linking it; any drift between its copy (batch
    /// cap, notice, error codes) or the core's mechanics bits and the interface crate fails here.
    #[test]
    fn constants_error_codes_and_bits_match_the_registry_interface() {
        use assay_core::{Mechanics, Severity};
        use assay_registry_interface as abi;

        assert_eq!(MAX_BATCH_SIZE, abi::MAX_BATCH_SIZE as usize);
        assert_eq!(MIN_NOTICE_SECS, abi::MIN_NOTICE_SECS);

        // Every code the registry defines is explained under its own name, and no other is.
        for code in 1..=64u32 {
            let defined = abi::Error::try_from(soroban_sdk::Error::from_contract_error(code));
            let explained = registry_error(code);
            match defined {
                Ok(error) => assert!(
                    explained.starts_with(&format!("{error:?}")),
                    "code {code}: the registry says {error:?}, the attester {explained:?}"
                ),
                Err(_) => assert_eq!(explained, "unknown registry error", "code {code}"),
            }
        }

        // Each mechanics bit the core names is the registry's bit of that name.
        let registry_bits = [
            ("auth_required", abi::MECH_AUTH_REQUIRED),
            ("auth_revocable", abi::MECH_AUTH_REVOCABLE),
            ("auth_clawback_enabled", abi::MECH_AUTH_CLAWBACK_ENABLED),
            ("auth_immutable", abi::MECH_AUTH_IMMUTABLE),
            ("domain_unverified", abi::MECH_DOMAIN_UNVERIFIED),
            ("blocklisted", abi::MECH_BLOCKLISTED),
            (
                "trustline_clawback_enabled",
                abi::MECH_TRUSTLINE_CLAWBACK_ENABLED,
            ),
            ("trustline_deauthorized", abi::MECH_TRUSTLINE_DEAUTHORIZED),
            ("sep41_violation", abi::MECH_SEP41_VIOLATION),
            ("code_mutable", abi::MECH_CODE_MUTABLE),
            ("admin_clawback", abi::MECH_ADMIN_CLAWBACK),
            ("admin_freeze", abi::MECH_ADMIN_FREEZE),
            ("admin_mint", abi::MECH_ADMIN_MINT),
            ("admin_unclassified", abi::MECH_ADMIN_UNCLASSIFIED),
            ("admin_transfer_fee", abi::MECH_ADMIN_TRANSFER_FEE),
        ];
        for (bit, name) in Mechanics::NAMES {
            let registry = registry_bits.iter().find(|(n, _)| *n == name);
            assert_eq!(
                registry.map(|(_, b)| *b),
                Some(bit),
                "{name}: the core's bit and the registry's differ"
            );
        }
        assert_eq!(
            registry_bits.iter().fold(0, |all, (_, b)| all | b),
            abi::KNOWN_FLAGS_MASK,
            "a registry bit is missing from this table"
        );
        // The core never sets a bit the registry refuses, and knows every bit the registry does.
        assert_eq!(Mechanics::KNOWN_MASK, abi::KNOWN_FLAGS_MASK);
        assert_eq!(Mechanics::CONTRACT_MASK, abi::CONTRACT_MASK);
        assert_eq!(Mechanics::CAPABILITY_MASK, abi::CAPABILITY_MASK);

        // The severity a bit implies is the lowest the registry accepts it at (sep41_violation
        // accompanies critical only, which the core's escalation sets).
        let lowest_accepted = |bit: u32| (0..=4u32).find(|s| abi::validate(*s, bit).is_ok());
        for (bit, name) in Mechanics::NAMES {
            let floor = Mechanics::from_bits(bit).unwrap().floor() as u32;
            let expected = if bit == Mechanics::SEP41_VIOLATION {
                Severity::Critical as u32
            } else {
                floor
            };
            assert_eq!(lowest_accepted(bit), Some(expected), "{name}");
        }
    }
}
