//! Tokens written to exhaust discovery: a spec whose types multiply without end, and a thousand exports
//! that each run until the host's budget traps. Each run returns within its bounds and names the cut.
use assay_core::powers::BUDGET_CUT;
use assay_powers::Bounds;
use stellar_xdr::{
    Limits, ScSpecEntry, ScSpecFunctionInputV0, ScSpecFunctionV0, ScSpecTypeDef, ScSpecTypeOption,
    ScSpecTypeUdt, ScSpecUdtStructFieldV0, ScSpecUdtStructV0, ScSpecUdtUnionCaseTupleV0,
    ScSpecUdtUnionCaseV0, ScSpecUdtUnionV0, WriteXdr,
};

use crate::common::{holder, Deployed};

fn leb(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn section(id: u8, body: Vec<u8>, out: &mut Vec<u8>) {
    out.push(id);
    leb(body.len(), out);
    out.extend(body);
}

fn vec_of(items: Vec<Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    leb(items.len(), &mut out);
    for i in items {
        out.extend(i);
    }
    out
}

fn name(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    leb(s.len(), &mut out);
    out.extend_from_slice(s.as_bytes());
    out
}

/// A contract module: `functions` as (export name, parameter count, body instructions), all returning an
/// i64 (a `Val`), with the interface version every contract carries and `spec` as its contract spec.
fn module(functions: &[(String, usize, Vec<u8>)], spec: &[ScSpecEntry]) -> Vec<u8> {
    // The placeholder is the header and the interface-version section; custom sections go anywhere.
    let mut wasm = assay_localnet::placeholder_wasm();
    let mut arities: Vec<usize> = functions.iter().map(|f| f.1).collect();
    arities.sort_unstable();
    arities.dedup();
    let types = arities
        .iter()
        .map(|n| {
            let mut t = vec![0x60];
            t.extend(vec_of(vec![vec![0x7e]; *n]));
            t.extend([1, 0x7e]);
            t
        })
        .collect();
    section(1, vec_of(types), &mut wasm);
    let index = |n: usize| arities.iter().position(|a| *a == n).unwrap();
    let mut funcs = Vec::new();
    for f in functions {
        let mut i = Vec::new();
        leb(index(f.1), &mut i);
        funcs.push(i);
    }
    section(3, vec_of(funcs), &mut wasm);
    let exports = functions
        .iter()
        .enumerate()
        .map(|(n, f)| {
            let mut e = name(&f.0);
            e.push(0);
            leb(n, &mut e);
            e
        })
        .collect();
    section(7, vec_of(exports), &mut wasm);
    let bodies = functions
        .iter()
        .map(|f| {
            let mut body = vec![0]; // no locals
            body.extend(&f.2);
            body.push(0x0b);
            let mut sized = Vec::new();
            leb(body.len(), &mut sized);
            sized.extend(body);
            sized
        })
        .collect();
    section(10, vec_of(bodies), &mut wasm);
    let mut entries = Vec::new();
    for e in spec {
        entries.extend(e.to_xdr(Limits::none()).unwrap());
    }
    let mut custom = name("contractspecv0");
    custom.extend(entries);
    section(0, custom, &mut wasm);
    wasm
}

/// `i64.const 2`: the `Val` of `()`.
fn returns_void() -> Vec<u8> {
    vec![0x42, 0x02]
}

/// `loop br 0 end unreachable`: runs until the host's budget traps.
fn loops_forever() -> Vec<u8> {
    vec![0x03, 0x40, 0x0c, 0x00, 0x0b, 0x00]
}

fn udt(name: &str) -> ScSpecTypeDef {
    ScSpecTypeDef::Udt(ScSpecTypeUdt {
        name: name.try_into().unwrap(),
    })
}

fn option(t: ScSpecTypeDef) -> ScSpecTypeDef {
    ScSpecTypeDef::Option(Box::new(ScSpecTypeOption {
        value_type: Box::new(t),
    }))
}

/// The spec bomb: `Bomb` has 40 fields, each an `Option<Bomb>` or an `Option<Many>`, `Many` has 12 cases
/// of 12 `Option<Bomb>` each, and `detonate` takes 12 `Bomb`s. A few kilobytes; built without a bound,
/// more values than memory holds.
fn spec_bomb() -> Vec<ScSpecEntry> {
    let fields: Vec<ScSpecUdtStructFieldV0> = (0..40)
        .map(|i| ScSpecUdtStructFieldV0 {
            doc: Default::default(),
            name: format!("f{i}").as_str().try_into().unwrap(),
            type_: option(udt(if i % 2 == 0 { "Bomb" } else { "Many" })),
        })
        .collect();
    let cases: Vec<ScSpecUdtUnionCaseV0> = (0..12)
        .map(|i| {
            ScSpecUdtUnionCaseV0::TupleV0(ScSpecUdtUnionCaseTupleV0 {
                doc: Default::default(),
                name: format!("C{i}").as_str().try_into().unwrap(),
                type_: vec![option(udt("Bomb")); 12].try_into().unwrap(),
            })
        })
        .collect();
    let inputs: Vec<ScSpecFunctionInputV0> = (0..12)
        .map(|i| ScSpecFunctionInputV0 {
            doc: Default::default(),
            name: format!("a{i}").as_str().try_into().unwrap(),
            type_: udt("Bomb"),
        })
        .collect();
    vec![
        ScSpecEntry::UdtStructV0(ScSpecUdtStructV0 {
            doc: Default::default(),
            lib: Default::default(),
            name: "Bomb".try_into().unwrap(),
            fields: fields.try_into().unwrap(),
        }),
        ScSpecEntry::UdtUnionV0(ScSpecUdtUnionV0 {
            doc: Default::default(),
            lib: Default::default(),
            name: "Many".try_into().unwrap(),
            cases: cases.try_into().unwrap(),
        }),
        ScSpecEntry::FunctionV0(ScSpecFunctionV0 {
            doc: Default::default(),
            name: "detonate".try_into().unwrap(),
            inputs: inputs.try_into().unwrap(),
            outputs: Default::default(),
        }),
    ]
}

#[test]
fn a_spec_bomb_is_probed_with_bounded_arguments_and_the_cut_is_named() {
    let spec = spec_bomb();
    let wasm = module(&[("detonate".into(), 12, returns_void())], &spec);
    assert!(wasm.len() < 16 * 1024, "a small module: {}", wasm.len());
    let d = Deployed::new(wasm, |_| vec![]);
    let s = d.discover_within(
        &[holder()],
        Bounds {
            per_function: 8,
            budget: std::time::Duration::from_secs(20),
        },
    );
    assert_eq!(s.probed, ["detonate"]);
    assert!(
        s.cut
            .iter()
            .any(|c| c.starts_with("detonate: arguments built up to the size bound")),
        "{s:#?}"
    );
    assert!(s.invocations > 0, "it was still probed: {s:#?}");
    assert_eq!(s.bits(), 0);
}

#[test]
fn a_thousand_looping_exports_stop_at_the_budget_with_the_cut_named() {
    let functions: Vec<(String, usize, Vec<u8>)> = (0..1000)
        .map(|n| (format!("spin{n}"), 0, loops_forever()))
        .collect();
    let d = Deployed::new(module(&functions, &[]), |_| vec![]);
    let s = d.discover_within(
        &[holder()],
        Bounds {
            per_function: 64,
            budget: std::time::Duration::from_secs(1),
        },
    );
    assert_eq!(s.probed.len(), 1000);
    assert!(
        s.cut[0].starts_with("set-up: ") && s.cut[0].ends_with("the time budget ran out"),
        "{:?}",
        &s.cut[..2]
    );
    assert!(
        s.cut.iter().filter(|c| c.ends_with(BUDGET_CUT)).count() > 900,
        "the functions left unprobed are listed"
    );
    assert!(s.incomplete().is_some(), "a cut search is a floor");
}

#[test]
fn a_function_that_refuses_every_argument_set_is_listed_under_the_bound() {
    // `refuse` traps on every call (`unreachable`); `fine` answers `()`.
    let functions = vec![
        ("refuse".to_string(), 1, vec![0x00]),
        ("fine".to_string(), 0, returns_void()),
    ];
    let d = Deployed::new(module(&functions, &[]), |_| vec![]);
    let s = d.discover(&[holder()]);
    assert!(
        s.cut
            .iter()
            .any(|c| c.starts_with("refuse: refused every argument set tried (")),
        "{s:#?}"
    );
    assert!(!s.cut.iter().any(|c| c.starts_with("fine:")), "{s:#?}");
    assert!(
        !s.cut.iter().any(|c| c.ends_with(BUDGET_CUT)),
        "a refusal is listed, not a gap in the search: {s:#?}"
    );
}
