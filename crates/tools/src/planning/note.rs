//! `note`: a scratch note kept for the rest of the session (decisions, findings,
//! things to come back to), listed back on every call.

use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;

use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::planning::checklist::validate_content;

pub struct Note;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteInput {
    /// The note; omit to list the notes so far.
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Default)]
pub struct Notes {
    notes: Mutex<Vec<String>>,
}

impl Tool for Note {
    type Input = NoteInput;
    const NAME: &'static str = "note";
    const DOMAIN: Domain = Domain::Planning;
    const RISK: Risk = Risk::Read;
    const CAPABILITIES: Capabilities = Capabilities::NONE;

    fn description(&self) -> String {
        "Keep a short session note (finding, decision, follow-up); without text, list notes.".into()
    }

    async fn run(&self, input: NoteInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let store = ctx.session.state::<Notes>();
        let mut notes = store.notes.lock();
        if let Some(text) = input.text {
            if notes.len() >= 200 {
                return Err(ToolError::model("the session already holds 200 notes"));
            }
            let text = validate_content(&text, "text")?;
            notes.push(text);
        }
        let mut out = format!("{} note(s)", notes.len());
        for (i, n) in notes.iter().enumerate() {
            out.push_str(&format!("\n{}. {}", i + 1, n));
        }
        Ok(ToolOutput::text(out).with_meta("count", notes.len()))
    }
}
