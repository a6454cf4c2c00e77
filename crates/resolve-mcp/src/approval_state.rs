//! The `requestState` of an approval asked through an input-required result (protocol
//! 2026-07-28): sealed with HMAC-SHA256 under a per-process random key (rmcp's
//! [`RequestStateCodec`]), bound to what the person was shown, short-lived, and accepted once.
//!
//! The client echoes the state back, so it is treated as attacker-controlled: a state this
//! process did not seal fails the HMAC check; one sealed for another preview or call (another
//! pending id, other base hashes, another preview text, another connection, other arguments)
//! carries another binding;
//! one past its expiry (the server's `--approve-timeout`; none when it waits forever) is
//! refused by the codec; and each state names a nonce this server issued and forgets at the
//! first answer, whatever the answer was.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use resolve_edit::ApproveTimeout;
use rmcp::model::{RequestStateCodec, SealOptions};

/// A time to answer for the tests here.
#[cfg(test)]
const APPROVAL_TTL: Duration = Duration::from_secs(300);

/// Why an echoed `requestState` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StateRefused {
    /// Not sealed by this process with its key (forged, tampered with, or from another run).
    NotIssued,
    /// Its expiry passed.
    Expired,
    /// Already answered once.
    Used,
    /// Sealed for another preview than the one pending now.
    OtherPreview,
    /// This process has no key (the system's random source failed), so it issues no state.
    NoKey,
}

/// The approval states this connection issued and not yet consumed.
#[derive(Debug)]
pub(crate) struct ApprovalStates {
    /// How long a state lives; `None`: until it is answered.
    ttl: Option<Duration>,
    /// Nonce → when it expires (`None`: never).
    issued: Mutex<HashMap<String, Option<Instant>>>,
}

impl ApprovalStates {
    /// States that expire `ttl` after they are issued.
    #[cfg(test)]
    pub(crate) fn new(ttl: Duration) -> Self {
        Self::within(ApproveTimeout::after(ttl))
    }

    /// States that expire when `timeout` passes after they are issued (never, when it is
    /// forever).
    pub(crate) fn within(timeout: ApproveTimeout) -> Self {
        Self {
            ttl: timeout.limit(),
            issued: Mutex::new(HashMap::new()),
        }
    }

    /// A fresh state for the approval of the preview whose binding is `binding` (see
    /// [`crate::approval::Subject::binding`]); `None` when this process has no key.
    pub(crate) fn issue(&self, binding: &str) -> Option<String> {
        let codec = codec()?;
        let nonce = random_hex(16)?;
        let now = Instant::now();
        let mut issued = lock(&self.issued);
        issued.retain(|_, expires| expires.is_none_or(|expires| expires > now));
        issued.insert(nonce.clone(), self.ttl.and_then(|ttl| now.checked_add(ttl)));
        let payload = format!("{nonce}\n{binding}");
        let options = match self.ttl {
            Some(ttl) => SealOptions::new().ttl(ttl),
            None => SealOptions::new(),
        };
        Some(codec.seal_with(payload.as_bytes(), &options))
    }

    /// Accept `state` for the preview whose binding is `binding`, using it up: an authentic
    /// state is consumed before its binding is compared, so no second answer can follow.
    pub(crate) fn redeem(&self, state: &str, binding: &str) -> Result<(), StateRefused> {
        let codec = codec().ok_or(StateRefused::NoKey)?;
        let payload = codec.open(state).map_err(|error| match error {
            rmcp::model::RequestStateError::Expired => StateRefused::Expired,
            _ => StateRefused::NotIssued,
        })?;
        let payload = String::from_utf8(payload).map_err(|_| StateRefused::NotIssued)?;
        let (nonce, sealed_binding) = payload.split_once('\n').ok_or(StateRefused::NotIssued)?;
        let expires = lock(&self.issued).remove(nonce).ok_or(StateRefused::Used)?;
        if expires.is_some_and(|expires| expires <= Instant::now()) {
            return Err(StateRefused::Expired);
        }
        if sealed_binding != binding {
            return Err(StateRefused::OtherPreview);
        }
        Ok(())
    }
}

/// The process's codec, keyed once with 32 random bytes; `None` when no random bytes could be
/// had (then no state is ever issued, and `ask` fails closed on 2026-07-28).
fn codec() -> Option<&'static RequestStateCodec> {
    static CODEC: OnceLock<Option<RequestStateCodec>> = OnceLock::new();
    CODEC
        .get_or_init(|| {
            let mut key = [0_u8; 32];
            match getrandom::fill(&mut key) {
                Ok(()) => RequestStateCodec::try_new(key.to_vec()).ok(),
                Err(error) => {
                    tracing::error!(%error, "no random key for approval states");
                    None
                }
            }
        })
        .as_ref()
}

fn random_hex(bytes: usize) -> Option<String> {
    let mut buffer = vec![0_u8; bytes];
    getrandom::fill(&mut buffer).ok()?;
    Some(buffer.iter().map(|byte| format!("{byte:02x}")).collect())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_state_is_accepted_once_for_its_own_binding() {
        let states = ApprovalStates::new(APPROVAL_TTL);
        let state = states.issue("binding-a").unwrap();
        assert_eq!(states.redeem(&state, "binding-a"), Ok(()));
        assert_eq!(states.redeem(&state, "binding-a"), Err(StateRefused::Used));
    }

    #[test]
    fn a_state_for_another_preview_is_refused_and_used_up() {
        let states = ApprovalStates::new(APPROVAL_TTL);
        let state = states.issue("binding-a").unwrap();
        assert_eq!(
            states.redeem(&state, "binding-b"),
            Err(StateRefused::OtherPreview)
        );
        assert_eq!(states.redeem(&state, "binding-a"), Err(StateRefused::Used));
    }

    #[test]
    fn forged_tampered_and_foreign_states_are_refused() {
        let states = ApprovalStates::new(APPROVAL_TTL);
        let state = states.issue("binding-a").unwrap();
        let mut tampered = state.clone().into_bytes();
        let last = tampered.len() - 1;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert_eq!(
            states.redeem(&tampered, "binding-a"),
            Err(StateRefused::NotIssued)
        );
        assert_eq!(
            states.redeem("rs1.not-a-state", "binding-a"),
            Err(StateRefused::NotIssued)
        );
        let other_key = RequestStateCodec::try_new(vec![7_u8; 32]).unwrap();
        let foreign = other_key.seal(b"nonce\nbinding-a");
        assert_eq!(
            states.redeem(&foreign, "binding-a"),
            Err(StateRefused::NotIssued)
        );
        // Another connection's states are not this one's, even under the same key.
        let other = ApprovalStates::new(APPROVAL_TTL);
        assert_eq!(other.redeem(&state, "binding-a"), Err(StateRefused::Used));
    }

    #[test]
    fn an_expired_state_is_refused() {
        let states = ApprovalStates::new(Duration::from_millis(1));
        let state = states.issue("binding-a").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            states.redeem(&state, "binding-a"),
            Err(StateRefused::Expired)
        );
    }
}
