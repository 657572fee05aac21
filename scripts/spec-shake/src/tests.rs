//! Shaking on hand-built modules: which entries survive, and that nothing else changes.
use soroban_spec::shaking::generate_marker_for_entry;
use stellar_xdr::{
    ScMetaEntry, ScMetaV0, ScSpecEntry, ScSpecFunctionV0, ScSpecTypeDef, ScSpecUdtStructFieldV0,
    ScSpecUdtStructV0, WriteXdr,
};

use super::*;

fn structure(name: &str) -> ScSpecEntry {
    ScSpecEntry::UdtStructV0(ScSpecUdtStructV0 {
        doc: "a type".try_into().unwrap(),
        lib: Default::default(),
        name: name.try_into().unwrap(),
        fields: vec![ScSpecUdtStructFieldV0 {
            doc: Default::default(),
            name: "value".try_into().unwrap(),
            type_: ScSpecTypeDef::U32,
        }]
        .try_into()
        .unwrap(),
    })
}

fn function(name: &str) -> ScSpecEntry {
    ScSpecEntry::FunctionV0(ScSpecFunctionV0 {
        doc: Default::default(),
        name: name.try_into().unwrap(),
        inputs: Default::default(),
        outputs: Default::default(),
    })
}

fn xdr(entries: &[ScSpecEntry]) -> Vec<u8> {
    entries
        .iter()
        .flat_map(|e| e.to_xdr(Limits::none()).unwrap())
        .collect()
}

fn meta(version: &str) -> Vec<u8> {
    ScMetaEntry::ScMetaV0(ScMetaV0 {
        key: "rssdk_spec_shaking".try_into().unwrap(),
        val: version.try_into().unwrap(),
    })
    .to_xdr(Limits::none())
    .unwrap()
}

fn section(out: &mut Vec<u8>, id: u8, payload: &[u8]) {
    out.push(id);
    write_leb_u32(out, payload.len() as u32);
    out.extend_from_slice(payload);
}

fn custom(out: &mut Vec<u8>, name: &str, content: &[u8]) {
    let mut payload = Vec::new();
    write_leb_u32(&mut payload, name.len() as u32);
    payload.extend_from_slice(name.as_bytes());
    payload.extend_from_slice(content);
    section(out, CUSTOM_SECTION_ID, &payload);
}

/// A data section with one active segment holding `bytes`, padded around like rustc's output.
fn data_section(bytes: &[u8]) -> Vec<u8> {
    let mut segment = vec![7u8; 5];
    segment.extend_from_slice(bytes);
    segment.extend_from_slice(&[0u8; 3]);
    let mut payload = vec![1, 0, 0x41, 0x00, 0x0b];
    write_leb_u32(&mut payload, segment.len() as u32);
    payload.extend_from_slice(&segment);
    payload
}

/// A module whose data section marks `marked` and whose spec holds `spec`.
fn module(marked: &[&ScSpecEntry], spec: &[ScSpecEntry], version: Option<&str>) -> Vec<u8> {
    let mut markers = Vec::new();
    for entry in marked {
        markers.extend_from_slice(&generate_marker_for_entry(entry));
    }
    let mut wasm = WASM_HEADER.to_vec();
    section(&mut wasm, 11, &data_section(&markers));
    custom(&mut wasm, SPEC_SECTION, &xdr(spec));
    if let Some(version) = version {
        custom(&mut wasm, META_SECTION, &meta(version));
    }
    wasm
}

fn spec_of(wasm: &[u8]) -> Vec<ScSpecEntry> {
    soroban_spec::read::parse_raw(custom_section(wasm, SPEC_SECTION).unwrap().unwrap()).unwrap()
}

#[test]
fn unmarked_types_go_functions_and_marked_types_stay() {
    let (used, unused, get) = (structure("Used"), structure("Unused"), function("get"));
    let wasm = module(
        &[&used],
        &[unused.clone(), get.clone(), used.clone()],
        Some("2"),
    );
    let (shaken, report) = shake(&wasm).unwrap();
    assert_eq!(spec_of(&shaken), vec![get, used.clone()]);
    assert_eq!(report.removed, vec!["struct Unused".to_string()]);
    assert_eq!((report.entries_before, report.entries_after), (3, 2));
    assert_eq!(report.spec_bytes_after, xdr(&spec_of(&shaken)).len());
    assert!(report.spec_bytes_after < report.spec_bytes_before);
    // Everything but the spec is byte-identical: the data section and the meta section.
    let original = sections(&wasm).unwrap();
    let after = sections(&shaken).unwrap();
    assert_eq!(original.len(), after.len());
    for (a, b) in original.iter().zip(&after) {
        let name = (a.id == CUSTOM_SECTION_ID).then(|| custom_name(&wasm, a).unwrap().0);
        if name != Some(SPEC_SECTION) {
            assert_eq!(&wasm[a.whole.clone()], &shaken[b.whole.clone()]);
        }
    }
}

