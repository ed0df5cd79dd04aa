//! Stage 4, touches: the session mounted, the touches earlier invocations
//! deferred while it was busy reconciled, then this event's own
//! ([`crate::touch::apply`], R-HOOK-3).

use dsh_instructions_discovery::CancellationToken;
use dsh_instructions_session::{Record, Session, SessionError, SessionSettings};
use dsh_session_log::SessionLog;

use crate::agent::Agent;
use crate::deferred::apply_deferred;
use crate::event::HookEvent;
use crate::touch::Mounting;

/// A mounted session with the event's touches made.
#[derive(Debug)]
pub(crate) struct Touched {
    pub(crate) session: Session,
    /// How many deferred touches were reconciled first.
    pub(crate) deferred: usize,
}

/// Mounts the session over `log` and makes the event's touches.
///
/// # Errors
/// The mount's and the touches' session errors.
pub(crate) async fn touch(
    m: &Mounting<'_>,
    log: SessionLog,
    settings: &SessionSettings,
    agent: Agent,
    event: &HookEvent,
    fresh: bool,
    cancel: &CancellationToken,
) -> Result<Touched, SessionError> {
    let session = Session::mount(log, settings.apply(m.base.clone()), cancel).await?;
    let deferred = apply_deferred(&session, m.session_dir, Record::Transient).await?;
    crate::touch::apply(&session, agent, event, fresh).await?;
    Ok(Touched { session, deferred })
}
