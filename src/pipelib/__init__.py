"""pipelib: private federated knowledge distillation, reproduced from raw data to paper tables.

Subpackages, in the order of the workflow's stage chain:
  data      raw datasets -> Parquet image tables; scenario partitions; image loaders
  privacy   one guarantee record per privatized release; NFDP, Gaussian, Laplace and local mechanisms
  train     the training loop, resumable checkpoints, the supervised helper, FedMD's CNNs
  methods   pre-training, FedMD (round protocol), the centralized baseline, the distillation stage
            (reverse k-NN teachers, mechanisms, aggregation, labels, students)
  report    the result-row schema, paper tables, the privacy ledger, reproduction pages
Modules: vocab (vocabularies), config (schema validation), seeding, io, logs, provenance, represent, cli.
This file imports nothing, so that editing one module re-runs only the rules that use it.
"""

__version__ = "0.3.0"
