//! Spec shaking for contracts built without `stellar contract build`.
//!
//! soroban-sdk 29 writes a spec entry into `contractspecv0` for every type, error and event it
//! sees — its own auth types included — and leaves a marker (`SpEcV1` + 8 bytes of the entry's
//! hash) in the data section only for those that reach the contract boundary. The build system
//! is expected to drop the entries whose marker did not survive dead-code elimination; the SDK
//! refuses to build for WASM unless the build system says it will
//! (`SOROBAN_SDK_BUILD_SYSTEM_SUPPORTS_SPEC_SHAKING_V2`). `stellar contract build` does it; this
//! crate does it for `scripts/build-wasm.sh`'s Debian and rustup paths, using soroban-spec's own
//! marker matching so both paths keep the same entries.
//!
//! Functions are always kept (they are the interface). Exact duplicate entries are collapsed.
//!
//! [`drop_linker_exports`] removes the three global exports the toolchain adds for its own use
//! (`_`, which the SDK exports only to keep its link sections alive, and lld's `__data_end` and
//! `__heap_base`): the host charges every call of a contract for each export it instantiates
//! (about 2,300 instructions each), and nothing reads these after linking. Every other section of
//! the module is copied byte for byte.

use std::collections::HashSet;
use std::fmt;
use std::io::Cursor;

use soroban_spec::shaking;
use stellar_xdr::{Limited, Limits, ReadXdr, ScMetaEntry, ScSpecEntry, WriteXdr};

const SPEC_SECTION: &str = "contractspecv0";
const META_SECTION: &str = "contractmetav0";
const WASM_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
const CUSTOM_SECTION_ID: u8 = 0;
const EXPORT_SECTION_ID: u8 = 7;
const EXPORT_KIND_GLOBAL: u8 = 3;

/// Global exports that only the linker and the SDK's link-section trick use.
pub const LINKER_EXPORTS: [&str; 3] = ["_", "__data_end", "__heap_base"];

/// Why a module could not be shaken. The input file is never modified.
#[derive(Debug)]
pub enum ShakeError {
    /// Not a WASM module (wrong header) or a section runs past the end.
    Malformed(String),
    /// The module has no `contractspecv0` section: not a Soroban contract.
    NoSpec,
    /// The spec or meta section is not valid XDR.
    Xdr(&'static str, stellar_xdr::Error),
    /// `--drop-fn` named a function the spec does not declare.
    NoSuchFunction(String),
}

impl fmt::Display for ShakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShakeError::Malformed(why) => write!(f, "not a well-formed WASM module: {why}"),
            ShakeError::NoSpec => write!(
                f,
                "no {SPEC_SECTION} section: this is not a Soroban contract built with soroban-sdk"
            ),
            ShakeError::Xdr(section, e) => write!(f, "the {section} section is not valid XDR: {e}"),
            ShakeError::NoSuchFunction(name) => write!(
                f,
                "--drop-fn {name}: the {SPEC_SECTION} section declares no function `{name}`"
            ),
        }
    }
}

impl std::error::Error for ShakeError {}

/// What shaking did, for the build log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShakeReport {
    /// Shaking version the contract's meta declares (`rssdk_spec_shaking`); only 2 is shaken.
    pub shaking_version: u32,
    pub entries_before: usize,
    pub entries_after: usize,
    pub spec_bytes_before: usize,
    pub spec_bytes_after: usize,
    /// Names of the entries removed (unused types, errors, events; duplicates).
    pub removed: Vec<String>,
}

/// One section of a module: its id and the byte range of its payload.
struct Section {
    id: u8,
    /// Range of the whole section (id byte to end of payload) in the module.
    whole: std::ops::Range<usize>,
    payload: std::ops::Range<usize>,
}

fn read_leb_u32(bytes: &[u8], pos: &mut usize) -> Result<u32, ShakeError> {
    let mut value: u64 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *bytes
            .get(*pos)
            .ok_or_else(|| ShakeError::Malformed("truncated LEB128 length".into()))?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return u32::try_from(value)
                .map_err(|_| ShakeError::Malformed("LEB128 length over u32".into()));
        }
    }
    Err(ShakeError::Malformed(
        "LEB128 length longer than 5 bytes".into(),
    ))
}

