//! The contract spec as discovery uses it: the argument types of the functions it has entries for, and
//! the user-defined types they name. The spec is metadata the build writes and anyone can strip; a
//! function without an entry is still probed (from its WASM arity), so nothing here can hide a power.

use std::collections::BTreeMap;

use stellar_xdr::{ScSpecEntry, ScSpecFunctionV0, ScSpecTypeDef};

/// A function's declared inputs and outputs.
#[derive(Debug, Clone)]
pub struct Function {
    pub inputs: Vec<ScSpecTypeDef>,
    pub outputs: Vec<ScSpecTypeDef>,
}

/// What the spec declares, by name.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    pub functions: BTreeMap<String, Function>,
    pub types: BTreeMap<String, ScSpecEntry>,
}

impl Spec {
    /// The spec of `wasm`; empty when it has none or it does not parse (every function is then probed
    /// from its arity alone).
    pub fn read(wasm: &[u8]) -> Spec {
        let mut spec = Spec::default();
        for entry in soroban_spec::read::from_wasm(wasm).unwrap_or_default() {
            match &entry {
                ScSpecEntry::FunctionV0(ScSpecFunctionV0 {
                    name,
                    inputs,
                    outputs,
                    ..
                }) => {
                    spec.functions.insert(
                        name.to_utf8_string_lossy(),
                        Function {
                            inputs: inputs.iter().map(|i| i.type_.clone()).collect(),
                            outputs: outputs.to_vec(),
                        },
                    );
                }
                ScSpecEntry::UdtStructV0(s) => {
                    spec.types
                        .insert(s.name.to_utf8_string_lossy(), entry.clone());
                }
                ScSpecEntry::UdtUnionV0(u) => {
                    spec.types
                        .insert(u.name.to_utf8_string_lossy(), entry.clone());
                }
                ScSpecEntry::UdtEnumV0(e) => {
                    spec.types
                        .insert(e.name.to_utf8_string_lossy(), entry.clone());
                }
                _ => {}
            }
        }
        spec
    }

    /// The declared function `name`, when its entry is there and its arity matches the export's (an entry
    /// that disagrees with the code is not trusted).
    pub fn function(&self, name: &str, arity: u32) -> Option<&Function> {
        self.functions
            .get(name)
            .filter(|f| f.inputs.len() == arity as usize)
    }
}
