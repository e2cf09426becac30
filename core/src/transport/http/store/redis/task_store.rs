//! The [`TaskStore`] of a scaled-out server on Redis: one hash per task, expiring with the
//! task's TTL, a counter of running tasks and a sorted set (by creation) per scope.
//!
//! Each operation that must look before it writes is one Lua script, so it is atomic on the
//! server: a task is never recreated by a late write after it expired, the first outcome
//! wins (`HSETNX`) and frees the scope's place in the same step, and the bound on running
//! tasks cannot be overshot by two replicas creating at once. (The scripts touch keys
//! derived from the task's scope, so this store needs a single Redis, not a cluster.)

use std::sync::Arc;

use futures::future::BoxFuture;
use redis::{Script, aio::ConnectionManager};

use crate::task_store::{NewTask, SetOnce, TaskFields, TaskStore, TaskStoreError, field};

/// Tasks on Redis (see the module doc).
pub(crate) struct RedisTaskStore {
    conn: ConnectionManager,
    prefix: String,
    scripts: Arc<Scripts>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

struct Scripts {
    create: Script,
    set: Script,
    set_once: Script,
    finish: Script,
    release: Script,
}

/// KEYS: task, running counter, list. ARGV: limit, ttl ms, created ms, id, keep, the task
/// key prefix, then field/value pairs. 1 created, 0 over the limit. The counter and the list
/// live as long as the longest task of their scope; past `keep` tasks in the list, the oldest
/// finished ones (and the ids of expired ones) go.
const CREATE: &str = r"
local n = redis.call('INCR', KEYS[2])
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[2])
  return 0
end
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], unpack(ARGV, 7))
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
for _, key in ipairs({KEYS[2], KEYS[3]}) do
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
local excess = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[5])
if excess > 0 then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    if excess <= 0 then break end
    local key = ARGV[6] .. id
    if redis.call('EXISTS', key) == 0 then
      redis.call('ZREM', KEYS[3], id)
      excess = excess - 1
    elseif redis.call('HEXISTS', key, 'final') == 1 then
      redis.call('DEL', key)
      redis.call('ZREM', KEYS[3], id)
      excess = excess - 1
    end
  end
end
return 1
";

/// KEYS: task. ARGV: field/value pairs. 1 written, 0 no such task (nothing is created).
const SET: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
";

/// KEYS: task. ARGV: field, value. 1 written, 0 already set, -1 no such task.
const SET_ONCE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
";

/// KEYS: task. ARGV: outcome, the running counters' key prefix. As SET_ONCE on `final`, and
/// the task's scope gets its place back when this call wrote it.
const FINISH: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HSETNX', KEYS[1], 'final', ARGV[1]) == 0 then return 0 end
local scope = redis.call('HGET', KEYS[1], 'scope')
if scope then
  local key = ARGV[2] .. scope
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 1
";

/// KEYS: running counter. Gives one place back (never below zero).
const RELEASE: &str = r"
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
return 1
";

fn unavailable(e: redis::RedisError) -> TaskStoreError {
    TaskStoreError::Unavailable(e.to_string())
}

fn set_once_of(code: i64) -> SetOnce {
    match code {
        1 => SetOnce::Written,
        0 => SetOnce::AlreadySet,
        _ => SetOnce::Missing,
    }
}

impl RedisTaskStore {
    pub(crate) fn new(conn: ConnectionManager, prefix: String) -> Self {
        RedisTaskStore {
            conn,
            prefix,
            scripts: Arc::new(Scripts {
                create: Script::new(CREATE),
                set: Script::new(SET),
                set_once: Script::new(SET_ONCE),
                finish: Script::new(FINISH),
                release: Script::new(RELEASE),
            }),
        }
    }

    fn task_key(&self, id: &str) -> String {
        format!("{}task:{id}", self.prefix)
    }

    fn running_prefix(&self) -> String {
        format!("{}task-running:", self.prefix)
    }

    fn list_key(&self, scope: &str) -> String {
        format!("{}task-list:{scope}", self.prefix)
    }
}

