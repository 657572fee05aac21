//! What a contract's WASM imports and exports, read from its sections: the host functions it imports (for
//! `contract-mechanics`), and every function it exports with its arity — the host calls exports by name, so
//! the export section, not the contract spec, is the truth of what can be called.

use super::ParseError;
use crate::contract::HostImport;

const SOURCE: &str = "contract wasm";

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader past the module header (magic and version) of `wasm`.
    fn module(wasm: &'a [u8]) -> Result<Reader<'a>, ParseError> {
        let mut r = Reader { bytes: wasm, at: 0 };
        if r.take(4)? != b"\0asm" {
            return Err(ParseError::new(
                SOURCE,
                "not a WASM module (no \\0asm magic)",
            ));
        }
        r.take(4)?;
        Ok(r)
    }

    fn fail(&self, what: &str) -> ParseError {
        ParseError::new(SOURCE, format!("{what} at byte {}", self.at))
    }

    fn byte(&mut self) -> Result<u8, ParseError> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| self.fail("truncated"))?;
        self.at += 1;
        Ok(b)
    }

    fn u32(&mut self) -> Result<u32, ParseError> {
        let mut value: u64 = 0;
        for shift in (0..35).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return u32::try_from(value).map_err(|_| self.fail("LEB128 above u32"));
            }
        }
        Err(self.fail("LEB128 longer than 5 bytes"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ParseError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| self.fail("truncated"))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn name(&mut self) -> Result<String, ParseError> {
        let len = self.u32()? as usize;
        let raw = self.take(len)?;
        String::from_utf8(raw.to_vec()).map_err(|_| self.fail("name is not UTF-8"))
    }

    fn limits(&mut self) -> Result<(), ParseError> {
        match self.byte()? {
            0x00 => self.u32().map(|_| ()),
            0x01 => self.u32().and_then(|_| self.u32()).map(|_| ()),
            _ => Err(self.fail("unknown limits flag")),
        }
    }
}

/// Every import of the module `wasm`, in order. A body that is not WASM, or whose import section does not
/// parse, is an error (a `malformed` read, never an empty list).
pub fn parse_wasm_imports(wasm: &[u8]) -> Result<Vec<HostImport>, ParseError> {
    let mut r = Reader::module(wasm)?;
    let mut imports = Vec::new();
    while r.at < wasm.len() {
        let id = r.byte()?;
        let size = r.u32()? as usize;
        let body = r.take(size)?;
        if id != 2 {
            continue;
        }
        imports.extend(
            read_imports(&mut Reader { bytes: body, at: 0 })?
                .into_iter()
                .map(|(import, _)| import),
        );
    }
    Ok(imports)
}

/// The entries of an import section's body, with whether each is a function.
fn read_imports(s: &mut Reader) -> Result<Vec<(HostImport, bool)>, ParseError> {
    let mut out = Vec::new();
    for _ in 0..s.u32()? {
        let module = s.name()?;
        let name = s.name()?;
        let function = match s.byte()? {
            0x00 => {
                s.u32()?;
                true
            }
            0x01 => {
                s.byte()?;
                s.limits()?;
                false
            }
            0x02 => {
                s.limits()?;
                false
            }
            0x03 => {
                s.byte()?;
                s.byte()?;
                false
            }
            _ => return Err(s.fail("unknown import kind")),
        };
        out.push((HostImport { module, name }, function));
    }
    Ok(out)
}

/// A function the module exports, and how many arguments it takes (every Soroban value is one `i64`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedFunction {
    /// The export's name: what a caller invokes.
    pub name: String,
    /// Its parameter count, from the function's WASM type.
    pub arity: u32,
}