#[test]
fn exact_duplicates_collapse_to_the_first() {
    let used = structure("Used");
    let wasm = module(&[&used], &[used.clone(), used.clone()], Some("2"));
    let (shaken, report) = shake(&wasm).unwrap();
    assert_eq!(spec_of(&shaken), vec![used]);
    assert_eq!(report.removed, vec!["struct Used (duplicate)".to_string()]);
}

#[test]
fn shaking_twice_changes_nothing_more() {
    let used = structure("Used");
    let wasm = module(&[&used], &[structure("Unused"), used.clone()], Some("2"));
    let (once, _) = shake(&wasm).unwrap();
    let (twice, report) = shake(&once).unwrap();
    assert_eq!(once, twice);
    assert!(report.removed.is_empty());
}

#[test]
fn a_contract_without_shaking_v2_meta_is_left_as_built() {
    let spec = [structure("Unused"), function("get")];
    for version in [None, Some("1")] {
        let wasm = module(&[], &spec, version);
        let (out, report) = shake(&wasm).unwrap();
        assert_eq!(out, wasm);
        assert_eq!(report.shaking_version, 1);
        assert_eq!(report.entries_after, 2);
    }
}

#[test]
fn bad_input_is_refused_with_the_reason() {
    let err = shake(b"not wasm at all").unwrap_err();
    assert!(matches!(err, ShakeError::Malformed(_)), "{err}");

    let mut truncated = WASM_HEADER.to_vec();
    truncated.extend_from_slice(&[11, 0x20, 1, 2]);
    let err = shake(&truncated).unwrap_err();
    assert!(err.to_string().contains("runs past the end"), "{err}");

    let mut no_spec = WASM_HEADER.to_vec();
    section(&mut no_spec, 11, &data_section(b""));
    assert!(matches!(shake(&no_spec), Err(ShakeError::NoSpec)));

    let mut bad_spec = WASM_HEADER.to_vec();
    custom(&mut bad_spec, SPEC_SECTION, &[0, 0, 0, 9, 1]);
    let err = shake(&bad_spec).unwrap_err();
    assert!(matches!(err, ShakeError::Xdr(SPEC_SECTION, _)), "{err}");
}

#[test]
fn leb128_round_trips_at_the_byte_boundaries() {
    for value in [0u32, 1, 127, 128, 16_383, 16_384, u32::MAX] {
        let mut bytes = Vec::new();
        write_leb_u32(&mut bytes, value);
        let mut pos = 0;
        assert_eq!(read_leb_u32(&bytes, &mut pos).unwrap(), value);
        assert_eq!(pos, bytes.len());
    }
}

#[test]
fn sections_are_sized_whole_and_named() {
    let spec = [structure("Used"), function("get")];
    let wasm = module(&[], &spec, Some("2"));
    let sizes = section_sizes(&wasm).unwrap();
    let names: Vec<&str> = sizes.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["data", SPEC_SECTION, META_SECTION]);
    // Every byte after the header belongs to exactly one section.
    let total: usize = sizes.iter().map(|(_, len)| len).sum();
    assert_eq!(total, wasm.len() - WASM_HEADER.len());
    // A custom section is its id, its length, its name and the spec.
    let spec_len = xdr(&spec).len();
    let name_len = 1 + SPEC_SECTION.len();
    let payload = name_len + spec_len;
    let leb = if payload < 128 { 1 } else { 2 };
    assert_eq!(sizes[1].1, 1 + leb + payload);
}

