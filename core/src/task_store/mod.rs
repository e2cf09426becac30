//! Where tasks live: a store behind a trait, in memory by default and on Redis when a server
//! is scaled out, so a task created through one replica is read, answered, cancelled and
//! collected through any other.
//!
//! A task is a set of named fields, each a JSON text. The fields are laid out so that no two
//! replicas ever write the same field, and the only contested one is written once:
//!
//! | field | written by | when |
//! |---|---|---|
//! | `meta` | the creator | at creation; never changes |
//! | `scope` | the creator | at creation: whose task it is (see `server::tasks`) |
//! | `state` | the replica running it | its status message and last change (working or input) |
//! | `lease` | the replica running it | renewed while it runs: when it stops being trusted |
//! | `ask:<key>` | the replica running it | a question waiting for the client |
//! | `answer:<key>` | whoever serves `tasks/update` | once per key ([`TaskStore::set_once`]) |
//! | `final` | the first of: the runner finishing, a cancel, a reader finding the lease expired | once ([`TaskStore::finish`]) |
//!
//! So the status a client reads is derived, never stored in two places: `final` if present,
//! else `input_required` while some `ask:` has no `answer:`, else `working`. A cancel that
//! wins `final` cannot be overwritten by the runner finishing a moment later, and a task whose
//! replica died is failed by the first reader that sees its lease run out.
//!
//! Each store counts the running tasks of each scope, so a client cannot start more than its
//! bound at once; [`TaskStore::finish`] frees the place.

mod memory;

use std::{collections::HashMap, time::Duration};

use futures::future::BoxFuture;

pub use memory::MemoryTaskStore;

/// A task's stored fields: name → JSON text.
pub type TaskFields = HashMap<String, String>;

/// The field names (see the module doc).
pub mod field {
    /// Immutable facts: era, times, tool.
    pub const META: &str = "meta";
    /// Whose task it is.
    pub const SCOPE: &str = "scope";
    /// Status message and last change, written by the runner.
    pub const STATE: &str = "state";
    /// Milliseconds since the epoch after which the runner is presumed gone.
    pub const LEASE: &str = "lease";
    /// The outcome: completed, failed or cancelled.
    pub const FINAL: &str = "final";
    /// Prefix of a question's field.
    pub const ASK: &str = "ask:";
    /// Prefix of an answer's field.
    pub const ANSWER: &str = "answer:";
}

/// A task to create.
#[derive(Clone, Debug)]
pub struct NewTask {
    /// Its id (128 random bits).
    pub id: String,
    /// Whose it is: the bound on running tasks is per scope, and `tasks/list` lists one.
    pub scope: String,
    /// Its first fields (`meta`, `state`, `lease`).
    pub fields: Vec<(String, String)>,
    /// How long the store keeps it from now.
    pub ttl: Duration,
    /// How many running tasks the scope may have, this one included.
    pub limit: usize,
    /// How many tasks of the scope are kept at all, finished ones included: past it the
    /// oldest finished ones go before their TTL (a client cannot fill the store with results).
    pub keep: usize,
}

/// What [`TaskStore::set_once`] and [`TaskStore::finish`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOnce {
    /// This call wrote it.
    Written,
    /// It was already set; nothing changed.
    AlreadySet,
    /// There is no such task (never was, or expired).
    Missing,
}

/// Why a store operation failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TaskStoreError {
    /// The scope already has as many running tasks as it may.
    #[error("too many running tasks: at most {limit} at once")]
    TooMany {
        /// The bound.
        limit: usize,
    },
    /// The store cannot be reached.
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
}

/// Storage of tasks. Every method is bounded in time.
pub trait TaskStore: Send + Sync + std::fmt::Debug + 'static {
    /// Creates a task, unless its scope already runs `limit` tasks ([`TaskStoreError::TooMany`]).
    fn create(&self, task: NewTask) -> BoxFuture<'static, Result<(), TaskStoreError>>;

    /// Every field of a task; `None` when there is no such task (or it expired).
    fn load(&self, id: &str) -> BoxFuture<'static, Result<Option<TaskFields>, TaskStoreError>>;

    /// Writes fields of an existing task; `false` when the task is gone (it is not recreated).
    fn set(
        &self,
        id: &str,
        fields: Vec<(String, String)>,
    ) -> BoxFuture<'static, Result<bool, TaskStoreError>>;

    /// Writes a field unless it already has a value.
    fn set_once(
        &self,
        id: &str,
        field: &str,
        value: String,
    ) -> BoxFuture<'static, Result<SetOnce, TaskStoreError>>;

    /// Removes fields of a task (answered questions).
    fn remove(
        &self,
        id: &str,
        fields: Vec<String>,
    ) -> BoxFuture<'static, Result<(), TaskStoreError>>;

    /// Writes the outcome unless there is one already, and when this call wrote it, frees
    /// the task's place among its scope's running tasks.
    fn finish(
        &self,
        id: &str,
        outcome: String,
    ) -> BoxFuture<'static, Result<SetOnce, TaskStoreError>>;

    /// Frees a place among the scope's running tasks without an outcome (the task expired
    /// while it ran).
    fn release(&self, scope: &str) -> BoxFuture<'static, Result<(), TaskStoreError>>;

    /// Ids of the scope's tasks that still exist, oldest first, from `offset`; and whether
    /// more follow.
    fn list(
        &self,
        scope: &str,
        offset: usize,
        limit: usize,
    ) -> BoxFuture<'static, Result<(Vec<String>, bool), TaskStoreError>>;
}
