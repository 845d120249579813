//! A legacy Streamable HTTP session's standalone stream is open before the connection is used:
//! a server that asks its questions there (and drops them while the stream is not open) gets
//! its answer even when the stream opens late.

use std::time::Duration;

use rho_mcp::ClientOptions;
use serde_json::json;

use crate::askers::*;
use crate::peers::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_on_a_standalone_stream_that_opens_late_is_answered() {
    // The server holds the stream's GET back until a call arrives (or a second passes), so
    // without the wait the question is always lost and the call waits out its budget.
    let (mut spec, _peer) = standalone_stream_server().await;
    spec.call_timeout = Duration::from_secs(5);
    let options = ClientOptions {
        elicitation: true,
        ..ClientOptions::default()
    };
    let connection = connect(&spec, &options).await;
    assert!(connection.is_legacy());
    let asker = TestAsker::new(|_| accept(&[("name", "Ada")]));
    let result = call(&connection, "ask", json!({}), Some(asker.clone())).await;
    assert_eq!(text_of(&result), r#"accept {"name":"Ada"}"#, "{result}");
    assert_eq!(asker.forms().len(), 1);
    connection.close().await;
}
