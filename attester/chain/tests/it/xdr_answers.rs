//! XDR in RPC answers is decoded with a depth and size bound (issue #16, item 7), and no answer,
//! however malformed, makes the decoder panic (bounded fuzzing over arbitrary bytes).
use assay_chain::submit::{decode_rpc_xdr, RPC_XDR_MAX_BYTES, RPC_XDR_MAX_DEPTH};
use base64::Engine as _;
use proptest::prelude::*;
use stellar_xdr::{
    LedgerEntryData, Limits, ScBytes, ScVal, ScVec, SorobanAuthorizationEntry,
    SorobanTransactionData, TransactionMeta, TransactionResult, WriteXdr,
};

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// An `ScVal` vector nested `depth` levels deep.
fn nested(depth: u32) -> ScVal {
    let mut v = ScVal::Void;
    for _ in 0..depth {
        v = ScVal::Vec(Some(ScVec(vec![v].try_into().unwrap())));
    }
    v
}

#[test]
fn item7_rpc_xdr_decoding_is_depth_and_size_bounded() {
    // A value nested as deep as the host lets a contract build one (100 levels; each level is
    // four steps of the decoder's depth count): decodes.
    let ok = nested(100).to_xdr_base64(Limits::none()).unwrap();
    let decoded = decode_rpc_xdr::<ScVal>("xdr", Some(&ok));
    assert!(decoded.is_ok(), "{decoded:?}");
    // Deeper: refused with an error naming the field.
    let deep = nested(RPC_XDR_MAX_DEPTH / 4 + 50)
        .to_xdr_base64(Limits::none())
        .unwrap();
    let err = decode_rpc_xdr::<ScVal>("xdr", Some(&deep))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("bad xdr"), "{err}");
    // Larger than the size bound: refused.
    let big = ScVal::Bytes(ScBytes(
        vec![7u8; RPC_XDR_MAX_BYTES + 1].try_into().unwrap(),
    ))
    .to_xdr_base64(Limits::none())
    .unwrap();
    assert!(decode_rpc_xdr::<ScVal>("xdr", Some(&big)).is_err());
}

/// Arbitrary bytes: mostly small, now and then up to the 1 MiB body cap (a random block repeated to
/// the length, so a large case costs few draws).
fn arbitrary_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        60 => prop::collection::vec(any::<u8>(), 0..512),
        1 => (prop::collection::vec(any::<u8>(), 1..256), 0usize..=(1 << 20))
            .prop_map(|(block, len)| block.iter().copied().cycle().take(len).collect::<Vec<u8>>()),
    ]
}

fn decode_all(text: &str) {
    let t = Some(text);
    let _ = decode_rpc_xdr::<ScVal>("xdr", t);
    let _ = decode_rpc_xdr::<LedgerEntryData>("entry xdr", t);
    let _ = decode_rpc_xdr::<SorobanAuthorizationEntry>("auth", t);
    let _ = decode_rpc_xdr::<SorobanTransactionData>("transactionData", t);
    let _ = decode_rpc_xdr::<TransactionResult>("resultXdr", t);
    let _ = decode_rpc_xdr::<TransactionMeta>("resultMetaXdr", t);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn rpc_xdr_answers_never_panic(bytes in arbitrary_bytes()) {
        // As a well-formed base64 string, and as raw text (not base64 at all).
        decode_all(&b64(&bytes));
        decode_all(&String::from_utf8_lossy(&bytes));
    }
}
