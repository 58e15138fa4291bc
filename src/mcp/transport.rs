//! The stdio transport of `git task mcp`: JSON-RPC messages, one per line, read with a bound
//! and checked before rmcp sees them.
//!
//! rmcp's own line codec drops a line it cannot decode (the client waits for an answer that
//! never comes) and reads a line of any length into memory. Here every line is at most
//! [`MAX_LINE`] bytes (the rest of a longer one is read and thrown away as it comes), and a
//! line that is no JSON-RPC message gets a JSON-RPC error answer, never silence: not JSON
//! `-32700` (parse error), JSON that is no request, notification or response `-32600`
//! (invalid request), with the request's `id` when it has a usable one, else `null`. A
//! notification this version does not know is ignored, as JSON-RPC asks (nobody waits for it).
//!
//! Answers and rmcp's own messages share stdout through one lock, a whole line at a time.

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

/// The longest request line read (MCP messages are a few kilobytes; a tool's arguments are
/// globs, ids and messages).
pub const MAX_LINE: usize = 4 << 20;

/// JSON-RPC's "parse error": the line is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "invalid request": JSON, but no request, notification or response.
const INVALID_REQUEST: i64 = -32600;

/// A line read from the client.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// The client closed its end.
    End,
    /// One line (without its newline), at most [`MAX_LINE`] bytes.
    Text(Vec<u8>),
    /// A line longer than [`MAX_LINE`], thrown away; `len` bytes were read.
    TooLong { len: usize },
}

/// The transport: requests read on a task of their own ([`Reader`]), answers written to
/// `output` a whole line at a time.
///
/// rmcp drops a pending `receive` whenever something else is ready first; a read in the
/// middle of a line would lose that line. The reader task is never dropped, so `receive`
/// only takes what it has read from a channel (which loses nothing when dropped).
pub struct Guarded<W> {
    messages: tokio::sync::mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    output: Arc<Mutex<W>>,
}

impl<W> Guarded<W>
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading requests from `input` and writing answers to `output`; must be
    /// called inside the runtime (it spawns the reader).
    pub fn new<R>(input: R, output: W) -> Self
    where
        R: AsyncBufRead + Unpin + Send + 'static,
    {
        let output = Arc::new(Mutex::new(output));
        let (tx, messages) = tokio::sync::mpsc::channel(16);
        let reader = Reader {
            input,
            output: output.clone(),
        };
        tokio::spawn(reader.run(tx));
        Guarded { messages, output }
    }
}

/// Reads the client's lines, hands the messages on and answers the bad ones itself.
struct Reader<R, W> {
    input: R,
    output: Arc<Mutex<W>>,
}

impl<R, W> Reader<R, W>
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    async fn run(mut self, tx: tokio::sync::mpsc::Sender<RxJsonRpcMessage<RoleServer>>) {
        loop {
            let answer = match self.read_line().await {
                Err(_) | Ok(Line::End) => return,
                Ok(Line::TooLong { len }) => error(
                    Value::Null,
                    INVALID_REQUEST,
                    format!(
                        "invalid request: a message of {len} bytes or more is larger than the {} MiB this server reads",
                        MAX_LINE >> 20
                    ),
                ),
                Ok(Line::Text(line)) => match classify(&line) {
                    Ok(Some(message)) => {
                        if tx.send(message).await.is_err() {
                            return;
                        }
                        continue;
                    }
                    Ok(None) => continue,
                    Err(answer) => answer,
                },
            };
            if write_line(&self.output, answer.to_string().into_bytes())
                .await
                .is_err()
            {
                return;
            }
        }
    }

    /// Reads one line, keeping at most [`MAX_LINE`] bytes of it in memory.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        let mut line = Vec::new();
        let mut len = 0usize;
        loop {
            let buf = self.input.fill_buf().await?;
            if buf.is_empty() {
                return Ok(match len {
                    0 => Line::End,
                    n if n > MAX_LINE => Line::TooLong { len: n },
                    _ => Line::Text(line),
                });
            }
            let (take, done) = match buf.iter().position(|b| *b == b'\n') {
                Some(i) => (i, true),
                None => (buf.len(), false),
            };
            if len + take <= MAX_LINE {
                line.extend_from_slice(&buf[..take]);
            } else if !line.is_empty() {
                line = Vec::new();
            }
            len += take;
            self.input.consume(take + usize::from(done));
            if done {
                return Ok(if len > MAX_LINE {
                    Line::TooLong { len }
                } else {
                    Line::Text(line)
                });
            }
        }
    }
}