impl TaskStore for RedisTaskStore {
    fn create(&self, task: NewTask) -> BoxFuture<'static, Result<(), TaskStoreError>> {
        let mut conn = self.conn.clone();
        let scripts = self.scripts.clone();
        let keys = [
            self.task_key(&task.id),
            format!("{}{}", self.running_prefix(), task.scope),
            self.list_key(&task.scope),
        ];
        let task_prefix = format!("{}task:", self.prefix);
        Box::pin(async move {
            let mut call = scripts.create.prepare_invoke();
            call.key(&keys[0]).key(&keys[1]).key(&keys[2]);
            let created = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            call.arg(task.limit)
                .arg(task.ttl.as_millis().max(1) as u64)
                .arg(created)
                .arg(&task.id)
                .arg(task.keep)
                .arg(&task_prefix)
                .arg(field::SCOPE)
                .arg(&task.scope);
            for (name, value) in &task.fields {
                call.arg(name).arg(value);
            }
            let created: i64 = call.invoke_async(&mut conn).await.map_err(unavailable)?;
            match created {
                1 => Ok(()),
                _ => Err(TaskStoreError::TooMany { limit: task.limit }),
            }
        })
    }

    fn load(&self, id: &str) -> BoxFuture<'static, Result<Option<TaskFields>, TaskStoreError>> {
        let mut conn = self.conn.clone();
        let key = self.task_key(id);
        Box::pin(async move {
            let fields: TaskFields = redis::cmd("HGETALL")
                .arg(&key)
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok((!fields.is_empty()).then_some(fields))
        })
    }

    fn set(
        &self,
        id: &str,
        fields: Vec<(String, String)>,
    ) -> BoxFuture<'static, Result<bool, TaskStoreError>> {
        let mut conn = self.conn.clone();
        let scripts = self.scripts.clone();
        let key = self.task_key(id);
        Box::pin(async move {
            if fields.is_empty() {
                return Ok(true);
            }
            let mut call = scripts.set.prepare_invoke();
            call.key(&key);
            for (name, value) in &fields {
                call.arg(name).arg(value);
            }
            let written: i64 = call.invoke_async(&mut conn).await.map_err(unavailable)?;
            Ok(written == 1)
        })
    }

    fn set_once(
        &self,
        id: &str,
        name: &str,
        value: String,
    ) -> BoxFuture<'static, Result<SetOnce, TaskStoreError>> {
        let mut conn = self.conn.clone();
        let scripts = self.scripts.clone();
        let key = self.task_key(id);
        let name = name.to_owned();
        Box::pin(async move {
            let code: i64 = scripts
                .set_once
                .key(&key)
                .arg(&name)
                .arg(&value)
                .invoke_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(set_once_of(code))
        })
    }

    fn remove(
        &self,
        id: &str,
        fields: Vec<String>,
    ) -> BoxFuture<'static, Result<(), TaskStoreError>> {
        let mut conn = self.conn.clone();
        let key = self.task_key(id);
        Box::pin(async move {
            if fields.is_empty() {
                return Ok(());
            }
            redis::cmd("HDEL")
                .arg(&key)
                .arg(&fields)
                .query_async::<()>(&mut conn)
                .await
                .map_err(unavailable)
        })
    }

    fn finish(
        &self,
        id: &str,
        outcome: String,
    ) -> BoxFuture<'static, Result<SetOnce, TaskStoreError>> {
        let mut conn = self.conn.clone();
        let scripts = self.scripts.clone();
        let key = self.task_key(id);
        let running = self.running_prefix();
        Box::pin(async move {
            let code: i64 = scripts
                .finish
                .key(&key)
                .arg(&outcome)
                .arg(&running)
                .invoke_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(set_once_of(code))
        })
    }

    fn release(&self, scope: &str) -> BoxFuture<'static, Result<(), TaskStoreError>> {
        let mut conn = self.conn.clone();
        let scripts = self.scripts.clone();
        let key = format!("{}{scope}", self.running_prefix());
        Box::pin(async move {
            scripts
                .release
                .key(&key)
                .invoke_async::<i64>(&mut conn)
                .await
                .map(|_| ())
                .map_err(unavailable)
        })
    }

    fn list(
        &self,
        scope: &str,
        offset: usize,
        limit: usize,
    ) -> BoxFuture<'static, Result<(Vec<String>, bool), TaskStoreError>> {
        let mut conn = self.conn.clone();
        let list = self.list_key(scope);
        let prefix = self.prefix.clone();
        Box::pin(async move {
            // Expired tasks leave their ids behind: drop those first, so pages count only
            // tasks that exist.
            let ids: Vec<String> = redis::cmd("ZRANGE")
                .arg(&list)
                .arg(0)
                .arg(-1)
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            let mut exists = redis::pipe();
            for id in &ids {
                exists.exists(format!("{prefix}task:{id}"));
            }
            let alive: Vec<bool> = if ids.is_empty() {
                Vec::new()
            } else {
                exists.query_async(&mut conn).await.map_err(unavailable)?
            };
            let (live, gone): (Vec<_>, Vec<_>) =
                ids.into_iter().zip(alive).partition(|(_, alive)| *alive);
            if !gone.is_empty() {
                let gone: Vec<String> = gone.into_iter().map(|(id, _)| id).collect();
                redis::cmd("ZREM")
                    .arg(&list)
                    .arg(&gone)
                    .query_async::<()>(&mut conn)
                    .await
                    .map_err(unavailable)?;
            }
            let more = live.len() > offset.saturating_add(limit);
            let page = live
                .into_iter()
                .skip(offset)
                .take(limit)
                .map(|(id, _)| id)
                .collect();
            Ok((page, more))
        })
    }
}