fn write_leb_u32(out: &mut Vec<u8>, mut value: u32) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn sections(wasm: &[u8]) -> Result<Vec<Section>, ShakeError> {
    if wasm.len() < WASM_HEADER.len() || wasm[..WASM_HEADER.len()] != WASM_HEADER {
        return Err(ShakeError::Malformed(
            "missing the \\0asm version 1 header".into(),
        ));
    }
    let mut pos = WASM_HEADER.len();
    let mut out = Vec::new();
    while pos < wasm.len() {
        let start = pos;
        let id = wasm[pos];
        pos += 1;
        let len = read_leb_u32(wasm, &mut pos)? as usize;
        let end = pos
            .checked_add(len)
            .filter(|end| *end <= wasm.len())
            .ok_or_else(|| {
                ShakeError::Malformed(format!("section {id} at byte {start} runs past the end"))
            })?;
        out.push(Section {
            id,
            whole: start..end,
            payload: pos..end,
        });
        pos = end;
    }
    Ok(out)
}

/// The custom section's name and the range of its content (after the name).
fn custom_name<'a>(
    wasm: &'a [u8],
    section: &Section,
) -> Result<(&'a str, std::ops::Range<usize>), ShakeError> {
    let mut pos = section.payload.start;
    let len = read_leb_u32(wasm, &mut pos)? as usize;
    let name_end = pos
        .checked_add(len)
        .filter(|end| *end <= section.payload.end)
        .ok_or_else(|| ShakeError::Malformed("custom section name runs past its section".into()))?;
    let name = std::str::from_utf8(&wasm[pos..name_end])
        .map_err(|_| ShakeError::Malformed("custom section name is not UTF-8".into()))?;
    Ok((name, name_end..section.payload.end))
}

fn custom_section<'a>(wasm: &'a [u8], name: &str) -> Result<Option<&'a [u8]>, ShakeError> {
    for section in sections(wasm)?.iter().filter(|s| s.id == CUSTOM_SECTION_ID) {
        let (section_name, content) = custom_name(wasm, section)?;
        if section_name == name {
            return Ok(Some(&wasm[content]));
        }
    }
    Ok(None)
}

/// A spec entry as `kind name`, e.g. `fn get_safety` or `struct Safety`.
pub fn entry_name(entry: &ScSpecEntry) -> String {
    match entry {
        ScSpecEntry::FunctionV0(f) => format!("fn {}", f.name.to_utf8_string_lossy()),
        ScSpecEntry::UdtStructV0(s) => format!("struct {}", s.name.to_utf8_string_lossy()),
        ScSpecEntry::UdtUnionV0(u) => format!("union {}", u.name.to_utf8_string_lossy()),
        ScSpecEntry::UdtEnumV0(e) => format!("enum {}", e.name.to_utf8_string_lossy()),
        ScSpecEntry::UdtErrorEnumV0(e) => format!("error {}", e.name.to_utf8_string_lossy()),
        ScSpecEntry::EventV0(e) => format!("event {}", e.name.to_utf8_string_lossy()),
    }
}

fn xdr_limits() -> Limits {
    Limits {
        depth: 500,
        len: 0x0100_0000,
    }
}

