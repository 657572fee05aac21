//! Shared by the integration tests: reading eval subjects from `testdata/eval/`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assay_core::replay::{load_expected, load_subject, Expected};
use assay_core::Subject;

pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Every eval subject directory, sorted by name.
pub fn eval_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(testdata().join("eval"))
        .expect("testdata/eval exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("subject.json").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 11, "expected the eval set, found {dirs:?}");
    dirs
}

pub fn reader(dir: &Path) -> impl Fn(&str) -> Option<Vec<u8>> + '_ {
    move |name: &str| std::fs::read(dir.join(name)).ok()
}

pub fn subject(dir: &Path) -> Subject {
    load_subject(&reader(dir)).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

pub fn expected(dir: &Path) -> Expected {
    load_expected(&reader(dir)).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

pub fn name(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}
