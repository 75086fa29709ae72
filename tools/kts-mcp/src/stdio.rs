//! The stdio transport: one JSON-RPC message per line. A line that is no
//! message is answered with its JSON-RPC error and logged (see
//! [`jsonrpc::check`]), a line over [`MAX_MESSAGE_BYTES`] too, and a last
//! message without its newline is read at the end of the input. A batch
//! is taken from a client that negotiated protocol 2025-03-26 (see
//! [`Batches`]), refused from the others.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{JsonRpcMessage, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::batch::Batches;
use crate::jsonrpc::{self, BATCH_VERSION, Checked, KEPT_OF_OVERSIZED, MAX_MESSAGE_BYTES, Refusal};
use crate::server::State;

pub struct StdioTransport<R, W> {
    input: BufReader<R>,
    /// The line read so far. `receive` may be dropped mid-line (rmcp polls
    /// it beside the responses to send): the next call goes on with it.
    line: Vec<u8>,
    /// The line is longer than taken: its start is kept, the rest skipped.
    oversized: bool,
    output: Arc<Mutex<W>>,
    state: Arc<State>,
    /// The protocol version the handshake agreed on.
    version: Option<String>,
    batches: Batches,
}

/// What reading the input gave.
enum Read {
    Line(Vec<u8>),
    Oversized(Vec<u8>),
    End,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> StdioTransport<R, W> {
    pub fn new(input: R, output: W, state: Arc<State>) -> Self {
        StdioTransport {
            input: BufReader::new(input),
            line: Vec::new(),
            oversized: false,
            output: Arc::new(Mutex::new(output)),
            state,
            version: None,
            batches: Batches::default(),
        }
    }

    /// The next line (without its newline), as far as the end of the input.
    async fn read_line(&mut self) -> std::io::Result<Read> {
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                let last = std::mem::take(&mut self.line);
                return Ok(match std::mem::take(&mut self.oversized) {
                    true => Read::Oversized(last),
                    false if last.is_empty() => Read::End,
                    false => Read::Line(last),
                });
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let part = &available[..newline.unwrap_or(available.len())];
            let room = match self.oversized {
                true => KEPT_OF_OVERSIZED,
                false => MAX_MESSAGE_BYTES,
            };
            let taken = part.len().min(room.saturating_sub(self.line.len()));
            self.line.extend_from_slice(&part[..taken]);
            if taken < part.len() {
                self.oversized = true;
                self.line.truncate(KEPT_OF_OVERSIZED);
            }
            let consumed = newline.map_or(available.len(), |at| at + 1);
            self.input.consume(consumed);
            if newline.is_some() {
                let line = std::mem::take(&mut self.line);
                return Ok(match std::mem::take(&mut self.oversized) {
                    true => Read::Oversized(line),
                    false => Read::Line(line),
                });
            }
        }
    }

    /// Answers a line that is no message, on a task of its own: `receive`
    /// may be dropped at any await, and half an answer must not be.
    fn refuse(&self, refusal: Refusal)
    where
        W: Send + 'static,
    {
        self.state.log(&format!("message refused: {refusal}"));
        self.write_soon(refusal.response());
    }

    /// Writes `message` on a task of its own (see [`Self::refuse`]).
    fn write_soon(&self, message: serde_json::Value)
    where
        W: Send + 'static,
    {
        let output = Arc::clone(&self.output);
        tokio::spawn(async move {
            let _ = write_line(&output, &message).await;
        });
    }
}

async fn write_line<W: AsyncWrite + Unpin>(
    output: &Mutex<W>,
    message: &impl serde::Serialize,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    let mut output = output.lock().await;
    output.write_all(&line).await?;
    output.flush().await
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Response(response) = &item
            && let ServerResult::InitializeResult(initialized) = &response.result
        {
            self.version = Some(initialized.protocol_version.to_string());
        }
        let output = Arc::clone(&self.output);
        let line = self.batches.answer(&item);
        async move {
            match line {
                Some(line) => write_line(&output, &line).await,
                None => Ok(()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(message) = self.batches.unread.pop_front() {
                return Some(message);
            }
            let line = match self.read_line().await {
                Ok(Read::Line(line)) => line,
                Ok(Read::Oversized(start)) => {
                    self.refuse(Refusal::oversized(&start));
                    continue;
                }
                Ok(Read::End) => return None,
                Err(e) => {
                    self.state.log(&format!("cannot read stdin: {e}"));
                    return None;
                }
            };
            let line = line.strip_suffix(b"\r").unwrap_or(&line);
            if line.trim_ascii().is_empty() {
                continue;
            }
            match jsonrpc::check(line) {
                Checked::Message(message) => return Some(*message),
                Checked::Ignored(why) => self.state.log(&format!("notification ignored: {why}")),
                Checked::Refused(refusal) => self.refuse(refusal),
                Checked::Batch(messages) if self.version.as_deref() == Some(BATCH_VERSION) => {
                    if let Some(answers) = self.batches.start(messages) {
                        self.write_soon(answers);
                    }
                }
                Checked::Batch(_) => self.refuse(jsonrpc::batch_refused(self.version.as_deref())),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.output.lock().await.flush().await
    }
}
