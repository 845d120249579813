//! Where the host waits for a person: the pending approval request and the open questions of
//! servers. The session's approver and each call's asker open a slot here before the request
//! is shown (so an answer can never arrive before rho is ready for it); the front-end's answer
//! fills it. When nobody can answer any more (input closed) every slot is answered at once:
//! approvals denied, questions declined, so nothing hangs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rho_component::{AskFuture, RiskLevel};
use tokio::sync::oneshot;

use super::operation::{HostError, HostEvent};
use super::outbox::Outbox;
use crate::session::{
    ApprovalDecision, ApprovalFuture, Approver, QuestionAnswer, QuestionDesk, QuestionRequest,
    SessionEvent,
};

#[derive(Default)]
struct Slots {
    /// Input is closed: nobody can answer.
    closed: bool,
    approval: Option<oneshot::Sender<ApprovalDecision>>,
    questions: HashMap<u64, oneshot::Sender<QuestionAnswer>>,
    next_question: u64,
}

/// The pending approval and the open questions of one host.
pub(crate) struct Desk {
    outbox: Arc<Outbox>,
    /// Whether questions reach a person at all (`--accept-questions` in RPC mode); without,
    /// every question is declined and servers are not told rho can ask.
    accepts_questions: bool,
    slots: Mutex<Slots>,
}

impl Desk {
    pub(crate) fn new(outbox: Arc<Outbox>, accepts_questions: bool) -> Arc<Self> {
        Arc::new(Self {
            outbox,
            accepts_questions,
            slots: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether questions reach a person.
    pub(crate) fn accepts_questions(&self) -> bool {
        self.accepts_questions
    }

    /// Fills the pending approval slot.
    pub(crate) fn answer_approval(&self, decision: ApprovalDecision) -> Result<(), HostError> {
        let Some(slot) = self.lock().approval.take() else {
            return Err(HostError::invalid_request("no approval is pending"));
        };
        let _ = slot.send(decision);
        Ok(())
    }

    /// Fills question `id`'s slot.
    pub(crate) fn answer_question(&self, id: u64, answer: QuestionAnswer) -> Result<(), HostError> {
        let Some(slot) = self.lock().questions.remove(&id) else {
            return Err(HostError::invalid_request(format!(
                "no question {id} is pending"
            )));
        };
        let _ = slot.send(answer);
        Ok(())
    }

    /// Declines every open question (the turn was aborted: nobody waits for the answers).
    pub(crate) fn decline_all(&self) {
        for (_, slot) in self.lock().questions.drain() {
            let _ = slot.send(QuestionAnswer::Decline);
        }
    }

    /// Nobody can answer from now on: the pending approval is denied, every question declined,
    /// and later ones are answered the same way at once.
    pub(crate) fn close(&self) {
        let mut slots = self.lock();
        slots.closed = true;
        if let Some(slot) = slots.approval.take() {
            let _ = slot.send(ApprovalDecision::Deny);
        }
        for (_, slot) in slots.questions.drain() {
            let _ = slot.send(QuestionAnswer::Decline);
        }
    }
}

/// The session's approver: waits for the front-end's answer through the desk.
pub(crate) struct DeskApprover(pub(crate) Arc<Desk>);

impl Approver for DeskApprover {
    fn decide<'a>(&'a self, _: &'a str, _: &'a str, _: RiskLevel) -> ApprovalFuture<'a> {
        // The slot opens now, before the session shows the request.
        let receiver = {
            let mut slots = self.0.lock();
            if slots.closed {
                None
            } else {
                let (tx, rx) = oneshot::channel();
                slots.approval = Some(tx);
                Some(rx)
            }
        };
        Box::pin(async move {
            // The slot closes however the wait ends (answered, or dropped by an abort or a
            // withdrawn request), so a late answer is told that no approval is pending.
            let _close = CloseApproval(&self.0);
            match receiver {
                Some(rx) => rx.await.unwrap_or(ApprovalDecision::Deny),
                None => ApprovalDecision::Deny,
            }
        })
    }
}

/// Closes the approval slot when the approver stops waiting.
struct CloseApproval<'a>(&'a Desk);

impl Drop for CloseApproval<'_> {
    fn drop(&mut self) {
        self.0.lock().approval = None;
    }
}

/// Withdraws a question whose asker stopped waiting (the call ended or ran out of time).
struct Withdraw<'a> {
    desk: &'a Desk,
    id: u64,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        self.desk.lock().questions.remove(&self.id);
    }
}

impl QuestionDesk for Desk {
    fn ask(&self, mut question: QuestionRequest) -> AskFuture<'_, QuestionAnswer> {
        Box::pin(async move {
            let receiver = {
                let mut slots = self.lock();
                if slots.closed || !self.accepts_questions {
                    return QuestionAnswer::Decline;
                }
                slots.next_question += 1;
                question.id = slots.next_question;
                let (tx, rx) = oneshot::channel();
                slots.questions.insert(question.id, tx);
                rx
            };
            let _withdraw = Withdraw {
                desk: self,
                id: question.id,
            };
            self.outbox
                .deliver(HostEvent::Session(SessionEvent::Question(question)))
                .await;
            receiver.await.unwrap_or(QuestionAnswer::Decline)
        })
    }
}
