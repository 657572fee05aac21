//! Shrinks the WASM stack from rustc's default 1 MiB to 32 KiB. The host allocates (and meters)
//! a contract's whole initial linear memory on every call: the default stack alone made each call
//! pay for ~1 MiB, and a 64 KiB stack plus the ~13 KB data segment placed after it still took two
//! 64 KiB pages (about 11,000 instructions of `MemAlloc` on every call, reads included). 32 KiB
//! and the data fit in one page. The contracts' deepest call chains use a few KiB.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_FAMILY").as_deref() == Ok("wasm") {
        println!("cargo:rustc-link-arg-cdylib=-zstack-size=32768");
    }
}
