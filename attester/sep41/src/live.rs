//! Live runs, shared by `assay sep41` and `assay attest --sep41`: the parties' keys (environment
//! variables or stellar-cli identities, never argv), the consent gate for networks that hold real
//! value, and the run itself against a contract reached over stellar-rpc.
use std::collections::BTreeSet;

use assay_chain::{
    parse_address, strkey_of, tx::ContractCode, NetworkClient, Signer, FUTURENET_PASSPHRASE,
    STANDALONE_PASSPHRASE, TESTNET_PASSPHRASE,
};
use stellar_xdr::ScAddress;

use crate::{run_suite, spec::ContractSpec, Party, Report, RpcChain, SuiteConfig};

/// Env var holding the holder's secret key (S…).
pub const OWNER_SECRET_VAR: &str = "ASSAY_OWNER_SECRET";
/// Env var holding the spender's secret key (S…).
pub const SPENDER_SECRET_VAR: &str = "ASSAY_SPENDER_SECRET";

/// Why a live run did not start. Never carries key material.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveError {
    /// The operator's input is wrong (a malformed key or address, a wrong network): fix and rerun.
    Usage(String),
    /// The run could not start (consent refused, no contract, network unreachable).
    Incomplete(String),
}

impl std::fmt::Display for LiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LiveError::Usage(m) | LiveError::Incomplete(m) => f.write_str(m),
        }
    }
}

/// How one party was named on the command line or in a config file. Never a secret: keys come from
/// `identity` (a stellar-cli identity name) or the party's environment variable.
#[derive(Debug, Clone, Default)]
pub struct PartyInput {
    /// The party's address (G…), when given without a key.
    pub address: Option<String>,
    /// A stellar-cli identity holding the party's secret key.
    pub identity: Option<String>,
}

/// Both parties as given.
#[derive(Debug, Clone, Default)]
pub struct PartiesInput {
    /// The holder (`--owner`, `--owner-identity`, ASSAY_OWNER_SECRET).
    pub owner: PartyInput,
    /// The spender (`--spender`, `--spender-identity`, ASSAY_SPENDER_SECRET).
    pub spender: PartyInput,
}

/// Both parties resolved, with whichever keys the operator provided.
#[derive(Debug, Clone)]
pub struct Parties {
    pub holder: Party,
    pub holder_key: Option<Signer>,
    pub spender: Party,
    pub spender_key: Option<Signer>,
}

impl Parties {
    /// The run can sign writes (and so move units and spend fees).
    pub fn writes(&self) -> bool {
        self.holder_key.is_some() || self.spender_key.is_some()
    }
}

/// Resolves both parties: keys from the identity or the environment variable, addresses from the key,
/// the given address, or a generated throwaway (whose checks then report UNVERIFIABLE).
pub fn resolve_parties(input: &PartiesInput) -> Result<Parties, LiveError> {
    let (holder, holder_key) = resolve_party("holder", &input.owner, OWNER_SECRET_VAR, "owner")?;
    let (spender, spender_key) =
        resolve_party("spender", &input.spender, SPENDER_SECRET_VAR, "spender")?;
    Ok(Parties {
        holder,
        holder_key,
        spender,
        spender_key,
    })
}

fn resolve_party(
    role: &str,
    input: &PartyInput,
    env_var: &str,
    flag_name: &str,
) -> Result<(Party, Option<Signer>), LiveError> {
    let usage = |m: String| LiveError::Usage(m);
    let secret = match &input.identity {
        Some(name) => Some(Signer::from_identity(name).map_err(|e| usage(e.to_string()))?),
        None => Signer::from_env(env_var).map_err(|e| usage(e.to_string()))?,
    };
    let given = match &input.address {
        Some(text) => {
            let address = parse_address(text).map_err(|e| usage(format!("--{flag_name}: {e}")))?;
            if !matches!(address, ScAddress::Account(_)) {
                return Err(usage(format!(
                    "--{flag_name}: the {role} must be an account (G…)"
                )));
            }
            Some(address)
        }
        None => None,
    };
    if let (Some(secret), Some(address)) = (&secret, &given) {
        if secret.sc_address() != *address {
            return Err(usage(format!(
                "the {role}'s secret key is for {}, but --{flag_name} is {}",
                secret.address(),
                strkey_of(address)
            )));
        }
    }
    let (address, generated) = match (&secret, given) {
        (Some(s), _) => (s.sc_address(), false),
        (None, Some(a)) => (a, false),
        (None, None) => (Signer::generate().sc_address(), true),
    };
    let party = Party {
        address,
        generated,
        can_sign: secret.is_some(),
        key_hint: format!("set {env_var} or --{flag_name}-identity NAME"),
        address_hint: format!("set --{flag_name} G… (or its secret key)"),
    };
    Ok((party, secret))
}

/// Testnet, futurenet or a standalone (local) network: units there carry no value.
pub fn is_test_network(passphrase: &str) -> bool {
    [
        TESTNET_PASSPHRASE,
        FUTURENET_PASSPHRASE,
        STANDALONE_PASSPHRASE,
    ]
    .contains(&passphrase)
}

