//! A [`GroupConsumer`] as a [`futures_core::Stream`] of its events.

use super::consumer::{ConsumerEvent, GroupConsumer, GroupError};
use std::time::Duration;

type PollFuture = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = (GroupConsumer, Result<ConsumerEvent, GroupError>)> + Send,
    >,
>;

/// [`GroupConsumer`] as a [`futures_core::Stream`] of events
/// ([`GroupConsumer::into_stream`]). Backpressure is the stream's own: the
/// consumer polls Kafka only when the next item is asked for, so a slow
/// reader of the stream holds at most one poll's records. Between items the
/// consumer is available ([`Self::consumer`]) to commit — a
/// [`ConsumerEvent::Revoked`] is confirmed when the next item is asked for,
/// as with [`GroupConsumer::poll`]. Timeouts without records yield nothing.
pub struct EventStream {
    consumer: Option<GroupConsumer>,
    pending: Option<PollFuture>,
    poll_timeout: Duration,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("polling", &self.pending.is_some())
            .field("poll_timeout", &self.poll_timeout)
            .finish()
    }
}

impl EventStream {
    /// The consumer between two items (`None` while a poll is running).
    pub fn consumer(&self) -> Option<&GroupConsumer> {
        self.consumer.as_ref()
    }

    /// Takes the consumer back (e.g. to close it) between two items.
    pub fn into_consumer(self) -> Option<GroupConsumer> {
        self.consumer
    }
}

impl futures_core::Stream for EventStream {
    type Item = Result<ConsumerEvent, GroupError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        loop {
            if let Some(fut) = self.pending.as_mut() {
                let (consumer, result) = match fut.as_mut().poll(cx) {
                    Poll::Ready(r) => r,
                    Poll::Pending => return Poll::Pending,
                };
                self.pending = None;
                self.consumer = Some(consumer);
                match result {
                    Ok(ConsumerEvent::Records(r)) if r.is_empty() => continue,
                    Err(GroupError::Closed) => return Poll::Ready(None),
                    other => return Poll::Ready(Some(other)),
                }
            }
            let Some(mut consumer) = self.consumer.take() else {
                return Poll::Ready(None);
            };
            let timeout = self.poll_timeout;
            self.pending = Some(Box::pin(async move {
                let r = consumer.poll(timeout).await;
                (consumer, r)
            }));
        }
    }
}

impl GroupConsumer {
    /// This consumer as a [`futures_core::Stream`] of events (see
    /// [`EventStream`]); each poll waits up to `poll_timeout`.
    ///
    /// ```no_run
    /// # async fn demo(consumer: kafka_consumer::GroupConsumer) -> Result<(), kafka_consumer::GroupError> {
    /// use kafka_consumer::ConsumerEvent;
    /// use std::future::poll_fn;
    /// use std::pin::Pin;
    /// let mut events = consumer.into_stream(std::time::Duration::from_millis(500));
    /// while let Some(event) = poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut events), cx)).await {
    ///     if let ConsumerEvent::Records(records) = event? {
    ///         println!("{} records", records.len());
    ///         events.consumer().expect("between items").commit_positions().await?;
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn into_stream(self, poll_timeout: Duration) -> EventStream {
        EventStream {
            consumer: Some(self),
            pending: None,
            poll_timeout,
        }
    }
}
