//! Multi round-trip requests (2026-07-28) on the server: the answers a retried request
//! carries, the questions a handler asks, and the signed `requestState` that carries earlier
//! answers between rounds so the server keeps nothing in memory.
//!
//! `requestState` is attacker-controlled input. It is sealed with HMAC-SHA256 under a key the
//! server picks at random (or the deployment configures, for several instances), and binds the
//! method, a digest of the request's salient params and an expiry, so a state cannot be
//! tampered with, replayed on a different request, or kept forever.

use std::{
    collections::{BTreeMap, HashMap},
    future::Future,
    task::Poll,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::Notify;

use crate::{
    jsonrpc::ErrorObject,
    protocol::{InputRequest, JsonObject, ProtocolVersion},
    session::HandlerResult,
    sync::Mutex,
};

/// How long a `requestState` stays valid.
pub(crate) const STATE_TTL: Duration = Duration::from_secs(600);

/// Rounds of a single request; a handler that keeps asking after this many is stopped.
pub(crate) const MAX_ANSWERS: usize = 64;

/// One round of a stateless request.
///
/// The round is over once the handler asked something and then stopped asking. Questions a
/// handler asks together (a join of several elicitations) must all reach `inputRequests`,
/// or the client answers one per retry. Two things make that hold: the dispatcher keeps
/// polling the handler until a poll registers nothing new (questions of a native join or of
/// a task it spawned), and a batch of questions handed over at once (a binding's
/// [`Context::ask_all`](super::Context::ask_all): every question a JavaScript or Python
/// handler asked in one tick of its event loop) holds the round open until the whole batch
/// has registered, whichever thread it runs on.
#[derive(Debug)]
pub(crate) struct InputRound {
    answers: BTreeMap<String, Value>,
    state: Mutex<RoundState>,
    /// Fires when the handler asked a question or failed, outside a batch.
    pub(crate) ended: Notify,
    /// Fires when the last batch holding the round open has registered.
    released: Notify,
}

#[derive(Debug, Default)]
struct RoundState {
    counters: HashMap<&'static str, usize>,
    asked: BTreeMap<String, InputRequest>,
    failure: Option<ErrorObject>,
    /// Batches being registered right now.
    holds: usize,
}

/// Keeps a round open while a batch of questions registers; dropping it lets the round end.
pub(crate) struct RoundHold<'a>(&'a InputRound);

impl Drop for RoundHold<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock();
        state.holds -= 1;
        let over = state.holds == 0 && (!state.asked.is_empty() || state.failure.is_some());
        drop(state);
        if over {
            self.0.ended.notify_one();
        }
        self.0.released.notify_waiters();
    }
}

/// How a round ended when the handler did not simply return.
pub(crate) enum RoundEnd {
    /// Questions for the client.
    Asked(BTreeMap<String, InputRequest>),
    /// A protocol error (a missing client capability, say).
    Failed(ErrorObject),
}

impl InputRound {
    pub(crate) fn new(answers: BTreeMap<String, Value>) -> Self {
        InputRound {
            answers,
            state: Mutex::new(RoundState::default()),
            ended: Notify::new(),
            released: Notify::new(),
        }
    }

    /// Holds the round open until the guard drops (see the type's doc).
    pub(crate) fn hold(&self) -> RoundHold<'_> {
        self.state.lock().holds += 1;
        RoundHold(self)
    }

    /// Questions registered so far (how the dispatcher sees that a poll asked more).
    pub(crate) fn asked_count(&self) -> usize {
        self.state.lock().asked.len()
    }

    /// Waits until no batch holds the round open.
    pub(crate) async fn released(&self) {
        loop {
            let released = self.released.notified();
            let mut released = std::pin::pin!(released);
            // Registered before the check, so a release between the check and the wait is seen.
            released.as_mut().enable();
            if self.state.lock().holds == 0 {
                return;
            }
            released.await;
        }
    }

    /// The key of the next question of this kind: deterministic, so the same handler asks
    /// the same keys on every run.
    pub(crate) fn next_key(&self, kind: &'static str) -> String {
        let mut state = self.state.lock();
        let n = state.counters.entry(kind).or_default();
        let key = format!("{kind}-{n}");
        *n += 1;
        key
    }

    pub(crate) fn answer(&self, key: &str) -> Option<Value> {
        self.answers.get(key).cloned()
    }

    pub(crate) fn ask(&self, key: String, method: &str, params: Value) {
        let mut state = self.state.lock();
        state.asked.insert(
            key,
            InputRequest {
                method: method.to_owned(),
                params: Some(params),
            },
        );
        let held = state.holds > 0;
        drop(state);
        if !held {
            self.ended.notify_one();
        }
    }

    pub(crate) fn fail(&self, error: ErrorObject) {
        let mut state = self.state.lock();
        state.failure.get_or_insert(error);
        let held = state.holds > 0;
        drop(state);
        if !held {
            self.ended.notify_one();
        }
    }

    /// How the round ended, if the handler asked or failed.
    pub(crate) fn end(&self) -> Option<RoundEnd> {
        let mut state = self.state.lock();
        if let Some(error) = state.failure.take() {
            return Some(RoundEnd::Failed(error));
        }
        if state.asked.is_empty() {
            return None;
        }
        Some(RoundEnd::Asked(std::mem::take(&mut state.asked)))
    }

    /// All answers so far (to carry into the next round's state).
    pub(crate) fn answers(&self) -> &BTreeMap<String, Value> {
        &self.answers
    }
}