/// The consent gate: a run that can sign writes on a network other than testnet, futurenet or a
/// standalone one needs the operator's explicit consent, because the checks move real units and spend
/// fees.
pub fn consent(passphrase: &str, parties: &Parties, allowed: bool) -> Result<(), LiveError> {
    if parties.writes() && !is_test_network(passphrase) && !allowed {
        return Err(LiveError::Incomplete(format!(
            "refusing to write on a network that is not testnet, futurenet or standalone \
             (passphrase {passphrase:?}): the checks move real units and spend fees. Pass \
             --allow-non-testnet-write to consent, or unset the secret keys for a read-only run"
        )));
    }
    Ok(())
}

/// Runs the sixteen checks against `contract` (`C…`) over stellar-rpc at `rpc_url`. The consent gate is
/// the caller's ([`consent`]); this checks that the server serves `passphrase` and that a contract is
/// there, then runs the suite.
pub fn run_live(
    rpc_url: &str,
    passphrase: &str,
    contract: &ScAddress,
    parties: &Parties,
) -> Result<Report, LiveError> {
    let contract_text = strkey_of(contract);
    if !matches!(contract, ScAddress::Contract(_)) {
        return Err(LiveError::Usage(format!(
            "{contract_text} is not a contract address (C…)"
        )));
    }
    let network = NetworkClient::new(rpc_url, passphrase);
    match network.rpc.get_network() {
        Ok(info) if info.passphrase != passphrase => {
            return Err(LiveError::Usage(format!(
                "the RPC server at {} serves {:?}, not {passphrase:?}; fix --rpc-url or --network-passphrase",
                assay_core::redact::origin(rpc_url),
                info.passphrase
            )))
        }
        Ok(_) => {}
        Err(e) => return Err(LiveError::Incomplete(format!("cannot prepare run: {e}"))),
    }
    let (declared, _) = contract_members(&network, contract, &assay_core::redact::origin(rpc_url))?;
    let read_source = match &parties.holder.address {
        ScAddress::Account(a) => a.clone(),
        _ => unreachable!("parties are accounts"),
    };
    let config = SuiteConfig::live(parties.holder.clone(), parties.spender.clone(), declared);
    let mut chain = RpcChain {
        network: &network,
        contract: contract.clone(),
        read_source,
        holder: parties.holder_key.clone(),
        spender: parties.spender_key.clone(),
        fork_holder: None,
    };
    let results = run_suite(&mut chain, &config);
    Ok(Report {
        contract_id: contract_text,
        network: assay_core::redact::origin(rpc_url),
        ran_at: assay_core::Timestamp::now().to_string(),
        results,
        fork: None,
    })
}

/// The functions the contract's spec declares (`None` for a Stellar Asset Contract, which has
/// no spec and is called blind) and whether it is a Stellar Asset Contract. Errors when no live
/// contract is there (`place` names the network in that message).
pub fn contract_members(
    network: &NetworkClient,
    contract: &ScAddress,
    place: &str,
) -> Result<(Option<BTreeSet<String>>, bool), LiveError> {
    let contract_text = strkey_of(contract);
    match network.contract_code(contract) {
        Ok(ContractCode::Wasm(wasm)) => Ok((
            ContractSpec::from_wasm(&wasm, &contract_text)
                .ok()
                .map(|s| s.sep41_declared()),
            false,
        )),
        Ok(ContractCode::StellarAsset) => Ok((None, true)),
        // The host resolves the reference; its spec is the owner's to publish.
        Ok(ContractCode::ExternalRef(_)) => Ok((None, false)),
        Ok(ContractCode::Missing) => Err(LiveError::Incomplete(format!(
            "no contract found at {contract_text} on {place} (for a classic asset, deploy its Stellar \
             Asset Contract first: `stellar contract asset deploy`)"
        ))),
        Ok(ContractCode::Archived) => Err(LiveError::Incomplete(format!(
            "the contract at {contract_text} is archived; restore it first"
        ))),
        Err(e) => Err(LiveError::Incomplete(format!("cannot prepare run: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parties(with_key: bool) -> Parties {
        let key = Signer::from_bytes([7; 32]);
        let party = Party {
            address: key.sc_address(),
            generated: false,
            can_sign: with_key,
            key_hint: String::new(),
            address_hint: String::new(),
        };
        Parties {
            holder: party.clone(),
            holder_key: with_key.then(|| key.clone()),
            spender: party,
            spender_key: None,
        }
    }

    #[test]
    fn consent_gate_applies_only_to_writes_off_test_networks() {
        let mainnet = assay_chain::PUBNET_PASSPHRASE;
        assert!(matches!(
            consent(mainnet, &parties(true), false),
            Err(LiveError::Incomplete(m)) if m.contains("--allow-non-testnet-write")
        ));
        assert_eq!(consent(mainnet, &parties(true), true), Ok(()));
        assert_eq!(consent(mainnet, &parties(false), false), Ok(()));
        for test in [
            TESTNET_PASSPHRASE,
            FUTURENET_PASSPHRASE,
            STANDALONE_PASSPHRASE,
        ] {
            assert_eq!(consent(test, &parties(true), false), Ok(()));
        }
    }

    #[test]
    fn a_key_and_a_different_address_are_refused() {
        let input = PartiesInput {
            owner: PartyInput {
                address: Some("GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA".into()),
                identity: Some("no-such-identity-for-this-test".into()),
            },
            spender: PartyInput::default(),
        };
        // The identity does not exist: a usage error that names it, not a panic.
        match resolve_parties(&input) {
            Err(LiveError::Usage(m)) => {
                assert!(m.contains("no-such-identity-for-this-test"), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }
}
