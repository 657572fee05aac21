//! Property tests: over random verdicts, ages and policies, a read never says "safe" where a
//! stricter read says "unsafe", never says "safe" without an attestation, and never says "safe" for
//! a critical entry through any read.
extern crate std;

use proptest::prelude::*;
use soroban_sdk::{testutils::Address as _, testutils::Ledger as _, Address, BytesN};

use super::Setup;
use crate::testutils::{live_code, new_token, Build};

/// A policy's age window as an upper bound in seconds. 0 admits nothing, so it is the strictest
/// window: it used to turn the check off (interface 4 and earlier).
fn window(max_age_secs: u64) -> u64 {
    max_age_secs
}

fn check(build: Build, severity: u32, flags: u32, age: u64, queries: &[(u32, u32, u64)]) {
    let s = Setup::new(build);
    let c = s.client();
    let asset = new_token(&s.env);
    let never = Address::generate(&s.env);
    let hash = BytesN::from_array(&s.env, &[3; 32]);
    let written = c
        .try_attest(
            &s.attester,
            &asset,
            &severity,
            &flags,
            &hash,
            &live_code(&asset),
        )
        .is_ok();
    let t0 = s.env.ledger().timestamp();
    s.env.ledger().set_timestamp(t0 + age);

    let mut answers = std::vec::Vec::new();
    for &(max_severity, mask, max_age) in queries {
        let safe = c.is_safe(&asset, &max_severity, &max_age);
        let masked = c.is_safe_masked(&asset, &mask, &max_age);
        // Never true without an attestation.
        assert!(!c.is_safe(&never, &max_severity, &max_age));
        assert!(!c.is_safe_masked(&never, &mask, &max_age));
        if !written {
            assert!(!safe && !masked, "a refused write must read as unsafe");
        }
        if max_age == 0 {
            assert!(!safe && !masked, "a zero window admitted a verdict");
        }
        if severity >= crate::SEVERITY_CRITICAL {
            assert!(
                !safe && !masked,
                "critical read as safe: ({max_severity}, {mask:#x}, {max_age})"
            );
        }
        answers.push((max_severity, mask, max_age, safe, masked));
    }
    // Monotonicity: whenever a stricter call says true, every looser call says true.
    for &(sev_a, mask_a, age_a, safe_a, masked_a) in &answers {
        for &(sev_b, mask_b, age_b, safe_b, masked_b) in &answers {
            let age_stricter = window(age_a) <= window(age_b);
            if safe_a && sev_a <= sev_b && age_stricter {
                assert!(
                    safe_b,
                    "is_safe({sev_a},{age_a}) but not is_safe({sev_b},{age_b})"
                );
            }
            if masked_a && mask_a & mask_b == mask_b && age_stricter {
                assert!(
                    masked_b,
                    "is_safe_masked({mask_a:#x},{age_a}) but not ({mask_b:#x},{age_b})"
                );
            }
        }
    }
    // After a revocation nothing is safe.
    if written {
        c.revoke(&s.attester, &asset);
        for &(max_severity, mask, max_age) in queries {
            assert!(!c.is_safe(&asset, &max_severity, &max_age));
            assert!(!c.is_safe_masked(&asset, &mask, &max_age));
        }
    }
}

fn query() -> impl Strategy<Value = (u32, u32, u64)> {
    (
        prop_oneof![0u32..=5, any::<u32>()],
        prop_oneof![0u32..=crate::KNOWN_FLAGS_MASK, any::<u32>()],
        prop_oneof![Just(0u64), 0u64..200_000, any::<u64>()],
    )
}

