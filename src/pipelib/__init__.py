"""pipelib: private federated knowledge distillation, reproduced from raw data to paper tables.

Modules (the stage chain of the workflow, in order):
  ingest     raw dataset files -> Parquet image tables
  partition  public / test / per-party private sets of a scenario
  sampling   per-party NFDP subsamples and their privacy ledger
  privacy    accountants (NFDP Theorems 1-2, ...)
  config     config schema validation
"""

__version__ = "0.1.0"
