//! Two-phase-commit sink layer for kafka-eos. Built in a later issue.
