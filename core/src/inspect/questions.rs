//! The questions a server asks the person at the inspector: sampling (write the model's
//! answer by hand, or reject), elicitation (fill in the server's form, decline or cancel) and
//! roots (the list the person edits in the page).
//!
//! A question becomes an event the page shows as a form; the handler waits for the answer
//! `POST /api/answer` brings, for the server withdrawing it, or for [`ANSWER_TIME`]. The
//! answer is parsed into the protocol's own result type, so a malformed one is refused to the
//! page (and can be corrected) instead of reaching the server.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::events::Events;
use crate::{
    client::ClientOptions,
    jsonrpc::ErrorObject,
    protocol::{CreateMessageResult, ElicitResult, ListRootsResult, Root},
};

/// How long a question waits for the person.
pub(crate) const ANSWER_TIME: Duration = Duration::from_secs(600);

/// What the page answered: a result, or a refusal with its message.
type Answer = Result<Value, String>;

/// The open questions and the roots the person set.
#[derive(Default)]
pub(crate) struct Questions {
    open: Mutex<HashMap<String, (String, oneshot::Sender<Answer>)>>,
    roots: Mutex<Vec<Root>>,
}

impl Questions {
    /// Gives `options` the handlers that ask the person, for server `server`.
    pub(crate) fn attach(
        self: &Arc<Self>,
        events: &Arc<Events>,
        server: &str,
        options: ClientOptions,
    ) -> ClientOptions {
        let (q, e, s) = (self.clone(), events.clone(), server.to_owned());
        let options = options.sampling(move |params, cancel: CancellationToken| {
            let asked = q.ask(&e, &s, "sampling", json!(params), cancel);
            async move {
                serde_json::from_value::<CreateMessageResult>(asked.await.map_err(refused)?)
                    .map_err(|err| ErrorObject::invalid_params(format!("bad answer: {err}")))
            }
        });
        let (q, e, s) = (self.clone(), events.clone(), server.to_owned());
        let options = options.elicitation(move |params, cancel: CancellationToken| {
            let asked = q.ask(&e, &s, "elicitation", json!(params), cancel);
            async move {
                serde_json::from_value::<ElicitResult>(asked.await.map_err(refused)?)
                    .map_err(|err| ErrorObject::invalid_params(format!("bad answer: {err}")))
            }
        });
        let q = self.clone();
        options.roots(move |_cancel: CancellationToken| {
            let roots = q.roots.lock().map(|r| r.clone()).unwrap_or_default();
            async move { Ok(ListRootsResult { roots, meta: None }) }
        })
    }

    /// Shows the question and waits for its answer. A question the server withdraws
    /// (`cancel`), or that nobody answers in [`ANSWER_TIME`], is taken off the page.
    fn ask(
        self: &Arc<Self>,
        events: &Arc<Events>,
        server: &str,
        kind: &str,
        params: Value,
        cancel: CancellationToken,
    ) -> impl std::future::Future<Output = Answer> + Send + use<> {
        let id = crate::random::id128();
        let (tx, rx) = oneshot::channel();
        if let Ok(mut open) = self.open.lock() {
            open.insert(id.clone(), (kind.to_owned(), tx));
        }
        events.push(
            "question",
            json!({"id": id, "server": server, "question": kind, "params": params}),
        );
        let (me, events) = (self.clone(), events.clone());
        async move {
            let answer = tokio::select! {
                got = tokio::time::timeout(ANSWER_TIME, rx) => match got {
                    Ok(Ok(answer)) => return answer,
                    Ok(Err(_)) => "the inspector closed",
                    Err(_) => "nobody answered in time",
                },
                () = cancel.cancelled() => "the server withdrew the request",
            };
            let still_open = me.open.lock().ok().and_then(|mut o| o.remove(&id));
            if still_open.is_some() {
                events.push("answered", json!({"id": id, "withdrawn": answer}));
            }
            Err(answer.to_owned())
        }
    }

