//! Per-call resource limits: wasmtime's `StoreLimits` (linear memory, tables, instances), set to
//! trap on a refused grow, plus a record of the refusal so the failure can be reported as "out
//! of memory" rather than as a generic trap.

use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};

/// Elements all tables of an instance may hold together (function references, 8 bytes each
/// on the host): generous for any real component, small enough that a `table.grow` bomb, or
/// many tables, stay within 8 MiB of host memory whatever the memory limit.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;
/// Core instances, tables and memories one component instance may create. A component built by
/// `wit-component` has a handful (the main module, adapters, shims).
const MAX_INSTANCES: usize = 64;
const MAX_TABLES: usize = 64;
const MAX_MEMORIES: usize = 16;

/// The limiter a call's store uses.
pub(crate) struct Limiter {
    inner: StoreLimits,
    /// Bytes of linear memory, all memories of the instance together.
    memory: Tally,
    /// Table elements, all tables together.
    tables: Tally,
}

/// A cap on what all memories (or all tables) of an instance hold together.
struct Tally {
    limit: usize,
    /// Granted so far (memories and tables only grow, and only die with the store).
    total: usize,
    /// Set when a grow beyond `limit` was refused: the total it asked for.
    refused: Option<usize>,
}

impl Tally {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            total: 0,
            refused: None,
        }
    }

    /// The total once one of them grows from `current` to `desired`, or `None` (the refusal
    /// recorded) past the limit. The caller keeps it as `total` once the grow is granted.
    fn grown(&mut self, current: usize, desired: usize) -> Option<usize> {
        let total = self.total.saturating_add(desired.saturating_sub(current));
        if total > self.limit {
            self.refused = Some(total);
            return None;
        }
        Some(total)
    }
}

impl Limiter {
    /// Limits for a component whose linear memories may total `memory_limit` bytes.
    pub(crate) fn new(memory_limit: u64) -> Self {
        Self {
            inner: StoreLimitsBuilder::new()
                .table_elements(MAX_TABLE_ELEMENTS)
                .instances(MAX_INSTANCES)
                .tables(MAX_TABLES)
                .memories(MAX_MEMORIES)
                .trap_on_grow_failure(true)
                .build(),
            memory: Tally::new(usize::try_from(memory_limit).unwrap_or(usize::MAX)),
            tables: Tally::new(MAX_TABLE_ELEMENTS),
        }
    }

    /// The total a refused memory grow asked for, if one was refused.
    pub(crate) fn memory_refused(&self) -> Option<usize> {
        self.memory.refused
    }

    /// The total a refused table grow asked for (all tables together), if one was refused.
    pub(crate) fn table_refused(&self) -> Option<usize> {
        self.tables.refused
    }
}

impl ResourceLimiter for Limiter {
    // Counted here rather than by `StoreLimits`, whose cap applies to each memory alone.
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let Some(total) = self.memory.grown(current, desired) else {
            wasmtime::bail!("forcing trap when growing memory to {desired} bytes: over the limit");
        };
        if maximum.is_some_and(|max| desired > max) {
            wasmtime::bail!(
                "forcing trap when growing memory to {desired} bytes: over its maximum"
            );
        }
        self.memory.total = total;
        Ok(true)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.inner.memory_grow_failed(error)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Counted here rather than only by `StoreLimits`, whose cap applies to each table alone.
        let Some(total) = self.tables.grown(current, desired) else {
            wasmtime::bail!(
                "forcing trap when growing a table to {desired} elements: over the limit"
            );
        };
        let granted = self.inner.table_growing(current, desired, maximum)?;
        if granted {
            self.tables.total = total;
        }
        Ok(granted)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.inner.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_cap_covers_all_memories_together() {
        let mut limiter = Limiter::new(10 * 65536);
        assert!(limiter.memory_growing(0, 4 * 65536, None).unwrap());
        assert!(limiter.memory_growing(0, 4 * 65536, None).unwrap());
        assert!(limiter.memory_growing(4 * 65536, 6 * 65536, None).unwrap());
        assert_eq!(limiter.memory_refused(), None);
        let err = limiter
            .memory_growing(4 * 65536, 5 * 65536, None)
            .unwrap_err();
        assert!(err.to_string().contains("over the limit"), "{err}");
        assert_eq!(limiter.memory_refused(), Some(11 * 65536));
    }

    #[test]
    fn a_memory_maximum_is_a_trap_but_not_the_limit() {
        let mut limiter = Limiter::new(u64::MAX);
        assert!(limiter.memory_growing(0, 2 * 65536, Some(65536)).is_err());
        assert_eq!(limiter.memory_refused(), None);
        assert!(
            limiter
                .table_growing(0, MAX_TABLE_ELEMENTS + 1, None)
                .is_err()
        );
        assert_eq!(limiter.table_refused(), Some(MAX_TABLE_ELEMENTS + 1));
    }

    #[test]
    fn the_table_cap_covers_all_tables_together() {
        let mut limiter = Limiter::new(u64::MAX);
        let half = MAX_TABLE_ELEMENTS / 2;
        assert!(limiter.table_growing(0, half, None).unwrap());
        assert!(limiter.table_growing(0, half, None).unwrap());
        assert_eq!(limiter.table_refused(), None);
        let err = limiter.table_growing(0, 1, None).unwrap_err();
        assert!(err.to_string().contains("over the limit"), "{err}");
        assert_eq!(limiter.table_refused(), Some(MAX_TABLE_ELEMENTS + 1));
    }
}
