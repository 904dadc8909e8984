//! Exists for `fuzz/` (the cargo-fuzz crate outside the workspace), behind the `fuzzing` feature:
//! entry points into the private conversions, so the fuzz targets reach them without making them
//! API. Not for other callers.

use asp_wire::proto::Decision;
use serde_json::Value;
use tower_lsp_server::ls_types::Diagnostic;

use crate::answer::{Answer, Checked};
use crate::documents::{Encoding, Text};
use crate::frames::{self, Frame};
use crate::to_lsp::{self, Render};

/// What a client is shown for the document at `path` holding `text`.
pub struct Shown {
    /// The findings, for a client that negotiated UTF-16 positions (the default).
    pub utf16: Vec<Value>,
    /// The same findings for a client that negotiated UTF-8.
    pub utf8: Vec<Value>,
    /// The incomplete-coverage notice, when coverage is incomplete.
    pub notice: Option<Value>,
    /// The `window/showMessage` text and the outage key of incomplete coverage.
    pub messages: [String; 2],
}

/// The host's `result` (a decision's JSON text) converted as the server converts it for the
/// document at `path` holding `text`; `None` when the server would refuse it as malformed.
pub fn decision_to_diagnostics(result: &str, path: &str, text: &str) -> Option<Shown> {
    let answer: Answer = serde_json::from_str(result).ok()?;
    Some(shown(&answer.at(path).ok()?, path, text))
}

/// [`decision_to_diagnostics`] from a decision decoded whole (as typed findings): the server
/// shows the same.
pub fn typed_decision_to_diagnostics(decision: &Decision, path: &str, text: &str) -> Shown {
    shown(&Checked::new(decision.clone(), path), path, text)
}

fn shown(checked: &Checked, path: &str, text: &str) -> Shown {
    let text = Text::new(text.to_owned());
    let decision = &checked.decision;
    let shown = |encoding| {
        let render = Render {
            path,
            text: &text,
            encoding,
            code_description: true,
        };
        to_lsp::findings(decision, render)
            .iter()
            .map(json)
            .collect()
    };
    Shown {
        utf16: shown(Encoding::Utf16),
        utf8: shown(Encoding::Utf8),
        notice: to_lsp::incomplete_notice(checked).as_ref().map(json),
        messages: [
            to_lsp::incomplete_message(decision),
            to_lsp::incomplete_key(decision),
        ],
    }
}

fn json(diagnostic: &Diagnostic) -> Value {
    serde_json::to_value(diagnostic).expect("a diagnostic serialises")
}

/// The frames the incoming-frame checker hands tower-lsp for the client bytes `input`: each
/// body, or why a frame of its output could not be read back. Needs a tokio runtime.
pub async fn checked_frames(input: Vec<u8>) -> Vec<Result<Vec<u8>, &'static str>> {
    use tokio::io::AsyncReadExt;
    let (mut stream, task) = frames::checked(std::io::Cursor::new(input));
    let mut output = Vec::new();
    stream
        .read_to_end(&mut output)
        .await
        .expect("in-memory reads cannot fail");
    if let Err(error) = task.await
        && error.is_panic()
    {
        std::panic::resume_unwind(error.into_panic());
    }
    frames::Frames::default()
        .push(&output)
        .into_iter()
        .map(|frame| match frame {
            Frame::Body(body) => Ok(body),
            Frame::Skipped(why) => Err(why),
        })
        .collect()
}

/// Whether tower-lsp decodes `body` as a message.
pub fn decodes(body: &[u8]) -> bool {
    serde_json::from_slice::<frames::Message>(body).is_ok()
}
