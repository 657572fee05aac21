//! docs/token-tests.md shows code that runs: each of its `rust` and `toml` blocks is in examples/token as
//! written.
use crate::common::root;

#[test]
fn every_code_block_of_the_page_is_in_the_example_token() {
    let page = std::fs::read_to_string(root().join("docs/token-tests.md")).unwrap();
    let example: String = ["Cargo.toml", "tests/sep41.rs", "src/lib.rs"]
        .iter()
        .map(|f| std::fs::read_to_string(root().join("examples/token").join(f)).unwrap())
        .collect();
    let mut blocks = 0;
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        if line != "```rust" && line != "```toml" {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        let block = block.join("\n");
        assert!(example.contains(&block), "not in examples/token:\n{block}");
        blocks += 1;
    }
    assert_eq!(
        blocks, 3,
        "the page's dev-dependency line, test file and profile lines"
    );
}
