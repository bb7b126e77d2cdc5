//! The write side of a connection: frames reach the socket whole and in the
//! order they were submitted.
//!
//! A frame's way to the socket:
//! 1. the task that submits it writes it at once while the socket takes it
//!    (one `write` system call, no task woken);
//! 2. what the socket does not take at once (the rest of a frame, the frames
//!    submitted meanwhile, a TLS flush) goes to the connection's writer
//!    task, which waits until the socket is writable and writes it;
//! 3. when nothing is left, the writer task hands the socket back to the
//!    submitters.
//!
//! ```text
//!            submit: written whole              writer task: queue empty
//!          +------------------------+         +------------------------+
//!          v                        |         v                        |
//!   +-------------+  submit: socket full  +-----------+                |
//!   |    Idle     | --------------------> |  Handed   | ---------------+
//!   | (submitter  |   (rest queued,       | (writer   |   (submit: queued
//!   |  writes)    |    writer woken)      |  task     |    behind the rest)
//!   +-------------+                       |  writes)  |
//!          |                              +-----------+
//!          |  write error / connection closed    |
//!          +-----------------> Closed <----------+
//! ```

use bytes::{Buf, BytesMut};
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, oneshot};

/// One request frame, and who waits for it to be written (requests without
/// a response).
#[derive(Debug)]
pub(super) struct WriteItem {
    pub(super) frame: BytesMut,
    pub(super) written: Option<oneshot::Sender<()>>,
}

/// Why a frame was not taken.
#[derive(Debug)]
pub(super) enum SubmitError {
    /// The connection is closed (by an earlier error or by the client).
    Closed,
    /// Writing to the socket failed: the connection must be closed.
    Io(std::io::Error),
}

/// Who writes to the socket now.
enum Holder<W> {
    /// Nobody: the next submitter writes (the queue is empty).
    Idle(W),
    /// The writer task: submitters queue behind what it has to write. The
    /// socket stays here until the task takes it.
    Handed(Option<W>),
    /// Closed: the socket's write half is dropped.
    Closed,
}

struct State<W> {
    holder: Holder<W>,
    queue: VecDeque<WriteItem>,
}

/// The socket's write half, shared by the submitters and the writer task.
pub(super) struct FrameWriter<W> {
    state: Mutex<State<W>>,
    wake: Notify,
}

impl<W> std::fmt::Debug for FrameWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameWriter").finish_non_exhaustive()
    }
}

/// The submitting side, without the socket's type.
pub(super) trait SubmitFrame: Send + Sync + std::fmt::Debug {
    /// Writes `item` now as far as the socket takes it and queues the rest
    /// for the writer task; `Ok` once the frame is written or queued in
    /// order.
    fn submit(&self, item: WriteItem) -> Result<(), SubmitError>;
    /// Drops the socket's write half and fails every later submit.
    fn close(&self);
}

