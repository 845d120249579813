//! Test askers: the person a session would put questions in front of.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rho_component::{AskFuture, Asker, Form, QuestionAnswer, SamplingAnswer, SamplingRequest};

/// Answers forms with `form`, sampling with a fixed reply, and records what it was asked.
pub(crate) struct TestAsker {
    pub(crate) form: Box<dyn Fn(&Form) -> QuestionAnswer + Send + Sync>,
    pub(crate) forms: Mutex<Vec<(String, Form)>>,
    pub(crate) samples: Mutex<Vec<(String, SamplingRequest)>>,
}

impl TestAsker {
    pub(crate) fn new(form: impl Fn(&Form) -> QuestionAnswer + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self {
            form: Box::new(form),
            forms: Mutex::default(),
            samples: Mutex::default(),
        })
    }

    pub(crate) fn forms(&self) -> Vec<(String, Form)> {
        self.forms.lock().unwrap().clone()
    }
}

impl Asker for TestAsker {
    // Both answer at once, and record what they were asked when asked: before the returned
    // future is polled, so a question whose future is dropped unpolled is recorded too.
    fn ask_form<'a>(&'a self, server: &'a str, form: Form) -> AskFuture<'a, QuestionAnswer> {
        let answer = (self.form)(&form);
        self.forms.lock().unwrap().push((server.to_owned(), form));
        Box::pin(std::future::ready(answer))
    }

    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: SamplingRequest,
    ) -> AskFuture<'a, SamplingAnswer> {
        self.samples
            .lock()
            .unwrap()
            .push((server.to_owned(), request));
        Box::pin(std::future::ready(SamplingAnswer::Reply {
            model: "test-model".into(),
            text: "a fixed reply".into(),
            stop_reason: "endTurn".into(),
        }))
    }
}

pub(crate) fn accept(pairs: &[(&str, &str)]) -> QuestionAnswer {
    QuestionAnswer::Accept(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    )
}

/// Takes `delay` to accept a form (`None`: never answers).
pub(crate) struct SlowAsker {
    pub(crate) delay: Option<Duration>,
}

impl Asker for SlowAsker {
    fn ask_form<'a>(&'a self, _server: &'a str, _form: Form) -> AskFuture<'a, QuestionAnswer> {
        Box::pin(async move {
            match self.delay {
                Some(delay) => tokio::time::sleep(delay).await,
                None => std::future::pending().await,
            }
            accept(&[("name", "Slow Ada")])
        })
    }

    fn sample<'a>(
        &'a self,
        _server: &'a str,
        _request: SamplingRequest,
    ) -> AskFuture<'a, SamplingAnswer> {
        Box::pin(async { SamplingAnswer::Refused("not here".into()) })
    }
}
