//! What a linter leaves behind. The provider process is the subreaper of everything its linters
//! start (`asp-bridge provider linters` adopts, [`rpc_peer::child::strays`]), so a process that
//! left its run's group (`setsid`, a double fork into a group of its own) and outlived the run
//! becomes the provider's child instead of init's. Once the last run in flight has ended, every
//! child of the provider (a stray: no run is left to own it) is killed with its group and reaped,
//! round after round as the strays' own children come back; so are the exited ones that come back
//! the same way, and whatever is left when the provider ends. A sweep while another run is in
//! flight would end what that run still uses (a linter's daemon), so the last run to end sweeps.
//!
//! A run is in flight from its leader's spawn ([`spawn`], under the lock a sweep takes while it
//! chooses whom to kill) until its leader is reaped ([`Leader`]).

use std::sync::Mutex;

use rpc_peer::child::strays as reaper;
use rpc_peer::lock;
use tokio::process::{Child, Command};

/// The runs in flight: their leaders, from their spawn until they are reaped.
static IN_FLIGHT: Mutex<usize> = Mutex::new(0);

/// A run in flight: drop it once its leader is reaped, never before.
pub(crate) struct Leader(());

impl Drop for Leader {
    fn drop(&mut self) {
        *lock(&IN_FLIGHT) -= 1;
    }
}

/// Spawns `command` as a run's leader, in flight before any sweep can see it.
pub(crate) fn spawn(command: &mut Command) -> std::io::Result<(Child, Leader)> {
    let mut in_flight = lock(&IN_FLIGHT);
    let child = command.spawn()?;
    *in_flight += 1;
    Ok((child, Leader(())))
}

/// Ends every stray with its group, round after round as their children come back, while no run
/// is in flight (the lock on the runs in flight is held while a round's strays are chosen).
pub(crate) async fn sweep() {
    reaper::end_all_while(|| {
        let in_flight = lock(&IN_FLIGHT);
        (*in_flight == 0).then_some(in_flight)
    })
    .await;
}