impl<W: AsyncWrite + Unpin + Send + 'static> FrameWriter<W> {
    pub(super) fn new(wr: W) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                holder: Holder::Idle(wr),
                queue: VecDeque::new(),
            }),
            wake: Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State<W>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The writer task: writes what submitters could not, until the
    /// connection closes. A write error is returned (the caller closes the
    /// connection); `Ok` when closed.
    pub(super) async fn run(self: Arc<Self>) -> std::io::Result<()> {
        const COALESCE: usize = 1 << 20;
        let mut acks = Vec::new();
        let mut out = BytesMut::new();
        loop {
            self.wake.notified().await;
            let mut wr = {
                let mut st = self.lock();
                match &mut st.holder {
                    Holder::Closed => return Ok(()),
                    Holder::Idle(_) => continue,
                    Holder::Handed(wr) => match wr.take() {
                        Some(wr) => wr,
                        None => continue,
                    },
                }
            };
            loop {
                {
                    let mut st = self.lock();
                    if matches!(st.holder, Holder::Closed) {
                        return Ok(());
                    }
                    if st.queue.is_empty() {
                        st.holder = Holder::Idle(wr);
                        break;
                    }
                    while out.len() < COALESCE {
                        let Some(item) = st.queue.pop_front() else {
                            break;
                        };
                        if out.is_empty() {
                            out = item.frame;
                        } else {
                            out.extend_from_slice(&item.frame);
                        }
                        acks.extend(item.written);
                    }
                }
                // An empty `out` still flushes (TLS records buffered by a
                // submitter's write).
                wr.write_all(&out).await?;
                wr.flush().await?;
                out.clear();
                for a in acks.drain(..) {
                    let _ = a.send(());
                }
            }
        }
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> SubmitFrame for FrameWriter<W> {
    fn submit(&self, mut item: WriteItem) -> Result<(), SubmitError> {
        let mut st = self.lock();
        // Closed until it is put back: an error below leaves it so, and
        // drops the socket's write half.
        let mut wr = match std::mem::replace(&mut st.holder, Holder::Closed) {
            Holder::Closed => return Err(SubmitError::Closed),
            Holder::Handed(wr) => {
                st.holder = Holder::Handed(wr);
                st.queue.push_back(item);
                return Ok(());
            }
            Holder::Idle(wr) => wr,
        };
        // Write without waiting: a socket that would block registers a
        // waker that wakes nobody, and the writer task (which polls with its
        // own) takes over.
        let mut cx = Context::from_waker(Waker::noop());
        let mut done = 0;
        let mut blocked = false;
        while done < item.frame.len() {
            match Pin::new(&mut wr).poll_write(&mut cx, &item.frame[done..]) {
                Poll::Ready(Ok(0)) => {
                    return Err(SubmitError::Io(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(n)) => done += n,
                Poll::Ready(Err(e)) => return Err(SubmitError::Io(e)),
                Poll::Pending => {
                    blocked = true;
                    break;
                }
            }
        }
        if !blocked {
            match Pin::new(&mut wr).poll_flush(&mut cx) {
                Poll::Ready(Ok(())) => {
                    st.holder = Holder::Idle(wr);
                    drop(st);
                    if let Some(a) = item.written {
                        let _ = a.send(());
                    }
                    return Ok(());
                }
                Poll::Ready(Err(e)) => return Err(SubmitError::Io(e)),
                Poll::Pending => {}
            }
        }
        item.frame.advance(done);
        st.holder = Holder::Handed(Some(wr));
        st.queue.push_back(item);
        drop(st);
        self.wake.notify_one();
        Ok(())
    }

    fn close(&self) {
        let holder = std::mem::replace(&mut self.lock().holder, Holder::Closed);
        drop(holder);
        self.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    //! Invariant: every submitted frame reaches the peer whole, in submit
    //! order, whether the submitter or the writer task wrote it; a frame
    //! that waits for its write is acknowledged only once it is written.
    use super::*;
    use tokio::io::AsyncReadExt;

    fn item(frame: &[u8]) -> WriteItem {
        WriteItem {
            frame: BytesMut::from(frame),
            written: None,
        }
    }

    /// The frames `0..n`, each `len` bytes of its own index.
    fn frames(n: u8, len: usize) -> Vec<Vec<u8>> {
        (0..n).map(|i| vec![i; len]).collect()
    }

    /// A running writer task: its result once the writer closes or a write
    /// fails.
    type WriterTask = tokio::task::JoinHandle<std::io::Result<()>>;

    /// A writer onto a pipe with `room` bytes of buffer, its writer task
    /// running; returns the writer, the pipe's reading end and the task.
    fn running_writer(
        room: usize,
    ) -> (
        Arc<FrameWriter<tokio::io::DuplexStream>>,
        tokio::io::DuplexStream,
        WriterTask,
    ) {
        let (wr, rd) = tokio::io::duplex(room);
        let writer = FrameWriter::new(wr);
        let task = tokio::spawn(writer.clone().run());
        (writer, rd, task)
    }

    /// The next `n` bytes the peer receives from the pipe.
    async fn read(rd: &mut tokio::io::DuplexStream, n: usize) -> Vec<u8> {
        let mut got = vec![0u8; n];
        rd.read_exact(&mut got).await.unwrap();
        got
    }

    /// Closes `writer`; its task ends without an error.
    async fn stop(writer: &FrameWriter<tokio::io::DuplexStream>, task: WriterTask) {
        writer.close();
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_socket_with_room_takes_the_frame_from_the_submitter() {
        let (wr, mut rd) = tokio::io::duplex(1024);
        let writer = FrameWriter::new(wr);
        writer.submit(item(b"hello")).unwrap();
        // No writer task runs: the submitter wrote it.
        assert!(matches!(writer.lock().holder, Holder::Idle(_)));
        let mut got = [0u8; 5];
        tokio::time::timeout(std::time::Duration::from_secs(5), rd.read_exact(&mut got))
            .await
            .expect("written by the submitter")
            .unwrap();
        assert_eq!(&got, b"hello");
    }

    #[tokio::test]
    async fn a_full_socket_hands_the_rest_to_the_writer_task_in_order() {
        // 64 bytes of room, 20 frames of 50: most wait for the writer task.
        let (writer, mut rd, task) = running_writer(64);
        let sent = frames(20, 50);
        for f in &sent {
            writer.submit(item(f)).unwrap();
        }
        assert!(matches!(writer.lock().holder, Holder::Handed(_)));
        assert_eq!(read(&mut rd, 20 * 50).await, sent.concat());
        stop(&writer, task).await;
    }

    #[tokio::test]
    async fn the_writer_task_hands_the_socket_back_when_done() {
        let (writer, mut rd, task) = running_writer(16);
        writer.submit(item(&[7; 40])).unwrap();
        assert_eq!(read(&mut rd, 40).await, [7; 40]);
        // Once the queue is empty the submitters write again.
        tokio::time::timeout(std::time::Duration::from_secs(5), async {
            while !matches!(writer.lock().holder, Holder::Idle(_)) {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the writer task hands the socket back");
        writer.submit(item(b"next")).unwrap();
        assert_eq!(read(&mut rd, 4).await, b"next");
        stop(&writer, task).await;
    }

    #[tokio::test]
    async fn a_queued_frame_is_acknowledged_only_once_written() {
        let (writer, mut rd, task) = running_writer(8);
        let (tx, mut rx) = oneshot::channel();
        writer
            .submit(WriteItem {
                frame: BytesMut::from(&[1u8; 32][..]),
                written: Some(tx),
            })
            .unwrap();
        // 8 bytes fit; the rest waits for the reader.
        tokio::task::yield_now().await;
        assert!(rx.try_recv().is_err(), "acknowledged before it was written");
        read(&mut rd, 32).await;
        rx.await.expect("acknowledged once written");
        stop(&writer, task).await;
    }

    #[tokio::test]
    async fn a_closed_writer_refuses_frames() {
        let (wr, _rd) = tokio::io::duplex(64);
        let writer = FrameWriter::new(wr);
        writer.close();
        assert!(matches!(
            writer.submit(item(b"late")),
            Err(SubmitError::Closed)
        ));
    }

    #[tokio::test]
    async fn a_write_to_a_gone_peer_is_an_io_error_and_closes() {
        let (wr, rd) = tokio::io::duplex(64);
        drop(rd);
        let writer = FrameWriter::new(wr);
        assert!(matches!(writer.submit(item(b"x")), Err(SubmitError::Io(_))));
        assert!(matches!(
            writer.submit(item(b"y")),
            Err(SubmitError::Closed)
        ));
    }

    #[tokio::test]
    async fn the_writer_task_reports_a_write_error() {
        let (writer, mut rd, task) = running_writer(8);
        writer.submit(item(&[3; 64])).unwrap();
        read(&mut rd, 8).await;
        drop(rd);
        assert!(task.await.unwrap().is_err());
    }
}
