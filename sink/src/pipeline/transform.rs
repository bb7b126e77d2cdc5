//! What a [`ConsumeTransformProduce`](super::ConsumeTransformProduce)
//! pipeline does with each input record: the [`RecordTransform`] trait, and
//! its adapter for plain closures.

use kafka_consumer::ConsumerRecord;
use kafka_producer::ProducerRecord;
use std::convert::Infallible;
use std::future::Future;

/// Turns one input record into the records written for it, asynchronously
/// and fallibly: a transform may decode with a schema registry, look
/// something up, and encode again.
///
/// A synchronous closure `FnMut(&ConsumerRecord) -> Vec<ProducerRecord>`
/// is a transform that never fails (what
/// [`ConsumeTransformProduce::connect`](super::ConsumeTransformProduce::connect)
/// takes); any other goes to
/// [`ConsumeTransformProduce::connect_with`](super::ConsumeTransformProduce::connect_with). An error stops the pipeline with
/// [`PipelineError::Transform`](super::PipelineError::Transform): the open
/// transaction is aborted, so none of its output is visible to
/// read_committed readers and no input offset past the failing record is
/// committed; the next run reads that record again.
///
/// ```
/// use kafka_consumer::ConsumerRecord;
/// use kafka_producer::ProducerRecord;
/// use kafka_sink::pipeline::RecordTransform;
///
/// /// Upper-cases UTF-8 values; a value that is not UTF-8 stops the pipeline.
/// struct Upper;
///
/// impl RecordTransform for Upper {
///     type Error = std::str::Utf8Error;
///     async fn transform(&mut self, r: &ConsumerRecord) -> Result<Vec<ProducerRecord>, Self::Error> {
///         let text = std::str::from_utf8(r.value.as_deref().unwrap_or_default())?;
///         Ok(vec![ProducerRecord::new("upper").value(text.to_uppercase())])
///     }
/// }
/// ```
pub trait RecordTransform {
    /// Why a record could not be transformed.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The output records of one input record (none to drop it). Nothing
    /// is written until the whole list is returned: a failure leaves no
    /// part of this record's output in the transaction.
    fn transform(
        &mut self,
        record: &ConsumerRecord,
    ) -> impl Future<Output = Result<Vec<ProducerRecord>, Self::Error>> + Send;
}

impl<F> RecordTransform for F
where
    F: FnMut(&ConsumerRecord) -> Vec<ProducerRecord> + Send,
{
    type Error = Infallible;

    fn transform(
        &mut self,
        record: &ConsumerRecord,
    ) -> impl Future<Output = Result<Vec<ProducerRecord>, Infallible>> + Send {
        std::future::ready(Ok(self(record)))
    }
}
