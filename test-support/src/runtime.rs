//! A tokio runtime for tests of code that is not async themselves.

/// Runs `future` to its end on a current-thread runtime of its own (timers and I/O enabled).
pub fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(future)
}
