//! The soft-requirement lifecycle of one agent run, as a pure state machine.
//!
//! The agent loop asks [`SoftGate::begin_turn`] once per logical turn (it returns the reminder
//! messages to inject), sends [`SoftGate::tool_choice`] with the request, and hands the names
//! of the model's tool calls to [`SoftGate::after_response`], which says whether to run them or
//! to skip them all and force the required tool for exactly one call.
//!
//! An addition to the seed's rules: a gate may name companion tools ([`SoftGate::allowing`],
//! [`SoftGate::set_allowed`]; the agent names [`CHECK_TOOL_NAME`] only while it offers the check
//! tool, so a `check` call without one is a decline like any other detour). A turn that calls
//! only companions, or companions and the required tool, is not a decline: testing a preview is
//! part of resolving it. So that a model cannot loop on companions alone, the fourth
//! companion-only turn in a row on one requirement id counts as a decline.

use serde_json::{Value, json};

use crate::{Error, ReminderMessage, ToolChoice, ToolChoiceDirective};

/// How many declines on one requirement id are forced before the run ends with the cap error.
pub const MAX_SOFT_ESCALATIONS: u32 = 3;

/// The tool that runs the project's configured check against a pending preview; a companion
/// of `resolve` (see [`SoftGate::allowing`]).
pub const CHECK_TOOL_NAME: &str = "check";

/// How many companion-only turns in a row one requirement id allows before such a turn counts
/// as a decline.
pub const MAX_COMPANION_TURNS: u32 = 3;

/// The result of a call skipped because a preview is pending.
pub fn skipped_call_text(tool: &str) -> String {
    format!(
        "Tool call was not executed because the assistant ended its turn: Not executed: call the `{tool}` tool to resolve the pending action before using other tools."
    )
}

/// The details of a skipped call's result: it was not executed, and the result
/// is synthetic.
pub fn skipped_call_details() -> Value {
    json!({"__synthetic": true, "source": "assistant_stop_skipped", "executed": false})
}

/// What to do with the tool calls of a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnVerdict {
    /// Run the calls (there may be none).
    Execute,
    /// Run none of them: each gets `skipped_text` as an error result, and the next call is
    /// forced.
    SkipAll {
        /// The text of every skipped call's result.
        skipped_text: String,
    },
}

/// Whether a static tool choice keeps the gate from applying to `tool`.
fn static_choice_blocks(choice: Option<&ToolChoice>, tool: &str) -> bool {
    match choice {
        Some(ToolChoice::None) => true,
        Some(ToolChoice::Tool(name)) => name != tool,
        Some(ToolChoice::Auto | ToolChoice::Any | ToolChoice::Required) | None => false,
    }
}

/// Run-local soft-requirement state: reset it (make a new one) for every run.
#[derive(Debug, Default, Clone)]
pub struct SoftGate {
    requirement_id: Option<String>,
    escalations: u32,
    forced: Option<ToolChoice>,
    host_choice: Option<ToolChoice>,
    required_tool: Option<String>,
    /// Tools a turn may call beside (or instead of) the required one without declining.
    companions: Vec<String>,
    /// Companion-only turns in a row on the current requirement id.
    companion_turns: u32,
}

impl SoftGate {
    /// Fresh state for a new run.
    pub fn new() -> Self {
        Self::default()
    }

    /// This gate accepting calls of `tool` while a requirement is active: a turn calling only
    /// companions and the required tool is compliant, and up to [`MAX_COMPANION_TURNS`]
    /// companion-only turns in a row on one requirement id are too. By default there are none.
    #[must_use]
    pub fn allowing(mut self, tool: impl Into<String>) -> Self {
        self.companions.push(tool.into());
        self
    }

    /// Accept calls of `tool` as a companion (see [`SoftGate::allowing`]) when `allowed`,
    /// otherwise no longer; the counts of the current requirement are kept. For a host whose
    /// offered tools change during a run: name a companion only while it is offered.
    pub fn set_allowed(&mut self, tool: &str, allowed: bool) {
        let known = self.companions.iter().any(|companion| companion == tool);
        if allowed && !known {
            self.companions.push(tool.to_owned());
        } else if !allowed && known {
            self.companions.retain(|companion| companion != tool);
        }
    }

