//! Shrinks the WASM stack from rustc's default 1 MiB to 64 KiB. The host allocates (and meters)
//! a contract's whole initial linear memory on every call, so the default stack alone made each
//! call pay for ~1 MiB of memory. The contracts' deepest call chains use a few KiB.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_FAMILY").as_deref() == Ok("wasm") {
        println!("cargo:rustc-link-arg-cdylib=-zstack-size=65536");
    }
}
