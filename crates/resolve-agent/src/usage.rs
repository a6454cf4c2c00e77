//! Token usage: what one model call cost as the server reported it ([`CallUsage`]), and what a
//! run cost in total and in the calls that forced `resolve` ([`Usage`]).
//!
//! Owned here: the neutral usage shapes, their sums and the one-line summary `resolve agent`
//! prints. Not owned: reading usage off the wire (`provider`) or deciding which calls are forced
//! (the turn loop).

use serde::Serialize;

/// What one model call cost, in the server's own counts, made provider-neutral.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CallUsage {
    /// Every input token of the call, cached or not (OpenAI `prompt_tokens`; Anthropic
    /// `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`).
    pub input_tokens: u64,
    /// Of the input tokens, those read from the server's prompt cache (OpenAI
    /// `prompt_tokens_details.cached_tokens`; Anthropic `cache_read_input_tokens`).
    pub cached_input_tokens: u64,
    /// Of the input tokens not read from the cache, those written to it (Anthropic
    /// `cache_creation_input_tokens`; OpenAI reports none).
    pub cache_write_input_tokens: u64,
    /// Output tokens, thinking included (OpenAI `completion_tokens`; Anthropic `output_tokens`).
    pub output_tokens: u64,
}

/// The summed usage of some model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TokenUsage {
    /// How many model calls were made.
    pub model_calls: u32,
    /// Of those calls, how many got a response without usage figures (their tokens are not in
    /// the sums; a server that does not report usage leaves every sum at 0).
    pub calls_without_usage: u32,
    /// Input tokens, cached or not (see [`CallUsage::input_tokens`]).
    pub input_tokens: u64,
    /// Of the input tokens, those read from the prompt cache.
    pub cached_input_tokens: u64,
    /// Of the input tokens not read from the cache, those written to it (Anthropic).
    pub cache_write_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

impl TokenUsage {
    /// Input tokens not read from the cache.
    pub fn uncached_input_tokens(&self) -> u64 {
        self.input_tokens.saturating_sub(self.cached_input_tokens)
    }

    fn add(&mut self, call: Option<&CallUsage>) {
        match call {
            Some(call) => {
                self.input_tokens = self.input_tokens.saturating_add(call.input_tokens);
                self.cached_input_tokens = self
                    .cached_input_tokens
                    .saturating_add(call.cached_input_tokens);
                self.cache_write_input_tokens = self
                    .cache_write_input_tokens
                    .saturating_add(call.cache_write_input_tokens);
                self.output_tokens = self.output_tokens.saturating_add(call.output_tokens);
            }
            None => self.calls_without_usage += 1,
        }
    }

    /// `N input tokens (U uncached, C cached[, W written to the cache]), O output tokens`.
    fn describe_tokens(&self) -> String {
        let writes = if self.cache_write_input_tokens > 0 {
            format!(", {} written to the cache", self.cache_write_input_tokens)
        } else {
            String::new()
        };
        format!(
            "{} input tokens ({} uncached, {} cached{writes}), {} output tokens",
            self.input_tokens,
            self.uncached_input_tokens(),
            self.cached_input_tokens,
            self.output_tokens
        )
    }
}

/// What a run cost: every model call, and separately the calls that forced `resolve` (what the
/// soft requirement cost).
///
/// In `--json` this is the `usage` event:
/// `{"type":"usage","model_calls":…,"calls_without_usage":…,"input_tokens":…,"cached_input_tokens":…,"cache_write_input_tokens":…,"output_tokens":…,"forced":{…the same keys…}}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Every model call of the run, forced ones included.
    #[serde(flatten)]
    pub total: TokenUsage,
    /// The model calls whose tool choice forced `resolve` (the loop's escalation after a
    /// declined preview), whatever form the server could accept on the wire; included in
    /// [`Usage::total`] too.
    pub forced: TokenUsage,
}

impl Usage {
    /// Count one model call that got a response (`call` is `None` when the response carried
    /// no usage figures).
    pub(crate) fn record(&mut self, forced: bool, call: Option<&CallUsage>) {
        self.total.model_calls += 1;
        self.total.add(call);
        if forced {
            self.forced.model_calls += 1;
            self.forced.add(call);
        }
    }

    /// Count one model call that failed before a response arrived (no tokens known).
    pub(crate) fn record_failed(&mut self, forced: bool) {
        self.total.model_calls += 1;
        if forced {
            self.forced.model_calls += 1;
        }
    }

    /// The one-line summary `resolve agent` prints last on stderr, e.g.
    /// `usage: 5 model calls (2 forced), 900 input tokens (300 uncached, 600 cached), 40 output tokens; forced calls: 400 input tokens (100 uncached, 300 cached), 10 output tokens`.
    pub fn summary_line(&self) -> String {
        let calls = if self.total.model_calls == 1 {
            "1 model call".to_owned()
        } else {
            format!("{} model calls", self.total.model_calls)
        };
        let mut line = format!(
            "usage: {calls} ({} forced), {}",
            self.forced.model_calls,
            self.total.describe_tokens()
        );
        if self.forced.model_calls > 0 {
            line.push_str("; forced calls: ");
            line.push_str(&self.forced.describe_tokens());
        }
        if self.total.calls_without_usage > 0 {
            line.push_str(&format!(
                "; the server reported no usage for {} of them",
                self.total.calls_without_usage
            ));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn forced_calls_count_in_the_total_and_apart() {
        let mut usage = Usage::default();
        let call = CallUsage {
            input_tokens: 100,
            cached_input_tokens: 60,
            cache_write_input_tokens: 0,
            output_tokens: 5,
        };
        usage.record(false, Some(&call));
        usage.record(true, Some(&call));
        usage.record(true, None);
        assert_eq!(usage.total.model_calls, 3);
        assert_eq!(usage.total.input_tokens, 200);
        assert_eq!(usage.total.calls_without_usage, 1);
        assert_eq!(usage.forced.model_calls, 2);
        assert_eq!(usage.forced.output_tokens, 5);
        assert_eq!(
            usage.summary_line(),
            "usage: 3 model calls (2 forced), 200 input tokens (80 uncached, 120 cached), 10 output tokens; \
             forced calls: 100 input tokens (40 uncached, 60 cached), 5 output tokens; \
             the server reported no usage for 1 of them"
        );
        let value = serde_json::to_value(usage).unwrap();
        assert_eq!(value["model_calls"], json!(3));
        assert_eq!(value["forced"]["cached_input_tokens"], json!(60));
    }
}
