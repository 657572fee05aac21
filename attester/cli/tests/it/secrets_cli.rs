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

#[test]
fn item3_urls_in_messages_lose_userinfo_and_query() {
    let asset = "USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN";
    for (url, code) in [
        // Refused as a base URL (usage error).
        ("ftp://user:pw1@h.example/?apikey=k1", 64),
        // Accepted, then unreachable (nothing listens on port 1): a Horizon error.
        ("http://user:pw1@127.0.0.1:1/?apikey=k1", 1),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_assay"))
            .args([
                "scan",
                asset,
                "--no-history",
                "--timeout",
                "5",
                "--horizon-url",
                url,
            ])
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(code), "{url}: {stderr}");
        assert!(
            stderr.contains("h.example") || stderr.contains("127.0.0.1"),
            "{stderr}"
        );
        for shown in [&stdout, &stderr] {
            assert!(
                !shown.contains("pw1") && !shown.contains("k1"),
                "{url}: {shown}"
            );
        }
    }
}
