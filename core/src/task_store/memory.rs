//! The task store of a single process: a map under one lock, each task dropped once its TTL
//! has passed.

use std::{
    collections::{HashMap, VecDeque},
    time::{Duration, Instant},
};

use futures::future::BoxFuture;

use super::{NewTask, SetOnce, TaskFields, TaskStore, TaskStoreError, field};
use crate::sync::Mutex;

/// A [`TaskStore`] in this process's memory (the default).
#[derive(Default)]
pub struct MemoryTaskStore {
    inner: Mutex<Tables>,
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTaskStore").finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Tables {
    tasks: HashMap<String, Stored>,
    /// Running tasks per scope.
    running: HashMap<String, usize>,
    /// Every task of each scope, in creation order (expired ones are skipped and pruned).
    by_scope: HashMap<String, VecDeque<String>>,
    last_sweep: Option<Instant>,
}

struct Stored {
    fields: TaskFields,
    scope: String,
    expires: Instant,
}

/// How often creation sweeps out expired tasks: the map never holds more than a sweep
/// interval's worth of dead ones.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

impl Tables {
    /// The task, unless it expired (then it is dropped).
    fn live(&mut self, id: &str) -> Option<&mut Stored> {
        let expired = self.tasks.get(id)?.expires <= Instant::now();
        if expired {
            self.tasks.remove(id);
            return None;
        }
        self.tasks.get_mut(id)
    }

    fn sweep(&mut self) {
        let now = Instant::now();
        if self.last_sweep.is_some_and(|t| now - t < SWEEP_EVERY) {
            return;
        }
        self.last_sweep = Some(now);
        self.tasks.retain(|_, t| t.expires > now);
        let tasks = &self.tasks;
        self.by_scope.retain(|_, ids| {
            ids.retain(|id| tasks.contains_key(id));
            !ids.is_empty()
        });
    }

    /// Drops the scope's oldest finished tasks while it keeps more than `keep`.
    fn evict_finished(&mut self, scope: &str, keep: usize) {
        let Some(ids) = self.by_scope.get_mut(scope) else {
            return;
        };
        let tasks = &mut self.tasks;
        ids.retain(|id| tasks.contains_key(id));
        let mut excess = ids.len().saturating_sub(keep);
        if excess == 0 {
            return;
        }
        ids.retain(|id| {
            let finished = tasks
                .get(id)
                .is_some_and(|t| t.fields.contains_key(field::FINAL));
            if excess > 0 && finished {
                tasks.remove(id);
                excess -= 1;
                false
            } else {
                true
            }
        });
    }

    fn release(&mut self, scope: &str) {
        if let Some(n) = self.running.get_mut(scope) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.running.remove(scope);
            }
        }
    }
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