/// The shaking version the contract's meta declares (1 when absent).
fn shaking_version(wasm: &[u8]) -> Result<u32, ShakeError> {
    let Some(meta) = custom_section(wasm, META_SECTION)? else {
        return Ok(1);
    };
    let entries = ScMetaEntry::read_xdr_iter(&mut Limited::new(Cursor::new(meta), xdr_limits()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ShakeError::Xdr(META_SECTION, e))?;
    Ok(shaking::spec_shaking_version_for_meta(&entries))
}

/// The names (`kind name`) of the entries in a module's contract spec, in section order.
pub fn entry_names(wasm: &[u8]) -> Result<Vec<String>, ShakeError> {
    let spec = custom_section(wasm, SPEC_SECTION)?.ok_or(ShakeError::NoSpec)?;
    let entries =
        soroban_spec::read::parse_raw(spec).map_err(|e| ShakeError::Xdr(SPEC_SECTION, e))?;
    Ok(entries.iter().map(entry_name).collect())
}

/// The size of each section of a module, in file order: standard sections by their WASM name
/// (`code`, `data`, `import`, …), custom sections by their own (`contractspecv0`, …).
pub fn section_sizes(wasm: &[u8]) -> Result<Vec<(String, usize)>, ShakeError> {
    const NAMES: [&str; 13] = [
        "custom",
        "type",
        "import",
        "function",
        "table",
        "memory",
        "global",
        "export",
        "start",
        "element",
        "code",
        "data",
        "datacount",
    ];
    sections(wasm)?
        .iter()
        .map(|section| {
            let name = if section.id == CUSTOM_SECTION_ID {
                custom_name(wasm, section)?.0.to_string()
            } else {
                NAMES
                    .get(usize::from(section.id))
                    .map_or_else(|| format!("section {}", section.id), |n| n.to_string())
            };
            Ok((name, section.whole.len()))
        })
        .collect()
}

/// Bytes of documentation text in a module's contract spec: the docs of every function, parameter,
/// type, field, case, error and event, which tools such as `stellar contract info` show.
pub fn spec_doc_bytes(wasm: &[u8]) -> Result<usize, ShakeError> {
    use stellar_xdr::ScSpecUdtUnionCaseV0 as Case;
    let spec = custom_section(wasm, SPEC_SECTION)?.ok_or(ShakeError::NoSpec)?;
    let entries =
        soroban_spec::read::parse_raw(spec).map_err(|e| ShakeError::Xdr(SPEC_SECTION, e))?;
    Ok(entries
        .iter()
        .map(|entry| match entry {
            ScSpecEntry::FunctionV0(f) => {
                f.doc.len() + f.inputs.iter().map(|i| i.doc.len()).sum::<usize>()
            }
            ScSpecEntry::UdtStructV0(s) => {
                s.doc.len() + s.fields.iter().map(|f| f.doc.len()).sum::<usize>()
            }
            ScSpecEntry::UdtUnionV0(u) => {
                u.doc.len()
                    + u.cases
                        .iter()
                        .map(|c| match c {
                            Case::VoidV0(v) => v.doc.len(),
                            Case::TupleV0(t) => t.doc.len(),
                        })
                        .sum::<usize>()
            }
            ScSpecEntry::UdtEnumV0(e) => {
                e.doc.len() + e.cases.iter().map(|c| c.doc.len()).sum::<usize>()
            }
            ScSpecEntry::UdtErrorEnumV0(e) => {
                e.doc.len() + e.cases.iter().map(|c| c.doc.len()).sum::<usize>()
            }
            ScSpecEntry::EventV0(e) => {
                e.doc.len() + e.params.iter().map(|p| p.doc.len()).sum::<usize>()
            }
        })
        .sum())
}

/// Returns `wasm` with unused spec entries removed, and what was removed.
///
/// A contract whose meta does not declare shaking version 2 (an older SDK: it emits no markers)
/// is returned unchanged, as `stellar contract build` does.
pub fn shake(wasm: &[u8]) -> Result<(Vec<u8>, ShakeReport), ShakeError> {
    let spec = custom_section(wasm, SPEC_SECTION)?.ok_or(ShakeError::NoSpec)?;
    let entries =
        soroban_spec::read::parse_raw(spec).map_err(|e| ShakeError::Xdr(SPEC_SECTION, e))?;
    let version = shaking_version(wasm)?;
    let mut report = ShakeReport {
        shaking_version: version,
        entries_before: entries.len(),
        entries_after: entries.len(),
        spec_bytes_before: spec.len(),
        spec_bytes_after: spec.len(),
        removed: Vec::new(),
    };
    if version != 2 {
        return Ok((wasm.to_vec(), report));
    }

    let markers = shaking::find_all(wasm);
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    let mut new_spec = Vec::with_capacity(spec.len());
    let survivors: Vec<ScSpecEntry> = shaking::filter(entries.clone(), &markers).collect();
    let survivor_xdr: HashSet<Vec<u8>> = survivors
        .iter()
        .map(|e| e.to_xdr(Limits::none()))
        .collect::<Result<_, _>>()
        .map_err(|e| ShakeError::Xdr(SPEC_SECTION, e))?;
    let mut after = 0;
    for entry in &entries {
        let xdr = entry
            .to_xdr(Limits::none())
            .map_err(|e| ShakeError::Xdr(SPEC_SECTION, e))?;
        if !survivor_xdr.contains(&xdr) {
            report.removed.push(entry_name(entry));
        } else if !seen.insert(xdr.clone()) {
            report
                .removed
                .push(format!("{} (duplicate)", entry_name(entry)));
        } else {
            new_spec.extend_from_slice(&xdr);
            after += 1;
        }
    }
    report.entries_after = after;
    report.spec_bytes_after = new_spec.len();
    Ok((
        replace_custom_section(wasm, SPEC_SECTION, &new_spec)?,
        report,
    ))
}

/// Returns `wasm` with the spec entries of the functions named in `names` removed: the export
/// stays callable, only its interface entry goes. Used to build a fixture whose spec hides a
/// function (the host calls exports by name; the spec is metadata). Every name must be declared,
/// so a renamed function fails the build instead of silently hiding nothing.
pub fn drop_functions(wasm: &[u8], names: &[&str]) -> Result<Vec<u8>, ShakeError> {
    let spec = custom_section(wasm, SPEC_SECTION)?.ok_or(ShakeError::NoSpec)?;
    let entries =
        soroban_spec::read::parse_raw(spec).map_err(|e| ShakeError::Xdr(SPEC_SECTION, e))?;
    let is_named = |entry: &ScSpecEntry| matches!(entry, ScSpecEntry::FunctionV0(f) if names.contains(&f.name.to_utf8_string_lossy().as_str()));
    if let Some(missing) = names.iter().find(|name| {
        !entries.iter().any(
            |e| matches!(e, ScSpecEntry::FunctionV0(f) if f.name.to_utf8_string_lossy() == **name),
        )
    }) {
        return Err(ShakeError::NoSuchFunction(missing.to_string()));
    }
    let mut new_spec = Vec::with_capacity(spec.len());
    for entry in entries.iter().filter(|e| !is_named(e)) {
        new_spec.extend_from_slice(
            &entry
                .to_xdr(Limits::none())
                .map_err(|e| ShakeError::Xdr(SPEC_SECTION, e))?,
        );
    }
    replace_custom_section(wasm, SPEC_SECTION, &new_spec)
}

/// Returns `wasm` without the global exports named in [`LINKER_EXPORTS`], and the names removed.
/// Function and memory exports, and any other global, are kept in their order; the globals
/// themselves stay (only their export goes), so no index in the module changes.
pub fn drop_linker_exports(wasm: &[u8]) -> Result<(Vec<u8>, Vec<String>), ShakeError> {
    retain_exports(wasm, |name, kind| {
        !(kind == EXPORT_KIND_GLOBAL && LINKER_EXPORTS.contains(&name))
    })
}

/// Returns `wasm` with only the exports for which `keep(name, kind)` holds, in their order, and the
/// names of the others. Only the export section changes: what an export named stays in the module, so
/// no index changes.
pub fn retain_exports(
    wasm: &[u8],
    keep: impl Fn(&str, u8) -> bool,
) -> Result<(Vec<u8>, Vec<String>), ShakeError> {
    let mut out = Vec::with_capacity(wasm.len());
    out.extend_from_slice(&WASM_HEADER);
    let mut removed = Vec::new();
    for section in sections(wasm)? {
        if section.id != EXPORT_SECTION_ID {
            out.extend_from_slice(&wasm[section.whole]);
            continue;
        }
        let mut pos = section.payload.start;
        let count = read_leb_u32(wasm, &mut pos)?;
        let mut kept = Vec::new();
        let mut kept_count = 0u32;
        for _ in 0..count {
            let start = pos;
            let name_len = read_leb_u32(wasm, &mut pos)? as usize;
            let name_end = pos
                .checked_add(name_len)
                .filter(|end| *end < section.payload.end)
                .ok_or_else(|| ShakeError::Malformed("export name runs past its section".into()))?;
            let name = std::str::from_utf8(&wasm[pos..name_end])
                .map_err(|_| ShakeError::Malformed("export name is not UTF-8".into()))?;
            let kind = wasm[name_end];
            pos = name_end + 1;
            read_leb_u32(wasm, &mut pos)?;
            if pos > section.payload.end {
                return Err(ShakeError::Malformed("export runs past its section".into()));
            }
            if keep(name, kind) {
                kept.extend_from_slice(&wasm[start..pos]);
                kept_count += 1;
            } else {
                removed.push(name.to_string());
            }
        }
        if pos != section.payload.end {
            return Err(ShakeError::Malformed(
                "export section has bytes after its last export".into(),
            ));
        }
        let mut payload = Vec::with_capacity(kept.len() + 5);
        write_leb_u32(&mut payload, kept_count);
        payload.extend_from_slice(&kept);
        out.push(EXPORT_SECTION_ID);
        write_leb_u32(&mut out, payload.len() as u32);
        out.extend_from_slice(&payload);
    }
    Ok((out, removed))
}

/// `wasm` with the content of custom section `name` replaced by `content`, in place.
fn replace_custom_section(wasm: &[u8], name: &str, content: &[u8]) -> Result<Vec<u8>, ShakeError> {
    let mut out = Vec::with_capacity(wasm.len());
    out.extend_from_slice(&WASM_HEADER);
    for section in sections(wasm)? {
        let is_target = section.id == CUSTOM_SECTION_ID && custom_name(wasm, &section)?.0 == name;
        if !is_target {
            out.extend_from_slice(&wasm[section.whole]);
            continue;
        }
        let mut payload = Vec::with_capacity(content.len() + name.len() + 5);
        write_leb_u32(&mut payload, name.len() as u32);
        payload.extend_from_slice(name.as_bytes());
        payload.extend_from_slice(content);
        out.push(CUSTOM_SECTION_ID);
        write_leb_u32(&mut out, payload.len() as u32);
        out.extend_from_slice(&payload);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