/// Every function the module `wasm` exports, in export order, with its arity. Imported functions count in
/// the function index space before the module's own, as WASM defines it.
pub fn parse_wasm_exports(wasm: &[u8]) -> Result<Vec<ExportedFunction>, ParseError> {
    let mut r = Reader::module(wasm)?;
    let mut types: Vec<u32> = Vec::new();
    let mut imported_functions = 0u32;
    let mut defined: Vec<u32> = Vec::new();
    let mut exports: Vec<(String, u32)> = Vec::new();
    while r.at < wasm.len() {
        let id = r.byte()?;
        let size = r.u32()? as usize;
        let body = r.take(size)?;
        let mut s = Reader { bytes: body, at: 0 };
        match id {
            1 => {
                for _ in 0..s.u32()? {
                    if s.byte()? != 0x60 {
                        return Err(s.fail("a type that is not a function type"));
                    }
                    let params = s.u32()?;
                    s.take(params as usize)?;
                    let results = s.u32()?;
                    s.take(results as usize)?;
                    types.push(params);
                }
            }
            2 => {
                imported_functions += read_imports(&mut s)?
                    .iter()
                    .filter(|(_, function)| *function)
                    .count() as u32;
            }
            3 => {
                for _ in 0..s.u32()? {
                    defined.push(s.u32()?);
                }
            }
            7 => {
                for _ in 0..s.u32()? {
                    let name = s.name()?;
                    let kind = s.byte()?;
                    let index = s.u32()?;
                    if kind == 0x00 {
                        exports.push((name, index));
                    }
                }
            }
            _ => {}
        }
    }
    exports
        .into_iter()
        .map(|(name, index)| {
            let own = index.checked_sub(imported_functions).ok_or_else(|| {
                ParseError::new(SOURCE, format!("export {name:?} re-exports an import"))
            })?;
            let arity = defined
                .get(own as usize)
                .and_then(|t| types.get(*t as usize))
                .copied()
                .ok_or_else(|| {
                    ParseError::new(SOURCE, format!("export {name:?} names no function"))
                })?;
            Ok(ExportedFunction { name, arity })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module importing `l.6` and `x.1` as functions and a memory.
    fn module() -> Vec<u8> {
        let mut imports = vec![3u8];
        for (m, n) in [("l", "6"), ("x", "1")] {
            imports.extend([1, m.as_bytes()[0], 1, n.as_bytes()[0], 0x00, 0x00]);
        }
        imports.extend([1, b'e', 3, b'm', b'e', b'm', 0x02, 0x01, 0x01, 0x10]);
        let mut wasm = b"\0asm\x01\0\0\0".to_vec();
        wasm.extend([1, 4, 1, 0x60, 0, 0]); // a type section, skipped
        wasm.push(2);
        wasm.push(imports.len() as u8);
        wasm.extend(imports);
        wasm
    }

    #[test]
    fn reads_every_import() {
        let got = parse_wasm_imports(&module()).unwrap();
        let pairs: Vec<(&str, &str)> = got
            .iter()
            .map(|i| (i.module.as_str(), i.name.as_str()))
            .collect();
        assert_eq!(pairs, [("l", "6"), ("x", "1"), ("e", "mem")]);
    }

    /// A module importing one host function, defining two (arities 0 and 3) and exporting both and a memory.
    fn exporting_module() -> Vec<u8> {
        let mut wasm = b"\0asm\x01\0\0\0".to_vec();
        // Types: () -> i64, (i64, i64, i64) -> i64.
        let types = [2u8, 0x60, 0, 1, 0x7e, 0x60, 3, 0x7e, 0x7e, 0x7e, 1, 0x7e];
        wasm.extend([1, types.len() as u8]);
        wasm.extend(types);
        let imports = [1u8, 1, b'l', 1, b'6', 0x00, 0x01];
        wasm.extend([2, imports.len() as u8]);
        wasm.extend(imports);
        wasm.extend([3, 3, 2, 1, 0]); // function 1: type 1; function 2: type 0
        let exports = [
            3u8, 6, b'r', b'e', b'w', b'a', b'r', b'd', 0x00, 1, 4, b'n', b'a', b'm', b'e', 0x00,
            2, 3, b'm', b'e', b'm', 0x02, 0,
        ];
        wasm.extend([7, exports.len() as u8]);
        wasm.extend(exports);
        wasm
    }

    #[test]
    fn reads_every_exported_function_with_its_arity() {
        let got = parse_wasm_exports(&exporting_module()).unwrap();
        assert_eq!(
            got,
            [
                ExportedFunction {
                    name: "reward".into(),
                    arity: 3
                },
                ExportedFunction {
                    name: "name".into(),
                    arity: 0
                }
            ]
        );
        let m = exporting_module();
        for cut in 9..m.len() {
            let _ = parse_wasm_exports(&m[..cut]); // never panics
        }
        assert!(parse_wasm_exports(b"not wasm").is_err());
        // An export naming the imported function (index 0) is refused, not misread.
        let mut bad = m.clone();
        let at = bad.len() - 14;
        assert_eq!(bad[at], 1);
        bad[at] = 0;
        assert!(parse_wasm_exports(&bad).is_err());
    }

    #[test]
    fn refuses_what_is_not_wasm_and_truncations() {
        assert!(parse_wasm_imports(b"not wasm").is_err());
        let m = module();
        // Byte 14 is the boundary after the type section: a shorter, whole module.
        for cut in (9..14).chain(15..m.len()) {
            assert!(parse_wasm_imports(&m[..cut]).is_err(), "cut at {cut}");
        }
        assert!(parse_wasm_imports(b"\0asm\x01\0\0\0").unwrap().is_empty());
    }
}