/// Polls at most this often after the first question before the round ends anyway: a handler
/// that keeps asking new questions on every poll is answered with what it asked so far.
const MAX_SETTLE_POLLS: usize = 64;

/// After a handler's first question: keeps polling it until a poll registers no new question
/// and no batch is still registering (see [`InputRound`]), so questions asked side by side all
/// go out in this round. `Some` if the handler finished instead.
pub(crate) async fn settle<F: Future + ?Sized>(
    round: &InputRound,
    mut future: std::pin::Pin<&mut F>,
) -> Option<F::Output> {
    let mut seen = round.asked_count();
    for _ in 0..MAX_SETTLE_POLLS {
        round.released().await;
        if let Poll::Ready(result) = futures::poll!(future.as_mut()) {
            return Some(result);
        }
        // Lets tasks the handler spawned, and batches on other threads, take their turn.
        tokio::task::yield_now().await;
        round.released().await;
        let now = round.asked_count();
        if now == seen {
            return None;
        }
        seen = now;
    }
    None
}

/// The answer of a round: the handler's result, or the questions it asked (with the sealed
/// state of the answers so far), or the protocol error it ran into.
pub(crate) fn conclude<T: Serialize>(
    server: &super::Inner,
    method: &str,
    digest: &str,
    round: &InputRound,
    version: ProtocolVersion,
    done: Option<Result<T, ErrorObject>>,
) -> HandlerResult {
    use super::lifecycle::respond;
    match round.end() {
        Some(RoundEnd::Failed(error)) => Err(error),
        Some(RoundEnd::Asked(requests)) => {
            let state = server.sealer.seal(method, digest, round.answers());
            let result = serde_json::json!({
                "resultType": "input_required",
                "inputRequests": requests,
                "requestState": state,
            });
            respond(server, Some(version), &result)
        }
        None => match done {
            Some(result) => respond(server, Some(version), &result?),
            None => Err(ErrorObject::internal(
                "Internal error: the handler stopped without an answer",
            )),
        },
    }
}

/// What a sealed `requestState` holds.
#[derive(Serialize, Deserialize)]
struct StatePayload {
    /// The request method the state belongs to.
    m: String,
    /// SHA-256 of the request's salient params (hex).
    d: String,
    /// Expiry, seconds since the epoch.
    e: u64,
    /// Answers given in earlier rounds.
    a: BTreeMap<String, Value>,
}

/// Seals and opens `requestState` values.
#[derive(Clone)]
pub(crate) struct StateSealer {
    key: [u8; 32],
}

impl std::fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateSealer(..)")
    }
}

impl StateSealer {
    pub(crate) fn new(key: [u8; 32]) -> Self {
        StateSealer { key }
    }

    pub(crate) fn random() -> Self {
        let mut key = [0u8; 32];
        crate::random::fill(&mut key);
        StateSealer { key }
    }