#[test]
fn spec_docs_are_counted_wherever_they_sit() {
    // "a type" on the struct; the field and the function carry none.
    let wasm = module(&[], &[structure("Used"), function("get")], Some("2"));
    assert_eq!(spec_doc_bytes(&wasm).unwrap(), "a type".len());
    let documented = ScSpecEntry::FunctionV0(ScSpecFunctionV0 {
        doc: "reads it".try_into().unwrap(),
        name: "get".try_into().unwrap(),
        inputs: vec![stellar_xdr::ScSpecFunctionInputV0 {
            doc: "the key".try_into().unwrap(),
            name: "key".try_into().unwrap(),
            type_: ScSpecTypeDef::U32,
        }]
        .try_into()
        .unwrap(),
        outputs: Default::default(),
    });
    let wasm = module(&[], &[documented], Some("2"));
    assert_eq!(
        spec_doc_bytes(&wasm).unwrap(),
        "reads it".len() + "the key".len()
    );
    assert!(matches!(
        spec_doc_bytes(&WASM_HEADER),
        Err(ShakeError::NoSpec)
    ));
}

/// An export section: (name, kind, index) each.
fn export_section(exports: &[(&str, u8, u32)]) -> Vec<u8> {
    let mut payload = Vec::new();
    write_leb_u32(&mut payload, exports.len() as u32);
    for (name, kind, index) in exports {
        write_leb_u32(&mut payload, name.len() as u32);
        payload.extend_from_slice(name.as_bytes());
        payload.push(*kind);
        write_leb_u32(&mut payload, *index);
    }
    payload
}

#[test]
fn linker_exports_go_and_everything_else_stays_in_order() {
    const FUNC: u8 = 0;
    const MEMORY: u8 = 2;
    let mut wasm = WASM_HEADER.to_vec();
    section(
        &mut wasm,
        EXPORT_SECTION_ID,
        &export_section(&[
            ("memory", MEMORY, 0),
            ("get_safety", FUNC, 3),
            ("_", EXPORT_KIND_GLOBAL, 1),
            ("__data_end", EXPORT_KIND_GLOBAL, 2),
            ("own_global", EXPORT_KIND_GLOBAL, 4),
            ("__heap_base", EXPORT_KIND_GLOBAL, 3),
            // A function that happens to be called `_` is the contract's: kept.
            ("_", FUNC, 5),
        ]),
    );
    custom(&mut wasm, "contractenvmetav0", b"meta");
    let (stripped, removed) = drop_linker_exports(&wasm).unwrap();
    assert_eq!(removed, ["_", "__data_end", "__heap_base"]);

    let mut expected = WASM_HEADER.to_vec();
    section(
        &mut expected,
        EXPORT_SECTION_ID,
        &export_section(&[
            ("memory", MEMORY, 0),
            ("get_safety", FUNC, 3),
            ("own_global", EXPORT_KIND_GLOBAL, 4),
            ("_", FUNC, 5),
        ]),
    );
    custom(&mut expected, "contractenvmetav0", b"meta");
    assert_eq!(stripped, expected);

    // Idempotent, and a module without them is returned byte for byte.
    let (again, removed) = drop_linker_exports(&stripped).unwrap();
    assert!(removed.is_empty());
    assert_eq!(again, stripped);
}

#[test]
fn a_truncated_export_section_is_refused() {
    let mut payload = export_section(&[("memory", 2, 0), ("get", 0, 1)]);
    payload.truncate(payload.len() - 3);
    let mut wasm = WASM_HEADER.to_vec();
    section(&mut wasm, EXPORT_SECTION_ID, &payload);
    assert!(matches!(
        drop_linker_exports(&wasm),
        Err(ShakeError::Malformed(_))
    ));
}

#[test]
fn drop_fn_removes_only_the_named_functions_entry() {
    let (used, get, clawback) = (structure("Used"), function("get"), function("clawback"));
    let wasm = module(&[&used], &[get.clone(), clawback, used.clone()], Some("2"));
    let hidden = drop_functions(&wasm, &["clawback"]).unwrap();
    assert_eq!(spec_of(&hidden), vec![get, used]);
    assert_eq!(entry_names(&hidden).unwrap(), ["fn get", "struct Used"]);
    // Every other section is byte-identical (the data section with its markers included).
    let (original, after) = (sections(&wasm).unwrap(), sections(&hidden).unwrap());
    assert_eq!(
        &wasm[original[0].whole.clone()],
        &hidden[after[0].whole.clone()]
    );
    assert_eq!(
        &wasm[original[2].whole.clone()],
        &hidden[after[2].whole.clone()]
    );
    // A name the spec does not declare fails instead of hiding nothing; a type is not a function.
    for name in ["mint", "Used"] {
        let err = drop_functions(&wasm, &[name]).unwrap_err();
        assert!(
            matches!(&err, ShakeError::NoSuchFunction(n) if n == name),
            "{err}"
        );
        assert!(err.to_string().contains(name), "{err}");
    }
}
