//! What a simulation showed, in a form a reader can check by eye: authorization trees and events,
//! with the run's parties named (`holder`, `spender`, `token`) instead of strkeys.
use assay_chain::strkey_of;
use stellar_xdr::{
    ContractEvent, ContractEventBody, ContractId, ScAddress, ScVal, SorobanAuthorizationEntry,
    SorobanAuthorizedFunction, SorobanAuthorizedInvocation, SorobanCredentials,
};

/// The addresses a run knows by role.
pub struct Names {
    known: Vec<(ScAddress, &'static str)>,
    /// Who the transaction's source account is, when a party signs as it.
    source: Option<&'static str>,
}

impl Names {
    pub fn new(known: Vec<(ScAddress, &'static str)>) -> Self {
        Names {
            known,
            source: None,
        }
    }

    /// Also names `address` as `name` (after the names already known).
    pub fn with(mut self, address: ScAddress, name: &'static str) -> Self {
        self.known.push((address, name));
        self
    }

    /// Names source-account credentials as `party` (the signer of a write is its source).
    pub fn with_source(self, party: &'static str) -> Self {
        Names {
            source: Some(party),
            ..self
        }
    }

    /// The role's name, or the strkey shortened to its first and last four characters.
    pub fn address(&self, address: &ScAddress) -> String {
        if let Some((_, name)) = self.known.iter().find(|(a, _)| a == address) {
            return (*name).to_string();
        }
        let full = strkey_of(address);
        if full.len() > 12 {
            format!("{}…{}", &full[..4], &full[full.len() - 4..])
        } else {
            full
        }
    }

    fn contract(&self, id: &Option<ContractId>) -> String {
        match id {
            Some(id) => self.address(&ScAddress::Contract(id.clone())),
            None => "(no contract)".into(),
        }
    }

    /// A contract value: numbers as numbers, symbols bare, strings quoted, addresses by name.
    pub fn value(&self, v: &ScVal) -> String {
        match v {
            ScVal::Bool(b) => b.to_string(),
            ScVal::Void => "void".into(),
            ScVal::U32(n) => n.to_string(),
            ScVal::I32(n) => n.to_string(),
            ScVal::U64(n) => n.to_string(),
            ScVal::I64(n) => n.to_string(),
            ScVal::I128(p) => ((i128::from(p.hi) << 64) | i128::from(p.lo)).to_string(),
            ScVal::U128(p) => ((u128::from(p.hi) << 64) | u128::from(p.lo)).to_string(),
            ScVal::Symbol(s) => String::from_utf8_lossy(s.as_slice()).into_owned(),
            ScVal::String(s) => format!("{:?}", String::from_utf8_lossy(s.as_slice())),
            ScVal::Address(a) => self.address(a),
            ScVal::Bytes(b) => format!("0x{}", hex::encode(b.as_slice())),
            ScVal::Vec(Some(items)) => format!("[{}]", self.list(items)),
            ScVal::Map(Some(entries)) => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|e| format!("{}: {}", self.value(&e.key), self.value(&e.val)))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            other => format!("({:?})", other.discriminant()).to_lowercase(),
        }
    }

    fn list(&self, items: &[ScVal]) -> String {
        let parts: Vec<String> = items.iter().map(|v| self.value(v)).collect();
        parts.join(", ")
    }

    /// Whose authorization an entry carries.
    pub fn signer(&self, entry: &SorobanAuthorizationEntry) -> String {
        match &entry.credentials {
            SorobanCredentials::SourceAccount => match self.source {
                Some(party) => party.into(),
                None => "the transaction's source account".into(),
            },
            SorobanCredentials::Address(c) | SorobanCredentials::AddressV2(c) => {
                self.address(&c.address)
            }
            SorobanCredentials::AddressWithDelegates(c) => {
                format!(
                    "{} (with delegates)",
                    self.address(&c.address_credentials.address)
                )
            }
        }
    }

    fn function(&self, f: &SorobanAuthorizedFunction) -> String {
        match f {
            SorobanAuthorizedFunction::ContractFn(call) => format!(
                "{}.{}({})",
                self.address(&call.contract_address),
                String::from_utf8_lossy(call.function_name.0.as_slice()),
                self.list(&call.args)
            ),
            SorobanAuthorizedFunction::CreateContractHostFn(_)
            | SorobanAuthorizedFunction::CreateContractV2HostFn(_) => "create a contract".into(),
        }
    }

    /// One entry as lines: `holder authorizes token.transfer(holder, spender, 1)`, then one
    /// indented `⤷` line per nested invocation.
    pub fn authorization(&self, entry: &SorobanAuthorizationEntry) -> Vec<String> {
        let mut lines = vec![format!(
            "{} authorizes {}",
            self.signer(entry),
            self.function(&entry.root_invocation.function)
        )];
        self.nested(&entry.root_invocation, 1, &mut lines);
        lines
    }

    fn nested(&self, at: &SorobanAuthorizedInvocation, depth: usize, lines: &mut Vec<String>) {
        for sub in at.sub_invocations.iter() {
            lines.push(format!(
                "{}⤷ {}",
                "  ".repeat(depth),
                self.function(&sub.function)
            ));
            self.nested(sub, depth + 1, lines);
        }
    }

    /// Every entry's lines, in order.
    pub fn authorizations(&self, auth: &[SorobanAuthorizationEntry]) -> Vec<String> {
        auth.iter().flat_map(|e| self.authorization(e)).collect()
    }

    /// `token: topics [transfer, holder, spender] data 1`.
    pub fn event(&self, event: &ContractEvent) -> String {
        let ContractEventBody::V0(body) = &event.body;
        format!(
            "{}: topics [{}] data {}",
            self.contract(&event.contract_id),
            self.list(&body.topics),
            self.value(&body.data)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{checks::i128_val, scripted::account};
    use stellar_xdr::{ScSymbol, SorobanAddressCredentials, VecM};

    #[test]
    fn trees_name_the_parties_and_indent_nested_calls() {
        let (holder, other) = (account(1), account(9));
        let names = Names::new(vec![(holder.clone(), "holder")]);
        let call = |function: &str, args: Vec<ScVal>| {
            SorobanAuthorizedFunction::ContractFn(stellar_xdr::InvokeContractArgs {
                contract_address: other.clone(),
                function_name: ScSymbol(function.try_into().unwrap()),
                args: args.try_into().unwrap(),
            })
        };
        let entry = SorobanAuthorizationEntry {
            credentials: SorobanCredentials::Address(SorobanAddressCredentials {
                address: holder.clone(),
                nonce: 0,
                signature_expiration_ledger: 0,
                signature: ScVal::Void,
            }),
            root_invocation: SorobanAuthorizedInvocation {
                function: call(
                    "transfer",
                    vec![ScVal::Address(holder.clone()), i128_val(1)],
                ),
                sub_invocations: vec![SorobanAuthorizedInvocation {
                    function: call("pull", vec![]),
                    sub_invocations: VecM::default(),
                }]
                .try_into()
                .unwrap(),
            },
        };
        let short = names.address(&other);
        assert_eq!(
            names.authorization(&entry),
            vec![
                format!("holder authorizes {short}.transfer(holder, 1)"),
                format!("  ⤷ {short}.pull()"),
            ]
        );
        assert!(short.contains('…') && short.starts_with('G'), "{short}");
    }
}
