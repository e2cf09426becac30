//! Typed requests for the server features beyond tools: resources, prompts, completion,
//! logging and roots notifications.

use std::collections::{BTreeMap, HashSet};

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::Client;
use crate::{
    Error, Result,
    protocol::{
        CompleteResult, CompletionReference, GetPromptResult, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, LoggingLevel, Prompt, ReadResourceResult,
        Resource, ResourceTemplate, methods,
    },
    session::RequestOptions,
};

impl Client {
    /// One page of a list method, its entries of `list` decoded one by one: one that does not
    /// parse is left out and recorded (see [`Client::skipped_entries`]); a first page (no
    /// cursor) starts the list's record afresh.
    pub(super) async fn list_page<P: DeserializeOwned, I: DeserializeOwned>(
        &self,
        method: &str,
        list: &'static str,
        cursor: Option<&str>,
    ) -> Result<P> {
        let params = cursor.map(|c| json!({ "cursor": c }));
        let value = self
            .request(method, params, RequestOptions::default())
            .await?;
        let decoded = super::lenient::decode_page::<P, I>(method, list, value)?;
        let mut record = self.inner.entry_issues.lock();
        let (skipped, repaired) = record.entry(list).or_default();
        if cursor.is_none() {
            skipped.clear();
            repaired.clear();
        }
        skipped.extend(decoded.skipped);
        repaired.extend(decoded.repaired);
        Ok(decoded.page)
    }

    /// The entries the last listing of each list left out because they do not parse (see
    /// `client::lenient`), in list order.
    pub fn skipped_entries(&self) -> Vec<super::EntryIssue> {
        self.entry_issues(|(skipped, _)| skipped)
    }

    /// The entries the last listing of each list kept after repairing a slip (a tool schema
    /// spelled `input_schema`).
    pub fn repaired_entries(&self) -> Vec<super::EntryIssue> {
        self.entry_issues(|(_, repaired)| repaired)
    }

    fn entry_issues(
        &self,
        pick: impl Fn(&super::ListIssues) -> &Vec<super::EntryIssue>,
    ) -> Vec<super::EntryIssue> {
        let record = self.inner.entry_issues.lock();
        ["tools", "resources", "resourceTemplates", "prompts"]
            .iter()
            .filter_map(|list| record.get(list))
            .flat_map(|issues| pick(issues).iter().cloned())
            .collect()
    }

    /// Follows `nextCursor` through every page of a list method, refusing a cursor loop.
    async fn list_all<P: DeserializeOwned, I: DeserializeOwned>(
        &self,
        method: &str,
        list: &'static str,
        mut take: impl FnMut(P) -> (Option<String>, usize),
    ) -> Result<()> {
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        loop {
            let page: P = self
                .list_page::<P, I>(method, list, cursor.as_deref())
                .await?;
            match take(page).0 {
                None => return Ok(()),
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(Error::Protocol(format!(
                            "{method} returned cursor `{next}` twice"
                        )));
                    }
                    cursor = Some(next);
                }
            }
        }
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult> {
        self.list_page::<_, Resource>(methods::RESOURCES_LIST, "resources", cursor)
            .await
    }

    /// Every resource.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>> {
        let mut out = Vec::new();
        self.list_all::<_, Resource>(
            methods::RESOURCES_LIST,
            "resources",
            |p: ListResourcesResult| {
                out.extend(p.resources);
                (p.next_cursor, out.len())
            },
        )
        .await?;
        Ok(out)
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult> {
        self.list_page::<_, ResourceTemplate>(
            methods::RESOURCES_TEMPLATES_LIST,
            "resourceTemplates",
            cursor,
        )
        .await
    }

    /// Every resource template.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        let mut out = Vec::new();
        self.list_all::<_, ResourceTemplate>(
            methods::RESOURCES_TEMPLATES_LIST,
            "resourceTemplates",
            |p: ListResourceTemplatesResult| {
                out.extend(p.resource_templates);
                (p.next_cursor, out.len())
            },
        )
        .await?;
        Ok(out)
    }

    /// Reads a resource. A missing one is [`Error::Rpc`] with code -32002 (handshake era) or
    /// -32602 (2026-07-28).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult> {
        self.request_typed(
            methods::RESOURCES_READ,
            Some(json!({ "uri": uri })),
            RequestOptions::default(),
        )
        .await
    }

    /// Subscribes to updates of a resource (handshake era; in 2026-07-28 use
    /// [`Client::listen`]).
    pub async fn subscribe_resource(&self, uri: &str) -> Result<()> {
        self.handshake_only(methods::RESOURCES_SUBSCRIBE, "use Client::listen")?;
        self.request(
            methods::RESOURCES_SUBSCRIBE,
            Some(json!({ "uri": uri })),
            RequestOptions::default(),
        )
        .await?;
        Ok(())
    }

    /// Ends a subscription (handshake era).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<()> {
        self.handshake_only(methods::RESOURCES_UNSUBSCRIBE, "drop the Subscription")?;
        self.request(
            methods::RESOURCES_UNSUBSCRIBE,
            Some(json!({ "uri": uri })),
            RequestOptions::default(),
        )
        .await?;
        Ok(())
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Result<ListPromptsResult> {
        self.list_page::<_, Prompt>(methods::PROMPTS_LIST, "prompts", cursor)
            .await
    }

    /// Every prompt.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>> {
        let mut out = Vec::new();
        self.list_all::<_, Prompt>(methods::PROMPTS_LIST, "prompts", |p: ListPromptsResult| {
            out.extend(p.prompts);
            (p.next_cursor, out.len())
        })
        .await?;
        Ok(out)
    }

    /// Renders a prompt.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult> {
        let params = json!({ "name": name, "arguments": arguments });
        self.request_typed(
            methods::PROMPTS_GET,
            Some(params),
            RequestOptions::default(),
        )
        .await
    }

    /// Asks for completions of one argument; `context` holds arguments already chosen.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Result<CompleteResult> {
        let mut params =
            json!({ "ref": reference, "argument": { "name": argument, "value": value } });
        if !context.is_empty() {
            params["context"] = json!({ "arguments": context });
        }
        self.request_typed(
            methods::COMPLETION_COMPLETE,
            Some(params),
            RequestOptions::default(),
        )
        .await
    }

    /// Sets the server's log level for this session (handshake era; a stateless client sets
    /// it per request with [`super::ClientOptions::log_level`]).
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<()> {
        self.handshake_only(methods::LOGGING_SET_LEVEL, "set ClientOptions::log_level")?;
        self.request(
            methods::LOGGING_SET_LEVEL,
            Some(json!({ "level": level })),
            RequestOptions::default(),
        )
        .await?;
        Ok(())
    }

    /// Tells the server the roots changed (handshake era; 2026-07-28 removed it).
    pub async fn notify_roots_changed(&self) -> Result<()> {
        if self.protocol_version().is_stateless() {
            return Ok(());
        }
        self.notify(methods::ROOTS_LIST_CHANGED, None).await
    }

    /// Refuses, locally, a method the stateless revision removed.
    fn handshake_only(&self, method: &str, instead: &str) -> Result<()> {
        if self.protocol_version().is_stateless() {
            return Err(Error::InvalidArgument(format!(
                "{method} does not exist in protocol version {}; {instead}",
                self.protocol_version()
            )));
        }
        Ok(())
    }

    /// Calls a method and decodes its result.
    pub(crate) async fn request_typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<T> {
        let value = self.request(method, params, options).await?;
        serde_json::from_value(value)
            .map_err(|e| Error::Protocol(format!("invalid `{method}` result: {e}")))
    }
}
