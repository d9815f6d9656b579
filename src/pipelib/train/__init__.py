"""Training: the one loop (``loop``), resumable checkpoints, the supervised helper, FedMD's CNNs."""
