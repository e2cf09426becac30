//! JSON Schema handling: validation of tool arguments and structured output, and translation
//! of MCP tools into every major LLM API's function-calling format and back.
//!
//! Schemas come from peers (a client validating a server's `outputSchema`, a host translating
//! a server's tools) as well as from our own users, so everything here is bounded: nesting and
//! size are capped before any work, `$ref` never reaches the network or the file system, and
//! patterns run on a linear-time regex engine.
//!
//! | file | does |
//! |---|---|
//! | `depth` | the nesting cap on a value handed over already parsed |
//! | `validate` | compiles and applies a schema |
//! | `flat` | the fast path for flat object schemas (most tools' inputs and wrapped outputs) |
//! | `normalize` | one 2020-12 shape out of the dialects servers emit; the hostile-input checks |
//! | `strict` / `nulls` | OpenAI strict mode, and the nulls it introduces stripped again |
//! | `names` | provider-safe, namespaced names with a reverse map |
//! | `translate` | the provider-independent entry points |
//! | `openai`, `responses`, `anthropic`, `gemini`, `langchain` | one provider each, both ways |
//! | `prompt` | models without function calling: tools as system-prompt text, calls read from the reply |

pub mod anthropic;
mod depth;
mod flat;
pub mod gemini;
pub mod langchain;
pub mod names;
pub mod normalize;
pub mod notes;
pub mod nulls;
pub mod openai;
pub mod prompt;
pub mod responses;
mod results;
pub mod strict;
pub mod translate;
mod validate;
mod walk;

pub use depth::{MAX_VALUE_DEPTH, check_depth};
pub use names::{NameMap, NameRules, Namespace, ToolRef, UnknownNamespace};
pub use normalize::{MAX_SCHEMA_BYTES, MAX_TRANSLATE_DEPTH, normalize};
pub use notes::Note;
pub use nulls::strip_nulls;
pub use prompt::{FormatError, FormatErrorKind, Parsed, PromptCall, PromptFormat};
pub use strict::{StrictSchema, to_strict};
pub use translate::{
    Provider, ServerTools, ToolCall, ToolOutcome, ToolReport, TranslateOptions, TranslatedTool,
    Translation, assistant_messages, assistant_text, prompt_text, result_messages, tool_calls,
    translate, translate_tool, translate_value,
};
pub use validate::{MAX_SCHEMA_DEPTH, SchemaValidator};