async fn write_line<W: AsyncWrite + Unpin>(
    output: &Mutex<W>,
    mut text: Vec<u8>,
) -> std::io::Result<()> {
    text.push(b'\n');
    let mut out = output.lock().await;
    out.write_all(&text).await?;
    out.flush().await
}

/// A JSON-RPC error answer.
fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// What to do with one line: hand a message to rmcp, answer with an error, or ignore it.
fn classify(line: &[u8]) -> Result<Option<RxJsonRpcMessage<RoleServer>>, Value> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        error(
            Value::Null,
            PARSE_ERROR,
            format!("parse error: the line is not JSON ({e})"),
        )
    })?;
    let Some(object) = value.as_object() else {
        return Err(error(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: a message is one JSON object (batches are not supported)".into(),
        ));
    };
    let id = match object.get("id") {
        Some(id @ Value::String(_)) => id.clone(),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Value::Number(n.clone()),
        _ => Value::Null,
    };
    let notification =
        !object.contains_key("id") && object.get("method").is_some_and(Value::is_string);
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
        Ok(message) => Ok(Some(message)),
        // Nobody waits for an answer to a notification: one this version cannot read is
        // ignored, as rmcp itself does.
        Err(_) if notification => Ok(None),
        Err(e) => Err(error(
            id,
            INVALID_REQUEST,
            format!("invalid request: not a JSON-RPC 2.0 request, notification or response ({e})"),
        )),
    }
}

impl<W> Transport<RoleServer> for Guarded<W>
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let output = self.output.clone();
        async move {
            let text = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            write_line(&output, text).await
        }
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.messages.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.messages.close();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(line: &str) -> Option<i64> {
        match classify(line.as_bytes()) {
            Err(answer) => answer["error"]["code"].as_i64(),
            Ok(_) => None,
        }
    }

    #[test]
    fn bad_lines_get_json_rpc_errors() {
        assert_eq!(code("this is not json"), Some(PARSE_ERROR));
        assert_eq!(code("{\"jsonrpc\":\"2.0\",\"id\":1"), Some(PARSE_ERROR));
        assert_eq!(code("[1,2]"), Some(INVALID_REQUEST));
        assert_eq!(
            code("{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":7}"),
            Some(INVALID_REQUEST)
        );
        let Err(answer) = classify(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":7}") else {
            panic!("accepted")
        };
        assert_eq!(answer["id"], 9);
        // A good request passes; an unknown notification and a blank line are ignored.
        assert!(matches!(
            classify(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\r"),
            Ok(Some(_))
        ));
        assert!(matches!(
            classify(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":7}"),
            Ok(None)
        ));
        assert!(matches!(classify(b"  "), Ok(None)));
    }

    #[test]
    fn lines_are_read_with_a_bound() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let big = vec![b'x'; MAX_LINE + 10];
        let mut input = big.clone();
        input.extend_from_slice(b"\nshort\nlast");
        let mut t = Reader {
            input: std::io::Cursor::new(input),
            output: Arc::new(Mutex::new(Vec::new())),
        };
        runtime.block_on(async {
            assert_eq!(
                t.read_line().await.unwrap(),
                Line::TooLong { len: big.len() }
            );
            assert_eq!(t.read_line().await.unwrap(), Line::Text(b"short".to_vec()));
            assert_eq!(t.read_line().await.unwrap(), Line::Text(b"last".to_vec()));
            assert_eq!(t.read_line().await.unwrap(), Line::End);
        });
    }
}