fn ready<T: Send + 'static>(value: T) -> BoxFuture<'static, T> {
    Box::pin(std::future::ready(value))
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, task: NewTask) -> BoxFuture<'static, Result<(), TaskStoreError>> {
        let mut t = self.inner.lock();
        t.sweep();
        let running = t.running.entry(task.scope.clone()).or_default();
        if *running >= task.limit {
            return ready(Err(TaskStoreError::TooMany { limit: task.limit }));
        }
        *running += 1;
        let mut fields: TaskFields = task.fields.into_iter().collect();
        fields.insert(field::SCOPE.into(), task.scope.clone());
        t.by_scope
            .entry(task.scope.clone())
            .or_default()
            .push_back(task.id.clone());
        t.tasks.insert(
            task.id,
            Stored {
                fields,
                scope: task.scope.clone(),
                expires: Instant::now() + task.ttl,
            },
        );
        t.evict_finished(&task.scope, task.keep);
        ready(Ok(()))
    }

    fn load(&self, id: &str) -> BoxFuture<'static, Result<Option<TaskFields>, TaskStoreError>> {
        let fields = self.inner.lock().live(id).map(|t| t.fields.clone());
        ready(Ok(fields))
    }

    fn set(
        &self,
        id: &str,
        fields: Vec<(String, String)>,
    ) -> BoxFuture<'static, Result<bool, TaskStoreError>> {
        let mut t = self.inner.lock();
        let Some(task) = t.live(id) else {
            return ready(Ok(false));
        };
        task.fields.extend(fields);
        ready(Ok(true))
    }

    fn set_once(
        &self,
        id: &str,
        name: &str,
        value: String,
    ) -> BoxFuture<'static, Result<SetOnce, TaskStoreError>> {
        let mut t = self.inner.lock();
        let Some(task) = t.live(id) else {
            return ready(Ok(SetOnce::Missing));
        };
        if task.fields.contains_key(name) {
            return ready(Ok(SetOnce::AlreadySet));
        }
        task.fields.insert(name.to_owned(), value);
        ready(Ok(SetOnce::Written))
    }

    fn remove(
        &self,
        id: &str,
        fields: Vec<String>,
    ) -> BoxFuture<'static, Result<(), TaskStoreError>> {
        let mut t = self.inner.lock();
        if let Some(task) = t.live(id) {
            for name in fields {
                task.fields.remove(&name);
            }
        }
        ready(Ok(()))
    }

    fn finish(
        &self,
        id: &str,
        outcome: String,
    ) -> BoxFuture<'static, Result<SetOnce, TaskStoreError>> {
        let mut t = self.inner.lock();
        let Some(task) = t.live(id) else {
            return ready(Ok(SetOnce::Missing));
        };
        if task.fields.contains_key(field::FINAL) {
            return ready(Ok(SetOnce::AlreadySet));
        }
        task.fields.insert(field::FINAL.into(), outcome);
        let scope = task.scope.clone();
        t.release(&scope);
        ready(Ok(SetOnce::Written))
    }

    fn release(&self, scope: &str) -> BoxFuture<'static, Result<(), TaskStoreError>> {
        self.inner.lock().release(scope);
        ready(Ok(()))
    }

    fn list(
        &self,
        scope: &str,
        offset: usize,
        limit: usize,
    ) -> BoxFuture<'static, Result<(Vec<String>, bool), TaskStoreError>> {
        let mut t = self.inner.lock();
        let now = Instant::now();
        let ids: Vec<String> = t
            .by_scope
            .get(scope)
            .map(|ids| ids.iter().cloned().collect())
            .unwrap_or_default();
        let live: Vec<String> = ids
            .into_iter()
            .filter(|id| t.tasks.get(id).is_some_and(|s| s.expires > now))
            .collect();
        let more = live.len() > offset.saturating_add(limit);
        let page = live.into_iter().skip(offset).take(limit).collect();
        t.sweep();
        ready(Ok((page, more)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(id: &str, scope: &str, limit: usize, ttl: Duration) -> NewTask {
        NewTask {
            id: id.into(),
            scope: scope.into(),
            fields: vec![(field::META.into(), "{}".into())],
            ttl,
            limit,
            keep: 100,
        }
    }

    #[tokio::test]
    async fn past_the_bound_kept_the_oldest_finished_tasks_go_first() {
        let store = MemoryTaskStore::new();
        let long = Duration::from_secs(60);
        for id in ["a", "b", "c"] {
            store
                .create(NewTask {
                    keep: 3,
                    ..new(id, "s", 10, long)
                })
                .await
                .unwrap();
        }
        // a is still running, b finished: b goes when a fourth comes, a stays.
        store.finish("b", "done".into()).await.unwrap();
        store
            .create(NewTask {
                keep: 3,
                ..new("d", "s", 10, long)
            })
            .await
            .unwrap();
        assert!(store.load("b").await.unwrap().is_none());
        for id in ["a", "c", "d"] {
            assert!(store.load(id).await.unwrap().is_some(), "{id}");
        }
        // Nothing finished to drop: all kept (the running bound holds them in check).
        store
            .create(NewTask {
                keep: 3,
                ..new("e", "s", 10, long)
            })
            .await
            .unwrap();
        assert_eq!(store.list("s", 0, 10).await.unwrap().0.len(), 4);
    }

    #[tokio::test]
    async fn the_first_outcome_wins_and_frees_the_place() {
        let store = MemoryTaskStore::new();
        let long = Duration::from_secs(60);
        store.create(new("a", "s", 2, long)).await.unwrap();
        store.create(new("b", "s", 2, long)).await.unwrap();
        assert!(matches!(
            store.create(new("c", "s", 2, long)).await,
            Err(TaskStoreError::TooMany { limit: 2 })
        ));
        // Another scope has its own bound.
        store.create(new("x", "other", 2, long)).await.unwrap();
        assert_eq!(
            store.finish("a", "cancelled".into()).await.unwrap(),
            SetOnce::Written
        );
        assert_eq!(
            store.finish("a", "completed".into()).await.unwrap(),
            SetOnce::AlreadySet
        );
        assert_eq!(
            store.load("a").await.unwrap().unwrap()[field::FINAL],
            "cancelled"
        );
        store.create(new("c", "s", 2, long)).await.unwrap();
        assert_eq!(
            store.finish("nope", "x".into()).await.unwrap(),
            SetOnce::Missing
        );
        let (ids, more) = store.list("s", 0, 2).await.unwrap();
        assert_eq!((ids, more), (vec!["a".to_owned(), "b".to_owned()], true));
        assert_eq!(store.list("s", 2, 2).await.unwrap().0, vec!["c".to_owned()]);
    }

    #[tokio::test]
    async fn an_expired_task_is_gone_and_never_recreated() {
        let store = MemoryTaskStore::new();
        store
            .create(new("a", "s", 5, Duration::from_millis(20)))
            .await
            .unwrap();
        assert_eq!(
            store.set_once("a", "answer:k", "1".into()).await.unwrap(),
            SetOnce::Written
        );
        assert_eq!(
            store.set_once("a", "answer:k", "2".into()).await.unwrap(),
            SetOnce::AlreadySet
        );
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert!(store.load("a").await.unwrap().is_none());
        assert!(
            !store
                .set("a", vec![(field::LEASE.into(), "1".into())])
                .await
                .unwrap()
        );
        assert!(store.load("a").await.unwrap().is_none());
        assert!(store.list("s", 0, 10).await.unwrap().0.is_empty());
    }
}
