//! Searchers kept open between questions: a scope's store connections, its
//! `vectors.bin` map and its graph are opened once and reused, and reopened
//! when an index changes underneath (kts-index or kts-graph committed since).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use kts_cli::Messages;

use crate::{ModelChoice, Request, Searcher};

/// Open searchers kept per scope; a searcher serves one question at a time,
/// so concurrent questions to a scope each take their own.
pub struct SearcherPool {
    model: ModelChoice,
    idle: Mutex<Idle>,
    /// Most idle searchers kept in all (a knowledge root has thousands of scopes).
    capacity: usize,
}

#[derive(Default)]
struct Idle {
    by_scope: HashMap<PathBuf, Vec<Searcher>>,
    count: usize,
}

impl SearcherPool {
    pub fn new(model: ModelChoice, capacity: usize) -> Self {
        SearcherPool {
            model,
            idle: Mutex::default(),
            capacity,
        }
    }

    pub fn model(&self) -> &ModelChoice {
        &self.model
    }

    /// Runs `work` with a searcher of the scope `dir` set up for `request`:
    /// an idle one whose index has not changed since it was opened, else a
    /// new one.
    pub fn with<T>(
        &self,
        dir: &Path,
        request: &Request,
        messages: &Messages,
        work: impl FnOnce(&mut Searcher) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let mut searcher = match self.take_current(dir) {
            Some(mut searcher) => {
                searcher.configure(request)?;
                searcher
            }
            None => Searcher::open(dir, request, &self.model, messages)?,
        };
        let result = work(&mut searcher);
        if result.is_ok() {
            self.give_back(dir, searcher);
        }
        result
    }

    fn take_current(&self, dir: &Path) -> Option<Searcher> {
        loop {
            let searcher = {
                let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
                let searcher = idle.by_scope.get_mut(dir)?.pop()?;
                idle.count -= 1;
                searcher
            };
            if searcher.is_current() {
                return Some(searcher);
            }
        }
    }

    fn give_back(&self, dir: &Path, searcher: Searcher) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.count < self.capacity {
            idle.by_scope
                .entry(dir.to_path_buf())
                .or_default()
                .push(searcher);
            idle.count += 1;
        }
    }
}
