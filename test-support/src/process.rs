//! Child processes waited for with a deadline against a hang: a test never blocks for ever.

use std::process::{Child, Command, Output};
use std::sync::mpsc;
use std::time::Duration;

/// Waits for `child` to end and returns its exit code; kills it (SIGKILL) and fails the test if it
/// is still running after `limit`.
pub fn wait_exit(child: Child, limit: Duration) -> Option<i32> {
    let pid = child.id();
    let mut child = child;
    let (done, waiting) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait());
    });
    match waiting.recv_timeout(limit) {
        Ok(status) => status.expect("wait").code(),
        Err(_) => {
            kill(pid);
            panic!("process {pid} still running after {limit:?}");
        }
    }
}

/// Waits for `child` and collects its output; kills it and fails the test after `limit`.
pub fn wait_output(child: Child, limit: Duration) -> Output {
    let pid = child.id();
    let (done, waiting) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match waiting.recv_timeout(limit) {
        Ok(output) => output.expect("wait"),
        Err(_) => {
            kill(pid);
            panic!("process {pid} still running after {limit:?}");
        }
    }
}

fn kill(pid: u32) {
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
}
