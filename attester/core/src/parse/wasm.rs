//! The host functions a contract's WASM imports, read from its import section. Only what the
//! `contract-mechanics` check needs: module and name of every import; everything else is skipped.

use super::ParseError;
use crate::contract::HostImport;

const SOURCE: &str = "contract wasm";

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
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
    let mut r = Reader { bytes: wasm, at: 0 };
    if r.take(4)? != b"\0asm" {
        return Err(ParseError::new(
            SOURCE,
            "not a WASM module (no \\0asm magic)",
        ));
    }
    r.take(4)?;
    let mut imports = Vec::new();
    while r.at < wasm.len() {
        let id = r.byte()?;
        let size = r.u32()? as usize;
        let body = r.take(size)?;
        if id != 2 {
            continue;
        }
        let mut s = Reader { bytes: body, at: 0 };
        for _ in 0..s.u32()? {
            let module = s.name()?;
            let name = s.name()?;
            match s.byte()? {
                0x00 => {
                    s.u32()?;
                }
                0x01 => {
                    s.byte()?;
                    s.limits()?;
                }
                0x02 => s.limits()?,
                0x03 => {
                    s.byte()?;
                    s.byte()?;
                }
                _ => return Err(s.fail("unknown import kind")),
            }
            imports.push(HostImport { module, name });
        }
    }
    Ok(imports)
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