    /// Delivers the page's answer to question `id`. `reject` refuses it with that message.
    pub(crate) fn answer(
        &self,
        events: &Events,
        id: &str,
        result: Option<Value>,
        reject: Option<String>,
    ) -> Result<(), String> {
        let Some((kind, tx)) = self.open.lock().ok().and_then(|mut o| o.remove(id)) else {
            return Err("no open question with that id (answered, withdrawn or timed out)".into());
        };
        let answer = match (result, reject) {
            (_, Some(why)) => Err(why),
            (Some(r), None) => {
                // Checked here so a bad form comes back to the page, still open.
                let shaped = match kind.as_str() {
                    "sampling" => serde_json::from_value::<CreateMessageResult>(r.clone()).err(),
                    _ => serde_json::from_value::<ElicitResult>(r.clone()).err(),
                };
                if let Some(e) = shaped {
                    if let Ok(mut open) = self.open.lock() {
                        open.insert(id.to_owned(), (kind.clone(), tx));
                    }
                    return Err(format!("the answer does not fit a {kind} result: {e}"));
                }
                Ok(r)
            }
            (None, None) => Err("an answer needs `result` or `reject`".to_owned()),
        };
        let _ = tx.send(answer);
        events.push("answered", json!({"id": id}));
        Ok(())
    }

    /// Replaces the roots (each a `file://` URI with an optional name).
    pub(crate) fn set_roots(&self, roots: Value) -> Result<(), String> {
        let roots: Vec<Root> =
            serde_json::from_value(roots).map_err(|e| format!("roots are not a list: {e}"))?;
        if let Some(bad) = roots.iter().find(|r| !r.uri.starts_with("file://")) {
            return Err(format!("root `{}` is not a file:// URI", bad.uri));
        }
        if let Ok(mut r) = self.roots.lock() {
            *r = roots;
        }
        Ok(())
    }

    pub(crate) fn roots(&self) -> Vec<Root> {
        self.roots.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

fn refused(why: String) -> ErrorObject {
    // -1 is what the reference clients send for a request the user declined.
    ErrorObject::new(-1, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_answer_reaches_the_waiting_question_once() {
        let q = Arc::new(Questions::default());
        let events = Arc::new(Events::default());
        let waiting = q.ask(
            &events,
            "s",
            "elicitation",
            json!({"message": "name?"}),
            CancellationToken::new(),
        );
        let got = events.since(0, Duration::ZERO).await;
        let id = got["events"][0]["id"].as_str().unwrap().to_owned();
        assert_eq!(got["events"][0]["question"], "elicitation");
        // Not an ElicitResult: refused, and the question stays open.
        let bad = q.answer(&events, &id, Some(json!({"action": "maybe"})), None);
        assert!(bad.unwrap_err().contains("does not fit"));
        q.answer(
            &events,
            &id,
            Some(json!({"action": "accept", "content": {"name": "Ada"}})),
            None,
        )
        .unwrap();
        assert_eq!(waiting.await.unwrap()["content"]["name"], "Ada");
        assert!(q.answer(&events, &id, None, Some("late".into())).is_err());
        assert!(
            q.answer(&events, "unknown", None, Some("x".into()))
                .is_err()
        );
    }

    #[tokio::test]
    async fn a_withdrawn_question_leaves_the_page() {
        let q = Arc::new(Questions::default());
        let events = Arc::new(Events::default());
        let cancel = CancellationToken::new();
        let waiting = q.ask(&events, "s", "sampling", json!({}), cancel.clone());
        let id = events.since(0, Duration::ZERO).await["events"][0]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        cancel.cancel();
        assert_eq!(
            waiting.await.unwrap_err(),
            "the server withdrew the request"
        );
        let got = events.since(1, Duration::ZERO).await;
        assert_eq!(got["events"][0]["kind"], "answered");
        assert_eq!(got["events"][0]["id"], id.as_str());
        // Too late to answer now.
        assert!(q.answer(&events, &id, None, Some("x".into())).is_err());
    }

    #[test]
    fn roots_must_be_file_uris() {
        let q = Questions::default();
        assert!(
            q.set_roots(json!([{"uri": "file:///tmp", "name": "tmp"}]))
                .is_ok()
        );
        assert_eq!(q.roots().len(), 1);
        assert!(q.set_roots(json!([{"uri": "https://x"}])).is_err());
        assert!(q.set_roots(json!({"uri": "file:///"})).is_err());
        assert_eq!(q.roots()[0].uri, "file:///tmp");
    }
}
