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

use rpc_peer::child::strays::{self as reaper, LIMIT, Stray};
use rpc_peer::lock;
use tokio::process::{Child, Command};

/// The runs in flight: their leaders, from their spawn until they are reaped.
static IN_FLIGHT: Mutex<usize> = Mutex::new(0);
/// One sweep at a time: a pid one sweep reaped is never signalled by another.
static SWEEPING: Mutex<()> = Mutex::new(());
/// Most rounds of one sweep: each ends one generation of strays, whose children come back next.
const ROUNDS: usize = 16;

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

/// Ends every stray, waiting at most [`LIMIT`] for them to be reaped (off the async threads).
pub(crate) async fn sweep() {
    if reaper::adopting() {
        let _ = tokio::time::timeout(LIMIT, tokio::task::spawn_blocking(sweep_now)).await;
    }
}

/// Kills each stray with its group, then reaps it; again for the strays that came back meanwhile.
/// Nothing while a run is in flight.
fn sweep_now() {
    let _one = lock(&SWEEPING);
    for _ in 0..ROUNDS {
        let strays: Vec<Stray> = {
            let in_flight = lock(&IN_FLIGHT);
            if *in_flight > 0 {
                return;
            }
            let strays = reaper::children();
            strays.iter().for_each(reaper::end);
            strays
        };
        if strays.is_empty() {
            return;
        }
        for stray in strays {
            reaper::reap(stray.pid);
        }
    }
}
