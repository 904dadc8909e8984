//! Locks shared by the workspace's crates.

/// Locks `mutex`, going on with its data after a panic elsewhere poisoned it. For every lock of the
/// workspace's crates: each guards state that stays consistent between statements, so a panicked
/// holder leaves nothing half-done.
pub fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
