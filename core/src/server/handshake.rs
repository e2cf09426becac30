//! Change notifications kept in step with a session's handshake.
//!
//! A server tells its client when a list changes (`notifications/{tools,prompts,resources}/
//! list_changed`) and when a subscribed resource changes (`notifications/resources/updated`).
//! Registrations happen at any time, also while a client's handshake is open, and strict
//! clients fail a handshake that hears anything but the `initialize` answer first (effect-mcp
//! #18: Warp's rmcp client on an early `resources/list_changed`). So what a session is told
//! depends on where its handshake is:
//!
//! - before `initialize` is answered: nothing. The client has not listed anything yet, and
//!   will list what is registered by the time it does;
//! - between `initialize` and the client's `notifications/initialized`: nothing yet. Each kind
//!   of change is remembered once (a set of methods, a set of updated URIs) and sent once when
//!   `initialized` arrives: the client may have listed in between, and must hear the list went
//!   stale, but once is enough;
//! - after `initialized`: at once.
//!
//! The phase is the session's own ([`Phase`]); it is read and moved under the session's state
//! lock, and a change is sent or remembered while that lock is held, so a change can neither
//! slip out before `initialized` nor be remembered after the flush and never sent. The
//! `initialize` answer is queued before the `initialized` it enables is even read (the engine
//! finishes `initialize` before it reads on), so nothing sent from here can overtake it.

use std::collections::BTreeSet;

use serde_json::json;

use super::session_data::SessionData;
use crate::{
    protocol::methods,
    session::{Phase, Session},
    transport::Route,
};

/// One change a session may have to hear about.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Change<'a> {
    /// A list changed: the `notifications/.../list_changed` method.
    ListChanged(&'a str),
    /// A resource the session subscribed to changed.
    Updated(&'a str),
}

/// What a session in the middle of its handshake has not been told yet.
#[derive(Debug, Default)]
pub(crate) struct HeldBack {
    /// `list_changed` methods, in the order they first changed (three at most).
    list_changed: Vec<String>,
    /// Updated URIs, each once.
    updated: BTreeSet<String>,
}

impl HeldBack {
    fn hold(&mut self, change: Change<'_>) {
        match change {
            Change::ListChanged(method) => {
                if !self.list_changed.iter().any(|m| m == method) {
                    self.list_changed.push(method.to_owned());
                }
            }
            Change::Updated(uri) => {
                if !self.updated.contains(uri) {
                    self.updated.insert(uri.to_owned());
                }
            }
        }
    }
}

/// Tells `session` of `change` as its handshake allows: now, after `initialized`, or not at
/// all (see the module doc).
pub(crate) fn tell(session: &Session, data: &SessionData, change: Change<'_>) {
    session.with_state(|state| match state.phase {
        Phase::Ready => send(session, change),
        Phase::Initializing => data.held.lock().hold(change),
        Phase::Fresh | Phase::Closed => {}
    });
}

/// The client's `notifications/initialized`: the handshake is complete, and what changed
/// while it was open is sent, each kind once. A second `initialized` (or one before
/// `initialize`) changes nothing and sends nothing.
pub(crate) fn initialized(session: &Session, data: &SessionData) {
    session.update_state(|state| {
        if state.phase != Phase::Initializing {
            return;
        }
        state.phase = Phase::Ready;
        // Sent while the state is still locked: a change told from now on (and so sent at
        // once) cannot overtake these.
        let held = std::mem::take(&mut *data.held.lock());
        for method in &held.list_changed {
            send(session, Change::ListChanged(method));
        }
        // A resource unsubscribed from in the meantime is no longer the client's concern.
        let updated: Vec<String> = {
            let subscriptions = data.subscriptions.lock();
            held.updated
                .into_iter()
                .filter(|uri| subscriptions.contains(uri))
                .collect()
        };
        for uri in &updated {
            send(session, Change::Updated(uri));
        }
    });
}

fn send(session: &Session, change: Change<'_>) {
    match change {
        Change::ListChanged(method) => session.notify_nowait(method, None, Route::Unrelated),
        Change::Updated(uri) => session.notify_nowait(
            methods::RESOURCES_UPDATED,
            Some(json!({ "uri": uri })),
            Route::Unrelated,
        ),
    }
}