    fn mac(&self, data: &[u8]) -> Vec<u8> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .expect("HMAC takes keys of any length");
        mac.update(data);
        mac.finalize().into_bytes().to_vec()
    }

    pub(crate) fn seal(
        &self,
        method: &str,
        digest: &str,
        answers: &BTreeMap<String, Value>,
    ) -> String {
        let payload = StatePayload {
            m: method.to_owned(),
            d: digest.to_owned(),
            e: now_secs() + STATE_TTL.as_secs(),
            a: answers.clone(),
        };
        let body = serde_json::to_vec(&payload).unwrap_or_default();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&body),
            URL_SAFE_NO_PAD.encode(self.mac(&body))
        )
    }

    /// The answers of earlier rounds, if the state is genuine, fresh and for this request.
    pub(crate) fn open(
        &self,
        state: &str,
        method: &str,
        digest: &str,
    ) -> Result<BTreeMap<String, Value>, ErrorObject> {
        let invalid =
            |why: &str| ErrorObject::invalid_params(format!("Invalid params: requestState {why}"));
        let (body, tag) = state
            .split_once('.')
            .ok_or_else(|| invalid("is malformed"))?;
        let body = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| invalid("is malformed"))?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| invalid("is malformed"))?;
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .expect("HMAC takes keys of any length");
        mac.update(&body);
        mac.verify_slice(&tag)
            .map_err(|_| invalid("failed verification"))?;
        let payload: StatePayload =
            serde_json::from_slice(&body).map_err(|_| invalid("is malformed"))?;
        if payload.m != method || payload.d != digest {
            return Err(invalid("belongs to a different request"));
        }
        if payload.e < now_secs() {
            return Err(invalid("has expired"));
        }
        Ok(payload.a)
    }
}

/// SHA-256 (hex) of a canonical rendering of the request's salient params: object keys sorted,
/// so a client that reorders members on the retry still matches.
pub(crate) fn digest(salient: &Value) -> String {
    fn canonical(v: &Value) -> Value {
        match v {
            Value::Object(map) => {
                let mut sorted: Vec<(&String, &Value)> = map.iter().collect();
                sorted.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(
                    sorted
                        .into_iter()
                        .map(|(k, v)| (k.clone(), canonical(v)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
            other => other.clone(),
        }
    }
    let bytes = serde_json::to_vec(&canonical(salient)).unwrap_or_default();
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The answers a retried request carries: `inputResponses` merged over the earlier rounds'
/// answers from a verified `requestState`.
pub(crate) fn answers_of(
    sealer: &StateSealer,
    method: &str,
    digest: &str,
    extra: &JsonObject,
) -> Result<BTreeMap<String, Value>, ErrorObject> {
    let mut answers = match extra.get("requestState") {
        None => BTreeMap::new(),
        Some(Value::String(state)) => sealer.open(state, method, digest)?,
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "Invalid params: requestState must be a string",
            ));
        }
    };
    match extra.get("inputResponses") {
        None => {}
        Some(Value::Object(responses)) => {
            for (key, value) in responses {
                if !value.is_object() {
                    return Err(ErrorObject::invalid_params(format!(
                        "Invalid params: inputResponses[{key:?}] must be an object"
                    )));
                }
                answers.insert(key.clone(), value.clone());
            }
        }
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "Invalid params: inputResponses must be an object",
            ));
        }
    }
    if answers.len() > MAX_ANSWERS {
        return Err(ErrorObject::invalid_params(
            "Invalid params: too many inputResponses",
        ));
    }
    Ok(answers)
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn sealed_state_round_trips_and_refuses_tampering() {
        let sealer = StateSealer::random();
        let d = digest(&json!({"name": "t", "arguments": {"b": 1, "a": 2}}));
        assert_eq!(
            d,
            digest(&json!({"arguments": {"a": 2, "b": 1}, "name": "t"}))
        );
        let answers = BTreeMap::from([("elicitation-0".to_owned(), json!({"action": "accept"}))]);
        let state = sealer.seal("tools/call", &d, &answers);
        assert_eq!(sealer.open(&state, "tools/call", &d).unwrap(), answers);
        assert!(sealer.open(&state, "prompts/get", &d).is_err());
        assert!(
            sealer
                .open(&state, "tools/call", &digest(&json!({"name": "other"})))
                .is_err()
        );
        assert!(
            StateSealer::random()
                .open(&state, "tools/call", &d)
                .is_err()
        );
        let mut forged = state.clone();
        forged.replace_range(0..2, "ey");
        let _ = sealer.open(&forged, "tools/call", &d);
        for bad in ["", ".", "abc", "a.b", &state.replace('.', "")] {
            assert!(sealer.open(bad, "tools/call", &d).is_err(), "{bad}");
        }
    }
}
