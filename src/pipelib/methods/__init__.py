"""Methods: pre-training, FedMD rounds, the centralized baseline and the distillation stage."""
