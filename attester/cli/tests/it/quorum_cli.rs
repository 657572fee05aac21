//! Two attester keys on the local network (the registry and real stellar-rpc API of `assay
//! localnet`): each `assay attest` writes and reads back its own verdict, `assay verify --attester`
//! reads one attester's, and `assay verify --quorum G…,G… --threshold N` reports each attester's
//! verdict and whether the registry's `is_safe_quorum` holds, in text and JSON.

use crate::world;

use std::path::Path;
use std::process::Command;

use assay_attest::registry;
use assay_chain::Signer;
use serde_json::Value;
use world::*;

const USDC: &str = "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";
/// The world's attester (LocalWorld) and a second one this test admits.
pub const FIRST_SEED: u8 = 12;
const SECOND_SEED: u8 = 21;

/// Runs `assay` against the world with the key of `seed` (STELLAR_SECRET_KEY); returns the exit
/// code and stdout.
pub fn assay_as(w: &World, ca: &Path, seed: u8, args: &[&str]) -> (i32, String) {
    let secret = format!("{}", stellar_strkey::ed25519::PrivateKey([seed; 32]));
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .args(w.cli_args(ca))
        .env("STELLAR_SECRET_KEY", secret)
        .env("HOME", w.dir.path())
        .env("XDG_DATA_HOME", w.dir.path().join("data"))
        .env_remove("STELLAR_NETWORK")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    eprintln!(
        "assay {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), stdout)
}

/// The first line of `text` as JSON.
pub fn json_line(text: &str) -> Value {
    serde_json::from_str(text.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn two_attesters_write_their_own_verdicts_and_verify_reports_the_quorum() {
    let w = World::start(&["circle.com"]);
    w.issue("USDC", USDC, 2, Some("circle.com"));
    w.serve_eval("usdc-revocable-regulated", USDC, "circle.com");
    let ca = w.ca();
    let usdc = format!("USDC-{USDC}");

    let first = Signer::from_seed([FIRST_SEED; 32]);
    let second = Signer::from_seed([SECOND_SEED; 32]);
    assert_eq!(first.public_key(), w.attester.public_key());
    w.net
        .fund(&registry::account_id(second.public_key()))
        .unwrap();
    let add = registry::call(
        w.registry,
        "add_attester",
        vec![registry::account_val(second.public_key())],
    );
    w.invoker(&w.admin).invoke(&add).unwrap();
    let both = format!("{},{}", first.address(), second.address());
    let quorum = |threshold: &str, output: &str| {
        assay_as(
            &w,
            &ca,
            FIRST_SEED,
            &[
                "verify",
                &usdc,
                "--quorum",
                &both,
                "--threshold",
                threshold,
                "--output",
                output,
            ],
        )
    };

    // Nobody attested yet: the quorum does not hold (exit 3), each attester absent.
    let (code, out) = quorum("1", "json");
    assert_eq!(code, 3, "{out}");
    let line = json_line(&out);
    assert_eq!(line["holds"], false, "{line}");
    assert_eq!(line["attesters"][0]["verdict"], "absent", "{line}");

    // The first attester writes its verdict.
    let (code, out) = assay_as(&w, &ca, FIRST_SEED, &["attest", &usdc, "--output", "json"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = quorum("1", "json");
    assert_eq!(code, 0, "{out}");
    let line = json_line(&out);
    assert_eq!(line["holds"], true, "{line}");
    assert_eq!(line["threshold"], 1);
    assert_eq!(line["max_severity"], 2);
    assert_eq!(line["attesters"][0]["attester"], first.address());
    assert_eq!(line["attesters"][0]["verdict"], "agreement", "{line}");
    assert_eq!(
        line["attesters"][0]["severity"], 2,
        "USDC can freeze: medium"
    );
    assert_eq!(line["attesters"][1]["attester"], second.address());
    assert_eq!(line["attesters"][1]["verdict"], "absent", "{line}");
    let (code, out) = quorum("2", "json");
    assert_eq!(code, 3, "one verdict is not two: {out}");
    assert_eq!(json_line(&out)["holds"], false);

    // The second attester reads its own verdict (none yet), not the first's, so it writes.
    let (code, out) = assay_as(
        &w,
        &ca,
        FIRST_SEED,
        &["verify", &usdc, "--attester", &second.address()],
    );
    assert_eq!(code, 4, "the second attester holds nothing yet: {out}");
    let (code, out) = assay_as(&w, &ca, SECOND_SEED, &["attest", &usdc, "--output", "json"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = assay_as(
        &w,
        &ca,
        FIRST_SEED,
        &[
            "verify",
            &usdc,
            "--attester",
            &second.address(),
            "--output",
            "json",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(json_line(&out)["verdict"], "agreement");

    // Two of two now, in JSON and in text.
    let (code, out) = quorum("2", "json");
    assert_eq!(code, 0, "{out}");
    let line = json_line(&out);
    assert_eq!(line["holds"], true, "{line}");
    for i in 0..2 {
        assert_eq!(line["attesters"][i]["verdict"], "agreement", "{line}");
    }
    let (code, out) = quorum("2", "text");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("quorum 2 of 2"), "{out}");
    assert!(out.contains("holds (is_safe_quorum true)"), "{out}");
    assert!(out.contains(&second.address()), "{out}");

    // A ceiling below the verdicts' severity: the registry says no.
    let (code, out) = assay_as(
        &w,
        &ca,
        FIRST_SEED,
        &[
            "verify",
            &usdc,
            "--quorum",
            &both,
            "--threshold",
            "1",
            "--max-severity",
            "1",
        ],
    );
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("does not hold"), "{out}");

    // Lists the registry would refuse are refused before any read, naming the bad input.
    let twice = format!("{},{}", first.address(), first.address());
    for (list, threshold) in [(&twice, "1"), (&both, "0"), (&both, "3")] {
        let (code, out) = assay_as(
            &w,
            &ca,
            FIRST_SEED,
            &["verify", &usdc, "--quorum", list, "--threshold", threshold],
        );
        assert_eq!(code, 64, "{list} {threshold}: {out}");
    }
    let (code, _) = assay_as(
        &w,
        &ca,
        FIRST_SEED,
        &[
            "verify",
            &usdc,
            "--quorum",
            "GNOTANADDRESS",
            "--threshold",
            "1",
        ],
    );
    assert_eq!(code, 64);
}