fn verdict() -> impl Strategy<Value = (u32, u32, u64)> {
    (
        prop_oneof![0u32..=4, any::<u32>()],
        prop_oneof![0u32..=crate::KNOWN_FLAGS_MASK, any::<u32>()],
        prop_oneof![0u64..200_000, Just(86_400u64), Just(86_401u64)],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn reads_are_monotone_and_fail_closed_native(
        (severity, flags, age) in verdict(),
        queries in proptest::collection::vec(query(), 1..8),
    ) {
        check(Build::Native, severity, flags, age, &queries);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn reads_are_monotone_and_fail_closed_wasm(
        (severity, flags, age) in verdict(),
        queries in proptest::collection::vec(query(), 1..8),
    ) {
        check(Build::Wasm, severity, flags, age, &queries);
    }
}

/// A critical entry, whatever its bits and age, reads as unsafe through every boolean read, and
/// `get_safety` hands it back unchanged for callers that judge it themselves.
fn check_critical(build: Build, flags: u32, age: u64, queries: &[(u32, u32, u64)]) {
    let s = Setup::new(build);
    let c = s.client();
    let asset = new_token(&s.env);
    let hash = BytesN::from_array(&s.env, &[4; 32]);
    c.attest(
        &s.attester,
        &asset,
        &crate::SEVERITY_CRITICAL,
        &flags,
        &hash,
        &live_code(&asset),
    );
    let t0 = s.env.ledger().timestamp();
    s.env.ledger().set_timestamp(t0 + age);
    for &(max_severity, mask, max_age) in queries {
        assert!(
            !c.is_safe(&asset, &max_severity, &max_age),
            "is_safe({max_severity}, {max_age}) admitted critical flags {flags:#x}"
        );
        assert!(
            !c.is_safe_masked(&asset, &mask, &max_age),
            "is_safe_masked({mask:#x}, {max_age}) admitted critical flags {flags:#x}"
        );
    }
    assert_eq!(
        c.get_safety(&asset).unwrap().severity,
        crate::SEVERITY_CRITICAL
    );
}

/// Every query a caller could make, the loosest ones (ceiling 4 or more, mask 0, no age limit)
/// weighted up.
fn loose_query() -> impl Strategy<Value = (u32, u32, u64)> {
    (
        prop_oneof![Just(4u32), Just(u32::MAX), 0u32..=5, any::<u32>()],
        prop_oneof![Just(0u32), 0u32..512, any::<u32>()],
        prop_oneof![Just(0u64), Just(u64::MAX), any::<u64>()],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn item4_no_read_answers_safe_for_a_critical_entry_native(
        flags in 0u32..512,
        age in prop_oneof![Just(0u64), 0u64..200_000],
        queries in proptest::collection::vec(loose_query(), 1..8),
    ) {
        check_critical(Build::Native, flags, age, &queries);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn item4_no_read_answers_safe_for_a_critical_entry_wasm(
        flags in 0u32..512,
        age in prop_oneof![Just(0u64), 0u64..200_000],
        queries in proptest::collection::vec(loose_query(), 1..8),
    ) {
        check_critical(Build::Wasm, flags, age, &queries);
    }
}

/// With one attester, `is_safe_quorum` over it with threshold 1 answers what `is_safe` answers,
/// whatever the verdict (or refused write), its age and the policy.
fn check_quorum_of_one(
    build: Build,
    (severity, flags, age): (u32, u32, u64),
    queries: &[(u32, u32, u64)],
) {
    let s = Setup::new(build);
    let c = s.client();
    let asset = new_token(&s.env);
    let hash = BytesN::from_array(&s.env, &[5; 32]);
    let _ = c.try_attest(
        &s.attester,
        &asset,
        &severity,
        &flags,
        &hash,
        &live_code(&asset),
    );
    let t0 = s.env.ledger().timestamp();
    s.env.ledger().set_timestamp(t0 + age);
    let one = soroban_sdk::vec![&s.env, s.attester.clone()];
    for &(max_severity, _, max_age) in queries {
        assert_eq!(
            c.is_safe_quorum(&asset, &one, &1, &max_severity, &max_age),
            c.is_safe(&asset, &max_severity, &max_age),
            "({severity}, {flags:#x}, age {age}) under ({max_severity}, {max_age})"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn quorum_of_one_equals_is_safe_native(
        v in verdict(),
        queries in proptest::collection::vec(query(), 1..8),
    ) {
        check_quorum_of_one(Build::Native, v, &queries);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn quorum_of_one_equals_is_safe_wasm(
        v in verdict(),
        queries in proptest::collection::vec(query(), 1..8),
    ) {
        check_quorum_of_one(Build::Wasm, v, &queries);
    }
}

/// An asset nobody attested reads as "no" through every read, whatever the policy, whichever
/// attesters are listed (admitted ones with verdicts on other assets included) and whatever
/// threshold.
fn check_unattested(
    build: Build,
    (severity, flags): (u32, u32),
    queries: &[(u32, u32, u64)],
    listed: usize,
    threshold: u32,
) {
    let s = Setup::new(build);
    let c = s.client();
    let other = Address::generate(&s.env);
    let never = Address::generate(&s.env);
    let hash = BytesN::from_array(&s.env, &[6; 32]);
    let mut list = soroban_sdk::Vec::new(&s.env);
    for i in 0..listed {
        let attester = if i == 0 {
            s.attester.clone()
        } else {
            Address::generate(&s.env)
        };
        if i > 0 && i % 2 == 0 {
            c.add_attester(&attester);
        }
        let _ = c.try_attest(
            &attester,
            &other,
            &severity,
            &flags,
            &hash,
            &live_code(&other),
        );
        list.push_back(attester);
    }
    for &(max_severity, mask, max_age) in queries {
        assert!(!c.is_safe(&never, &max_severity, &max_age));
        assert!(!c.is_safe_masked(&never, &mask, &max_age));
        assert!(!c.is_safe_quorum(&never, &list, &threshold, &max_severity, &max_age));
        assert_eq!(
            c.assess(&never, &max_severity, &mask, &max_age),
            crate::Assessment::NotAttested
        );
    }
    assert_eq!(c.get_safety(&never), None);
    for attester in list.iter() {
        assert_eq!(c.get_safety_by(&never, &attester), None);
    }
}

fn attestable() -> impl Strategy<Value = (u32, u32)> {
    (
        0u32..=4,
        prop_oneof![Just(0u32), 0u32..=crate::KNOWN_FLAGS_MASK],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn no_read_is_true_for_an_unattested_asset_native(
        v in attestable(),
        queries in proptest::collection::vec(loose_query(), 1..6),
        listed in 1usize..=10,
        threshold in 0u32..=3,
    ) {
        check_unattested(Build::Native, v, &queries, listed, threshold);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn no_read_is_true_for_an_unattested_asset_wasm(
        v in attestable(),
        queries in proptest::collection::vec(loose_query(), 1..6),
        listed in 1usize..=10,
        threshold in 0u32..=3,
    ) {
        check_unattested(Build::Wasm, v, &queries, listed, threshold);
    }
}

/// Each published policy mask, with the bits it must refuse (item 6 of issue #27: every bit of its
/// class, the contract-token bits included).
const POLICY_MASKS: [(u32, &[u32]); 3] = [
    (
        crate::CONFISCATION_MASK,
        &[
            crate::MECH_AUTH_CLAWBACK_ENABLED,
            crate::MECH_ADMIN_CLAWBACK,
        ],
    ),
    (
        crate::POLICY_MASK_CONFISCATION_ONLY,
        &[
            crate::MECH_AUTH_CLAWBACK_ENABLED,
            crate::MECH_ADMIN_CLAWBACK,
            crate::MECH_CODE_MUTABLE,
            crate::MECH_ADMIN_TRANSFER_FEE,
        ],
    ),
    (
        crate::POLICY_MASK_FREEZE_INCLUSIVE,
        &[
            crate::MECH_AUTH_CLAWBACK_ENABLED,
            crate::MECH_ADMIN_CLAWBACK,
            crate::MECH_CODE_MUTABLE,
            crate::MECH_AUTH_REVOCABLE,
            crate::MECH_ADMIN_FREEZE,
            crate::MECH_ADMIN_TRANSFER_FEE,
        ],
    ),
];

#[test]
fn each_policy_mask_names_every_bit_of_its_class() {
    for (mask, bits) in POLICY_MASKS {
        for bit in bits {
            assert_eq!(mask & bit, *bit, "mask {mask:#x} leaves out bit {bit:#x}");
        }
    }
}

/// A high (not critical) verdict carrying `flags`, read through `mask`.
fn masked_answer(build: Build, flags: u32, mask: u32) -> bool {
    let s = Setup::new(build);
    let c = s.client();
    let asset = new_token(&s.env);
    let hash = BytesN::from_array(&s.env, &[4; 32]);
    c.attest(&s.attester, &asset, &3, &flags, &hash, &live_code(&asset));
    c.is_safe_masked(&asset, &mask, &super::ANY_AGE)
}

/// Flags a high verdict may carry (every known bit but `sep41_violation`, which needs critical).
fn high_flags() -> impl Strategy<Value = u32> {
    (0u32..=crate::KNOWN_FLAGS_MASK).prop_map(|f| f & !crate::MECH_SEP41_VIOLATION)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn each_policy_mask_refuses_every_bit_it_names(flags in high_flags(), which in 0usize..3) {
        let (mask, _) = POLICY_MASKS[which];
        for build in [Build::Native, Build::Wasm] {
            let admitted = masked_answer(build, flags, mask);
            prop_assert_eq!(admitted, flags & mask == 0, "flags {:#x} mask {:#x} {:?}", flags, mask, build);
        }
    }
}
