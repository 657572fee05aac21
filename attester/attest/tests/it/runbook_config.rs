//! The runbook's `watch.toml` examples (docs/operator-runbook.md) parse as shown: the docs' config is the
//! config `assay watch --config` reads, so an edit to either that drifts fails here.

use assay_attest::watch::WatchConfig;

/// The bodies of the ```toml fences of the runbook, in order.
fn runbook_toml_blocks() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/operator-runbook.md"
    );
    let text = std::fs::read_to_string(path).expect("reading docs/operator-runbook.md");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```toml") => current = Some(String::new()),
            (Some(body), "```") => {
                blocks.push(std::mem::take(body));
                current = None;
            }
            (Some(body), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// The top-level keys of a config, i.e. the lines before its first `[[asset]]`.
fn top_level(block: &str) -> &str {
    block.split("[[asset]]").next().unwrap_or(block)
}

#[test]
fn the_runbook_watch_configs_parse_with_the_values_they_show() {
    let blocks = runbook_toml_blocks();
    assert_eq!(
        blocks.len(),
        3,
        "the runbook shows a watch.toml, its sep41 additions and its keys for a PostgreSQL database"
    );
    // "C…" stands for the operator's registry id.
    let full = blocks[0].replace(
        "C…",
        "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC",
    );

    let config = WatchConfig::parse(&full).expect("the runbook's watch.toml parses");
    assert_eq!(config.network.as_deref(), Some("testnet"));
    assert_eq!(config.source.as_deref(), Some("assay-attester"));
    assert_eq!(config.asset_network.as_deref(), Some("mainnet"));
    assert_eq!(
        (
            config.interval_secs,
            config.max_age_secs,
            config.refresh_margin_secs
        ),
        (300, 86_400, 3_600)
    );
    assert_eq!(config.metrics_addr.as_deref(), Some("127.0.0.1:9464"));
    let assets: Vec<_> = config
        .assets
        .iter()
        .map(|a| (a.asset.as_str(), a.interval_secs, a.sep41))
        .collect();
    assert_eq!(
        assets,
        [
            (
                "AQUA-GBNZILSTVQZ4R7IKQDGHYGY2QXL5QOFJYQMXPKWRRM5PAV7Y4M67AQUA",
                None,
                false
            ),
            (
                "USDC-GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN",
                Some(600),
                false
            ),
        ]
    );

    // The sep41 additions go into the same file: its top-level keys, then theirs, then the asset.
    let with_sep41 = format!("{}{}", top_level(&full), blocks[1]);
    let config = WatchConfig::parse(&with_sep41).expect("the runbook's sep41 additions parse");
    assert_eq!(config.sep41_owner_identity.as_deref(), Some("assay-holder"));
    assert_eq!(
        config.sep41_spender_identity.as_deref(),
        Some("assay-spender")
    );
    assert!(!config.sep41_allow_non_testnet_write);
    assert_eq!(config.assets.len(), 1);
    assert!(config.assets[0].sep41, "the example asset runs the suite");

    // Many workers: the same file with the database keys in place of its `history` file.
    let without_file: String = (full.lines())
        .filter(|l| !l.starts_with("history ="))
        .map(|l| format!("{l}\n"))
        .collect();
    let shared = format!("{}{without_file}", blocks[2]);
    let config = WatchConfig::parse(&shared).expect("the runbook's database keys parse");
    assert_eq!(
        config.database.as_deref(),
        Some("postgres://assay@db.internal:5432/assay")
    );
    assert_eq!((config.lease_secs, config.history.as_deref()), (120, None));
    // The config names no password: resolving it with a password there is refused.
    let with_password = shared.replace("postgres://assay@", "postgres://assay:hunter2@");
    let refused = WatchConfig::parse(&with_password).unwrap_err().to_string();
    assert!(
        refused.contains("PGPASSWORD") && !refused.contains("hunter2"),
        "{refused}"
    );
}