    /// Accept calls of exactly `tools` as companions (see [`SoftGate::allowing`]), no longer
    /// any other; the counts of the current requirement are kept. For a host whose offered
    /// tools change during a run: name the companions it offers now.
    pub fn set_companions(&mut self, tools: impl IntoIterator<Item = String>) {
        self.companions = tools.into_iter().collect();
    }

    /// Take the turn's directive; returns the reminder messages to inject before the call
    /// (non-empty only when a soft requirement with a new id appears).
    pub fn begin_turn(&mut self, directive: Option<ToolChoiceDirective>) -> Vec<ReminderMessage> {
        match directive {
            Some(ToolChoiceDirective::Soft(requirement)) => {
                self.host_choice = None;
                self.required_tool = Some(requirement.tool_name);
                if self.requirement_id.as_deref() == Some(requirement.id.as_str()) {
                    return Vec::new();
                }
                self.requirement_id = Some(requirement.id);
                self.escalations = 0;
                self.companion_turns = 0;
                requirement.reminder
            }
            Some(ToolChoiceDirective::Hard(choice)) => {
                self.reset_requirement();
                self.host_choice = Some(choice);
                Vec::new()
            }
            None => {
                self.reset_requirement();
                self.host_choice = None;
                Vec::new()
            }
        }
    }

    fn reset_requirement(&mut self) {
        self.requirement_id = None;
        self.escalations = 0;
        self.companion_turns = 0;
        self.required_tool = None;
    }

    /// The tool choice to send: host hard choice, else the one-turn escalation, else the static
    /// choice.
    pub fn tool_choice(&self, static_choice: Option<&ToolChoice>) -> Option<ToolChoice> {
        self.host_choice
            .clone()
            .or_else(|| self.forced.clone())
            .or_else(|| static_choice.cloned())
    }

    /// The tool the current turn must call, if a soft requirement is active.
    pub fn required_tool(&self) -> Option<&str> {
        self.required_tool.as_deref()
    }

    /// How many times the current requirement has been declined.
    pub fn escalations(&self) -> u32 {
        self.escalations
    }

    /// Judge a response by the names of its tool calls; ends the one-turn escalation.
    ///
    /// A turn with a requirement that does anything but call only the required tool and its
    /// companions (other tools, a mix, bare text) is a decline: nothing runs and the next call
    /// is forced; so is a companion-only turn past [`MAX_COMPANION_TURNS`] in a row. The fourth
    /// decline on one id is [`Error::EscalationCap`].
    pub fn after_response(
        &mut self,
        static_choice: Option<&ToolChoice>,
        calls: &[&str],
    ) -> Result<TurnVerdict, Error> {
        self.forced = None;
        let Some(tool) = self.required_tool.clone() else {
            return Ok(TurnVerdict::Execute);
        };
        let is_companion = |name: &str| self.companions.iter().any(|companion| companion == name);
        let compliant =
            !calls.is_empty() && calls.iter().all(|name| *name == tool || is_companion(name));
        let companions_only = compliant && calls.iter().all(|name| is_companion(name));
        if companions_only {
            self.companion_turns += 1;
        } else if compliant {
            self.companion_turns = 0;
        }
        let companions_exhausted = companions_only && self.companion_turns > MAX_COMPANION_TURNS;
        if (compliant && !companions_exhausted) || static_choice_blocks(static_choice, &tool) {
            return Ok(TurnVerdict::Execute);
        }
        if self.escalations >= MAX_SOFT_ESCALATIONS {
            return Err(Error::EscalationCap {
                tool,
                cap: MAX_SOFT_ESCALATIONS,
            });
        }
        self.escalations += 1;
        self.forced = Some(ToolChoice::Tool(tool.clone()));
        Ok(TurnVerdict::SkipAll {
            skipped_text: skipped_call_text(&tool),
        })
    }
}
