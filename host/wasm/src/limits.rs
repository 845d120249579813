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
    /// The cap on all linear memories of the instance together.
    memory_limit: usize,
    /// Bytes of linear memory granted so far (memories only grow, and only die with the store).
    memory_total: usize,
    /// Set when a memory grow beyond `memory_limit` was refused: the total it asked for.
    memory_refused: Option<usize>,
    /// Table elements granted so far, all tables together.
    table_total: usize,
    /// Set when a table grow beyond the element cap was refused: the total it asked for.
    table_refused: Option<usize>,
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
            memory_limit: usize::try_from(memory_limit).unwrap_or(usize::MAX),
            memory_total: 0,
            memory_refused: None,
            table_total: 0,
            table_refused: None,
        }
    }

    /// The total a refused memory grow asked for, if one was refused.
    pub(crate) fn memory_refused(&self) -> Option<usize> {
        self.memory_refused
    }

    /// The total a refused table grow asked for (all tables together), if one was refused.
    pub(crate) fn table_refused(&self) -> Option<usize> {
        self.table_refused
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
        let total = self
            .memory_total
            .saturating_add(desired.saturating_sub(current));
        if total > self.memory_limit {
            self.memory_refused = Some(total);
            wasmtime::bail!("forcing trap when growing memory to {desired} bytes: over the limit");
        }
        if maximum.is_some_and(|max| desired > max) {
            wasmtime::bail!(
                "forcing trap when growing memory to {desired} bytes: over its maximum"
            );
        }
        self.memory_total = total;
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
        let total = self
            .table_total
            .saturating_add(desired.saturating_sub(current));
        if total > MAX_TABLE_ELEMENTS {
            self.table_refused = Some(total);
            wasmtime::bail!(
                "forcing trap when growing a table to {desired} elements: over the limit"
            );
        }
        let granted = self.inner.table_growing(current, desired, maximum)?;
        if granted {
            self.table_total = total;
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
