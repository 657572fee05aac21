//! Issue #16, item 3: a secret key or seed phrase typed anywhere on the command line, in any
//! subcommand, is refused with a usage error that does not contain it.
use std::process::Command;

const SECRET: &str = "SBK2VIYYSVG76E7VC3QHYARNFLY2EAQXDHRC7BMXBBGIFG74ARPRMNQM";
const CONTRACT: &str = "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC";

fn refused(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .env_remove("STELLAR_SECRET_KEY")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let phrase_word = "abandon abandon";
    assert_eq!(out.status.code(), Some(64), "{args:?}: {stderr}");
    for shown in [&stdout, &stderr] {
        assert!(
            !shown.contains(SECRET),
            "{args:?} echoed the secret: {shown}"
        );
        assert!(
            !shown.contains(phrase_word),
            "{args:?} echoed the phrase: {shown}"
        );
    }
    assert!(
        stderr.contains("secret key or seed phrase"),
        "{args:?}: {stderr}"
    );
}

#[test]
fn item3_secrets_on_the_command_line_are_refused_unseen_in_every_subcommand() {
    let phrase = "abandon ".repeat(11) + "about";
    let flag = format!("--source={SECRET}");
    for sub in [
        "scan",
        "history",
        "attestation",
        "attest",
        "verify",
        "watch",
        "localnet",
        "sep41",
        "demo",
    ] {
        refused(&[sub, SECRET]);
        refused(&[sub, flag.as_str()]);
        refused(&[sub, phrase.as_str()]);
    }
    refused(&["sep41", CONTRACT, "--owner-identity", SECRET]);
    refused(&["sep41", SECRET, "--network", "testnet"]);
    refused(&[SECRET]);
}
