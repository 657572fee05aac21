//! A token's own contract spec: which SEP-41 members it declares, and its constructor's
//! parameters, so JSON constructor arguments become contract values of the right types.
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use stellar_xdr::{
    Int128Parts, ScSpecEntry, ScSpecTypeDef, ScString, ScSymbol, ScVal, UInt128Parts,
};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpecError {
    #[error("{0} is not a WASM module (it does not begin with `\\0asm`); pass a contract built to wasm32v1-none, e.g. target/wasm/conformant_token.wasm")]
    NotWasm(String),
    #[error("{0} has no readable contract spec (a `contractspecv0` section): {1}")]
    Unreadable(String, String),
    /// One argument of `function` (`constructor` for the constructor) does not convert; `given` names
    /// where the arguments came from.
    #[error("{given}: {function} argument `{param}`: {reason}")]
    Argument {
        given: String,
        function: String,
        param: String,
        reason: String,
    },
    /// The arguments as a whole do not fit the parameters; `given` names where they came from.
    #[error("{given}: {reason}")]
    Shape { given: String, reason: String },
}

/// Why a JSON value is not a contract value of the parameter's type.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ValueError {
    /// A number or text that is not an integer (shown as given).
    #[error("{0} is not an integer")]
    NotInteger(String),
    /// A JSON value of the wrong kind.
    #[error("expected {expected}, got {got}")]
    WrongKind {
        /// The kind the type needs.
        expected: &'static str,
        /// The value given.
        got: String,
    },
    /// A value of the wrong form (not true/false, not hex, not an array).
    #[error("expected {0}")]
    Expected(&'static str),
    /// An integer outside the type's range.
    #[error("{value} does not fit a {ty}")]
    OutOfRange {
        /// The integer.
        value: i128,
        /// The type's name.
        ty: &'static str,
    },
    /// A string, symbol, byte string or list beyond what a contract value holds.
    #[error("{0}")]
    Limit(&'static str),
    /// `"@name"` where no party or contract of the deployment has that name (yet).
    #[error("no party or contract is named {name:?} here; known: {known}")]
    UnknownName {
        /// The placeholder as given.
        name: String,
        /// The names known at that point, comma separated.
        known: String,
    },
    /// Not a `G…`, `C…` or `M…` address, nor a placeholder.
    #[error(transparent)]
    Address(#[from] assay_chain::AddressError),
    /// A spec type JSON arguments cannot express.
    #[error("type {0} is not supported here")]
    Unsupported(String),
}

/// Addresses the `"@admin"`, `"@holder"` and `"@spender"` placeholders stand for, and `"@NAME"` for each
/// contract of the deployment by its name (`"@token"` once the token is deployed).
#[derive(Debug, Clone)]
pub struct Placeholders {
    pub admin: String,
    pub holder: String,
    pub spender: String,
    pub contracts: BTreeMap<String, String>,
}

impl Placeholders {
    /// The address `"@name"` stands for.
    pub fn resolve(&self, placeholder: &str) -> Result<&str, ValueError> {
        let name = placeholder.strip_prefix('@').unwrap_or(placeholder);
        match name {
            "admin" => Ok(&self.admin),
            "holder" => Ok(&self.holder),
            "spender" => Ok(&self.spender),
            other => self
                .contracts
                .get(other)
                .map(String::as_str)
                .ok_or_else(|| {
                    let known: Vec<String> = ["admin", "holder", "spender"]
                        .into_iter()
                        .chain(self.contracts.keys().map(String::as_str))
                        .map(|n| format!("@{n}"))
                        .collect();
                    ValueError::UnknownName {
                        name: placeholder.to_string(),
                        known: known.join(", "),
                    }
                }),
        }
    }
}

/// The functions a WASM declares, with their parameters.
#[derive(Debug, Clone)]
pub struct ContractSpec {
    functions: BTreeMap<String, Vec<(String, ScSpecTypeDef)>>,
}

impl ContractSpec {
    /// Reads the spec from `wasm`; `origin` names the file for errors.
    pub fn from_wasm(wasm: &[u8], origin: &str) -> Result<Self, SpecError> {
        if !wasm.starts_with(b"\0asm") {
            return Err(SpecError::NotWasm(origin.to_string()));
        }
        let entries = soroban_spec::read::from_wasm(wasm).map_err(|e| {
            // soroban-spec's own messages ("reading wasm") leave out the cause.
            use soroban_spec::read::FromWasmError;
            let cause = match &e {
                FromWasmError::Read(cause) => format!("{e}: {cause}"),
                FromWasmError::Parse(cause) => format!("{e}: {cause}"),
                FromWasmError::NotFound => e.to_string(),
            };
            SpecError::Unreadable(origin.to_string(), cause)
        })?;
        let mut functions = BTreeMap::new();
        for entry in entries {
            if let ScSpecEntry::FunctionV0(f) = entry {
                let inputs = f
                    .inputs
                    .iter()
                    .map(|i| (i.name.to_utf8_string_lossy(), i.type_.clone()))
                    .collect();
                functions.insert(f.name.0.to_utf8_string_lossy(), inputs);
            }
        }
        Ok(ContractSpec { functions })
    }

    /// Names of every declared function.
    pub fn declared(&self) -> BTreeSet<String> {
        self.functions.keys().cloned().collect()
    }

    /// The SEP-41 members the spec declares with SEP-41's number of parameters, for the suite: a
    /// token whose `burn` is an operator's `burn(user, amount, operator)` (SEP-57) does not implement
    /// SEP-41's `burn(from, amount)`, and calling it as one would judge a call it never offered.
    pub fn sep41_declared(&self) -> BTreeSet<String> {
        (self.functions.iter())
            .filter(|(name, params)| sep41_arity(name).is_none_or(|arity| params.len() == arity))
            .map(|(name, _)| name.clone())
            .collect()
    }

    pub fn declares(&self, name: &str) -> bool {
        self.functions.contains_key(name)
    }

    /// Parameters of `function`, if declared.
    pub fn params(&self, function: &str) -> Option<&[(String, ScSpecTypeDef)]> {
        self.functions.get(function).map(Vec::as_slice)
    }

    /// Constructor arguments from JSON (an array in order, or an object by parameter name);
    /// with no JSON, defaults for the common `(admin, decimals, name, symbol)` shape. `given` names
    /// where the JSON came from (`--constructor-args`, a set-up file's entry), for errors.
    pub fn constructor_args(
        &self,
        json: Option<&Value>,
        given: &str,
        placeholders: &Placeholders,
    ) -> Result<Vec<ScVal>, SpecError> {
        let Some(params) = self.params("__constructor") else {
            return match json {
                None => Ok(vec![]),
                Some(Value::Array(a)) if a.is_empty() => Ok(vec![]),
                Some(_) => Err(SpecError::Shape {
                    given: given.into(),
                    reason: "the contract has no constructor, so it takes no arguments".into(),
                }),
            };
        };
        let defaults;
        let json = match json {
            Some(json) => json,
            None => {
                defaults = Value::Array(
                    params
                        .iter()
                        .map(|(name, ty)| default_arg(given, name, ty))
                        .collect::<Result<_, _>>()?,
                );
                &defaults
            }
        };
        convert_args("constructor", given, params, json, placeholders)
    }

    /// Arguments of a call to `function` from JSON (an array in order, or an object by parameter
    /// name); `source` names where the JSON came from, for errors.
    pub fn call_args(
        &self,
        function: &str,
        json: &Value,
        source: &str,
        placeholders: &Placeholders,
    ) -> Result<Vec<ScVal>, SpecError> {
        let Some(params) = self.params(function) else {
            let declared: Vec<&str> = (self.functions.keys())
                .filter(|f| !f.starts_with("__"))
                .map(String::as_str)
                .collect();
            return Err(SpecError::Shape {
                given: source.into(),
                reason: format!(
                    "the contract declares no `{function}`; it declares {}",
                    declared.join(", ")
                ),
            });
        };
        convert_args(function, source, params, json, placeholders)
    }
}

/// `json` (an array in order or an object by parameter name) as the values of `params`.
fn convert_args(
    function: &str,
    source: &str,
    params: &[(String, ScSpecTypeDef)],
    json: &Value,
    placeholders: &Placeholders,
) -> Result<Vec<ScVal>, SpecError> {
    let shape = |reason: String| SpecError::Shape {
        given: source.into(),
        reason,
    };
    let called = match function {
        "constructor" => "the constructor".to_string(),
        f => format!("`{f}`"),
    };
    let values: Vec<Value> = match json {
        Value::Array(items) => {
            if items.len() != params.len() {
                return Err(shape(format!(
                    "{called} takes {} arguments ({}), but {} were given",
                    params.len(),
                    names(params),
                    items.len()
                )));
            }
            items.clone()
        }
        Value::Object(map) => params
            .iter()
            .map(|(name, _)| {
                map.get(name).cloned().ok_or_else(|| SpecError::Argument {
                    given: source.into(),
                    function: function.into(),
                    param: name.clone(),
                    reason: "missing from the JSON object".into(),
                })
            })
            .collect::<Result<_, _>>()?,
        _ => {
            return Err(shape(format!(
                "expected a JSON array or object for {called} ({})",
                names(params)
            )))
        }
    };
    params
        .iter()
        .zip(values)
        .map(|((name, ty), value)| {
            to_scval(&value, ty, placeholders).map_err(|reason| SpecError::Argument {
                given: source.into(),
                function: function.into(),
                param: name.clone(),
                reason: reason.to_string(),
            })
        })
        .collect()
}

/// How many parameters SEP-41 gives `member`; `None` for a function SEP-41 does not define.
fn sep41_arity(member: &str) -> Option<usize> {
    Some(match member {
        "decimals" | "name" | "symbol" => 0,
        "balance" => 1,
        "allowance" | "burn" => 2,
        "transfer" | "burn_from" => 3,
        "approve" | "transfer_from" => 4,
        _ => return None,
    })
}

fn names(params: &[(String, ScSpecTypeDef)]) -> String {
    params
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn default_arg(given: &str, name: &str, ty: &ScSpecTypeDef) -> Result<Value, SpecError> {
    let value = match (name, ty) {
        (_, ScSpecTypeDef::Address) => Value::from("@admin"),
        ("decimals", ScSpecTypeDef::U32) => Value::from(7),
        ("name", ScSpecTypeDef::String) => Value::from("Assay Probe Token"),
        ("symbol", ScSpecTypeDef::String) => Value::from("PROBE"),
        _ => {
            return Err(SpecError::Argument {
                given: given.into(),
                function: "constructor".into(),
                param: name.into(),
                reason: "no default for it; give the constructor's arguments ('[…]')".into(),
            })
        }
    };
    Ok(value)
}

/// One JSON value as a contract value of type `ty`.
pub fn to_scval(value: &Value, ty: &ScSpecTypeDef, ph: &Placeholders) -> Result<ScVal, ValueError> {
    let int = |v: &Value| -> Result<i128, ValueError> {
        match v {
            Value::Number(n) => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .ok_or_else(|| ValueError::NotInteger(n.to_string())),
            Value::String(s) => s
                .parse()
                .map_err(|_| ValueError::NotInteger(format!("\"{s}\""))),
            other => Err(ValueError::WrongKind {
                expected: "an integer",
                got: other.to_string(),
            }),
        }
    };
    let ranged = |v: &Value, lo: i128, hi: i128, ty: &'static str| -> Result<i128, ValueError> {
        let n = int(v)?;
        if n < lo || n > hi {
            Err(ValueError::OutOfRange { value: n, ty })
        } else {
            Ok(n)
        }
    };
    let text = |v: &Value| -> Result<String, ValueError> {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| ValueError::WrongKind {
                expected: "a string",
                got: v.to_string(),
            })
    };
    Ok(match ty {
        ScSpecTypeDef::Bool => ScVal::Bool(
            value
                .as_bool()
                .ok_or(ValueError::Expected("true or false"))?,
        ),
        ScSpecTypeDef::Void => ScVal::Void,
        ScSpecTypeDef::U32 => ScVal::U32(ranged(value, 0, u32::MAX.into(), "u32")? as u32),
        ScSpecTypeDef::I32 => {
            ScVal::I32(ranged(value, i32::MIN.into(), i32::MAX.into(), "i32")? as i32)
        }
        ScSpecTypeDef::U64 => ScVal::U64(ranged(value, 0, u64::MAX.into(), "u64")? as u64),
        ScSpecTypeDef::I64 => {
            ScVal::I64(ranged(value, i64::MIN.into(), i64::MAX.into(), "i64")? as i64)
        }
        ScSpecTypeDef::I128 => {
            let n = int(value)?;
            ScVal::I128(Int128Parts {
                hi: (n >> 64) as i64,
                lo: n as u64,
            })
        }
        ScSpecTypeDef::U128 => {
            let n = ranged(value, 0, i128::MAX, "u128")?;
            ScVal::U128(UInt128Parts {
                hi: (n >> 64) as u64,
                lo: n as u64,
            })
        }
        ScSpecTypeDef::String => ScVal::String(ScString(
            text(value)?
                .try_into()
                .map_err(|_| ValueError::Limit("string too long"))?,
        )),
        ScSpecTypeDef::Symbol => ScVal::Symbol(ScSymbol(
            text(value)?
                .as_str()
                .try_into()
                .map_err(|_| ValueError::Limit("not a valid symbol"))?,
        )),
        ScSpecTypeDef::Bytes | ScSpecTypeDef::BytesN(_) => {
            let bytes = hex::decode(text(value)?).map_err(|_| ValueError::Expected("hex bytes"))?;
            ScVal::Bytes(
                bytes
                    .try_into()
                    .map_err(|_| ValueError::Limit("bytes too long"))?,
            )
        }
        ScSpecTypeDef::Address | ScSpecTypeDef::MuxedAddress => {
            let raw = text(value)?;
            let strkey = match raw.strip_prefix('@') {
                Some(_) => ph.resolve(&raw)?,
                None => raw.as_str(),
            };
            ScVal::Address(assay_chain::parse_address(strkey)?)
        }
        ScSpecTypeDef::Option(inner) => match value {
            Value::Null => ScVal::Void,
            v => to_scval(v, &inner.value_type, ph)?,
        },
        ScSpecTypeDef::Vec(inner) => {
            let items = value
                .as_array()
                .ok_or(ValueError::Expected("a JSON array"))?;
            let vals = items
                .iter()
                .map(|v| to_scval(v, &inner.element_type, ph))
                .collect::<Result<Vec<_>, _>>()?;
            ScVal::Vec(Some(
                vals.try_into()
                    .map_err(|_| ValueError::Limit("too many items"))?,
            ))
        }
        other => {
            return Err(ValueError::Unsupported(format!(
                "{:?}",
                other.discriminant()
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_wasm_is_named_as_such() {
        let err = ContractSpec::from_wasm(b"# README\n", "README.md").unwrap_err();
        assert_eq!(err, SpecError::NotWasm("README.md".into()));
        assert!(err
            .to_string()
            .starts_with("README.md is not a WASM module"));
        assert_eq!(
            ContractSpec::from_wasm(b"", "empty.wasm").unwrap_err(),
            SpecError::NotWasm("empty.wasm".into())
        );
    }

    #[test]
    fn a_wasm_without_a_spec_and_a_truncated_wasm_say_what_is_wrong() {
        // A valid empty module: magic and version, no sections.
        let empty_module = b"\0asm\x01\0\0\0";
        assert_eq!(
            ContractSpec::from_wasm(empty_module, "bare.wasm").unwrap_err(),
            SpecError::Unreadable("bare.wasm".into(), "contract spec not found".into())
        );
        // A section header whose declared size runs past the end of the file.
        let truncated = b"\0asm\x01\0\0\0\x00\x7f";
        match ContractSpec::from_wasm(truncated, "cut.wasm").unwrap_err() {
            SpecError::Unreadable(origin, cause) => {
                assert_eq!(origin, "cut.wasm");
                assert!(cause.starts_with("reading wasm: "), "{cause}");
                assert!(cause.len() > "reading wasm: ".len(), "{cause}");
            }
            other => panic!("expected Unreadable, got {other:?}"),
        }
    }
}
