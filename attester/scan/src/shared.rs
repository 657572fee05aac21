//! Answers shared within one run: the first task to ask for a key fetches, the others wait for it.
use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

/// A per-run memo keyed by issuer, domain or URL.
pub struct Shared<K, V> {
    cells: Mutex<HashMap<K, Arc<OnceCell<V>>>>,
}

impl<K, V> Default for Shared<K, V> {
    fn default() -> Self {
        Shared {
            cells: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + Hash + Clone, V: Clone> Shared<K, V> {
    /// The answer for `key`, computing it with `fetch` if no task has yet.
    pub async fn get_or_fetch<F, Fut>(&self, key: &K, fetch: F) -> V
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = V>,
    {
        let cell = {
            let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
            cells.entry(key.clone()).or_default().clone()
        };
        cell.get_or_init(fetch).await.clone()
    }
}
