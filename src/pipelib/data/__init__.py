"""Data: ingest raw datasets, partition them into public / test / per-party sets, load image tables."""
