//! RecordBatch v2 (magic 2): records, headers, control records, CRC-32C and compression.
